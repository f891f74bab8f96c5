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

// lex splits expr into tokens.
func lex(expr string) ([]token, error) {
	// A token per 4 bytes or so (a comparison of a field with a number
	// is 3 tokens in about 15): one allocation for the usual filter.
	toks := make([]token, 0, len(expr)/4+4)
	i := 0
	for i < len(expr) {
		c := expr[i]
		col := i + 1
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '(':
			toks = append(toks, token{tLParen, "(", col})
			i++
		case c == ')':
			toks = append(toks, token{tRParen, ")", col})
			i++
		case isIdentStart(c) || c == '$':
			j := i + 1
			for j < len(expr) && (isIdentChar(expr[j]) || expr[j] == '.' && j+1 < len(expr) && isIdentStart(expr[j+1])) {
				j++
			}
			if c == '$' && (j == i+1 || !strings.Contains(expr[i:j], ".")) {
				return nil, errorf(col, "a context field is written $ctx.name")
			}
			toks = append(toks, token{tIdent, expr[i:j], col})
			i = j
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
			toks = append(toks, token{tNumber, expr[i:j], col})
			i = j
		case c == '"':
			j := i + 1
			for {
				if j >= len(expr) {
					return nil, errorf(col, "unterminated string")
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
			toks = append(toks, token{tString, expr[i : j+1], col})
			i = j + 1
		default:
			op := ""
			for _, o := range operators {
				if strings.HasPrefix(expr[i:], o) {
					op = o
					break
				}
			}
			if op == "" {
				return nil, errorf(col, "unexpected character %q", rune(c))
			}
			toks = append(toks, token{tOp, op, col})
			i += len(op)
		}
	}
	return append(toks, token{tEOF, "", len(expr) + 1}), nil
}

func isDigit(c byte) bool      { return c >= '0' && c <= '9' }
func isIdentStart(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isIdentChar(c byte) bool  { return isIdentStart(c) || isDigit(c) }
func isHex(s string) bool      { return len(s) > 1 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') }
