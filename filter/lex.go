package filter

import (
	"strings"
)

// tokKind classifies tokens.
type tokKind uint8

const (
	tEOF tokKind = iota
	tIdent
	tNumber
	tString
	tOp
	tLParen
	tRParen
)

// token is one lexeme with its 1-based column.
type token struct {
	kind tokKind
	text string // the source text; for tString the literal with its quotes
	col  int
}

// operators, longest first so that "<<" wins over "<".
var operators = []string{
	"<<", ">>", "<=", ">=", "==", "!=", "&&", "||",
	"<", ">", "&", "|", "^", "~", "!", "+", "-", "*", "/", "%",
	// Accepted by LTTng's grammar but not by its bytecode: refused by the
	// parser with a clear message rather than as unknown characters.
	"=",
}

// lexer splits an expression into tokens as the parser asks for them, so
// that an expression refused early is not lexed to its end.
type lexer struct {
	expr string
	i    int
}

// next returns the next token, tEOF at the end.
func (lx *lexer) next() (token, error) {
	expr, i := lx.expr, lx.i
	for i < len(expr) && (expr[i] == ' ' || expr[i] == '\t' || expr[i] == '\n' || expr[i] == '\r') {
		i++
	}
	if i == len(expr) {
		lx.i = i
		return token{tEOF, "", len(expr) + 1}, nil
	}
	c := expr[i]
	col := i + 1
	var t token
	switch {
	case c == '(':
		t, i = token{tLParen, "(", col}, i+1
	case c == ')':
		t, i = token{tRParen, ")", col}, i+1
	case isIdentStart(c) || c == '$':
		j := i + 1
		for j < len(expr) && (isIdentChar(expr[j]) || expr[j] == '.' && j+1 < len(expr) && isIdentStart(expr[j+1])) {
			j++
		}
		if c == '$' && (j == i+1 || !strings.Contains(expr[i:j], ".")) {
			return token{}, errorf(col, "a context field is written $ctx.name")
		}
		t, i = token{tIdent, expr[i:j], col}, j
	case isDigit(c) || c == '.' && i+1 < len(expr) && isDigit(expr[i+1]):
		j := i + 1
		for j < len(expr) {
			d := expr[j]
			if isIdentChar(d) || d == '.' {
				j++
				continue
			}
			// An exponent's sign: 1e-5, but not 0xe-5 (hex).
			if (d == '+' || d == '-') && (expr[j-1] == 'e' || expr[j-1] == 'E') && !isHex(expr[i:j]) {
				j++
				continue
			}
			break
		}
		t, i = token{tNumber, expr[i:j], col}, j
	case c == '"':
		j := i + 1
		for {
			if j >= len(expr) {
				return token{}, errorf(col, "unterminated string")
			}
			if expr[j] == '\\' {
				j += 2
				continue
			}
			if expr[j] == '"' {
				break
			}
			j++
		}
		t, i = token{tString, expr[i : j+1], col}, j+1
	default:
		op := ""
		for _, o := range operators {
			if strings.HasPrefix(expr[i:], o) {
				op = o
				break
			}
		}
		if op == "" {
			return token{}, errorf(col, "unexpected character %q", rune(c))
		}
		t, i = token{tOp, op, col}, i+len(op)
	}
	lx.i = i
	return t, nil
}

func isDigit(c byte) bool      { return c >= '0' && c <= '9' }
func isIdentStart(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isIdentChar(c byte) bool  { return isIdentStart(c) || isDigit(c) }
func isHex(s string) bool      { return len(s) > 1 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') }
