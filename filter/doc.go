// Package filter compiles LTTng filter expressions (the syntax and
// semantics of lttng-enable-event(1), LTTng 2.10 and later) to eBPF, so
// that tracepoint filters run through the same verifier and JIT as any
// other program.
//
// A filter reads fields of a fixed-layout record (Field: a name, a kind,
// a size and an offset) and keeps the event when the expression is not
// zero:
//
//	(status == 42 || status >= 500) && $ctx.procname == "nginx*"
//
// # Language
//
// Operands are fields (identifiers, or context fields written $ctx.name),
// integer literals (decimal, 0x hex, 0 octal), float literals and string
// literals in double quotes. In a string literal a backslash takes the
// next character literally: \\, \" and \* (a star that is not a
// wildcard). An unescaped * matches any run of bytes, anywhere in the
// literal, when the literal is compared with == or !=.
//
// Operators, from the tightest binding to the loosest (LTTng's order, not
// C's: comparisons bind looser than the bitwise operators, so a & 2 == 2
// means (a & 2) == 2): unary ! ~ - +; << >>; &; ^; |; < <= > >=; == !=;
// &&; ||. Binary operators associate to the left.
//
// Integers are 64-bit signed: unsigned fields are zero-extended and then
// compared as signed values. The bitwise operators and shifts apply to
// integers only; shifts are logical, and a shift count outside 0..63
// makes the event not match, whatever the rest of the expression says.
// An integer compared with a float is compared exactly as a number (not
// rounded to a double); binary32 fields widen to binary64. A comparison
// with NaN is false except !=; -0 equals +0. Comparisons, !, && and ||
// give 0 or 1; && and || evaluate their right operand only when needed.
//
// Strings compare with strings only: with a literal, == and != match the
// literal as a pattern, and < <= > >= compare bytes as strcmp does (a
// wildcard there is an error); two fields compare as strcmp for all six
// operators. A field holds at most its Size bytes, up to the first NUL.
//
// Type errors are refused before any code is generated, with an *Error
// naming the column: a string compared with a number, a bitwise operator
// or shift on a float or string, an unknown field, a wildcard with an
// ordering comparison, ! && || - + or a bare string at the top.
//
// # Limits
//
// A filter may come from anyone who can send a request to a traced
// application, and its code is unrolled over string fields: a 51 KB
// expression over a string[1024] once made 4.6 GB of code. Compile
// therefore refuses, before doing the work each bounds, an expression
// over one of its Limits, with an *Error that wraps ErrLimit, names the
// column and the field of Limits that raises it:
//
//	limit            default  checked
//	MaxBytes         65536    before lexing
//	MaxDepth         100      while parsing: parentheses and unary operators
//	                          around an operand (at most 1000)
//	MaxNodes         16384    while parsing: operands and operators
//	                          (at most 262144)
//	MaxGlobStars     32       while decoding a literal: stars in one pattern
//	MaxLiteralBytes  4096     while decoding a literal: bytes after escapes
//	MaxInstructions  32767    after parsing, on an estimate of the code
//	                          (also its ceiling: jumps reach 32767 slots)
//
// The estimate follows the code generator: a comparison of a string with
// a literal costs 3 instructions per byte of the shorter, two string
// fields 5 per byte of the longer, and a pattern a block of about twice
// its piece's length per piece and starting position in the field, so a
// glob costs field size times pattern length. It bounds the code the
// generator emits and is within a few percent of it for filters that
// come near the limit.
//
// LTTng refuses bytecode over 65536 bytes: about 32 KB of
// "a == 1 || ...", 3,300 comparisons and 13,000 nodes, which the
// defaults accept. They refuse what LTTng takes but costs code here: a
// literal over 4096 bytes, nesting over 100, a pattern unrolled over a
// long field past the instruction limit. A refusal costs a small part
// of what compiling costs, and the verifier's work on what is accepted
// grows with the code (BenchmarkRefuse, BenchmarkWorstAccepted). Eval
// applies the same limits but MaxInstructions.
//
// # Where LTTng-UST 2.13 goes wrong
//
// The bytecode interpreter of LTTng-UST 2.13 does not always do what the
// expression means. This package does what it means:
//
//   - It drops a filter whose && or || operand is a bitwise result:
//     x == 1 || (x & 1) never matches. Here it is a number like any
//     other.
//   - It reads a stale value for a float on the left of a comparison
//     whose right side is compound (0.5 > (x | 0)). Here both sides are
//     evaluated.
//   - It truncates float operands of && and || to integers (0.5 && 1 is
//     false). Here a float is true when it is not zero (NaN is true).
//   - It passes the right operand's raw value through && and ||
//     (1 && 2 gives 2). Here they give 0 or 1.
//
// Compared with LTTng 2.13.9 itself on 1,741 random expressions and 87,050
// events (filter/lttng_test.go, UEBPF_LTTNG=1), it also differs here:
//
//   - A float as the whole filter (f, -f) never matches there, and a float
//     literal at the top is refused. Here a float is kept when it is not
//     zero.
//   - It orders string bytes as signed chars ("\x80" < "a"). Here bytes
//     are unsigned, as strcmp compares them.
//   - An integer on the left of a comparison whose right side compares
//     two float literals (b > (0.5 <= 3.999)) is compared with a stale
//     value there.
//   - A * in a string compared with < <= > >= is a prefix wildcard there.
//     Here it is refused: globs are for == and != only.
//   - It refuses an upper-case hex prefix (0X1F), which this package
//     accepts.
//
// # Code
//
// The generated program takes the record in r1 and returns 1 or 0 in r0.
// It calls no helpers and reads only the record's first RecordSize
// bytes. Values live in r2..r5 as a stack machine, spilled to the stack
// when an expression is deeper. Floats are compared in integer code on
// their IEEE bit patterns, and integers with floats by splitting the
// float into its integer part and the sign of its fraction, which is
// exact. String comparisons and patterns are unrolled over the field's
// bytes, so the verifier sees only constant offsets. Code is straight
// where the verifier would otherwise follow many paths: a binary32
// field widens to binary64 without a branch per bit of a subnormal.
//
// Eval walks the syntax tree instead: it is the reference the code is
// tested against, on the interpreter and the JIT.
package filter
