package sqlite

import "strings"

// queryInfo is what a statement's span says of it.
type queryInfo struct {
	op    string // db.operation.name: SELECT, INSERT, UPDATE, DELETE, BEGIN...
	table string // db.collection.name: the table read or written, "" when unsure
	name  string // the span's name: "{op} {table}", or op alone
	text  string // db.query.text: the statement with its placeholders
}

// parseQuery reads the operation and the table of query from its first
// words: SELECT and DELETE name the table after FROM, INSERT and REPLACE
// after INTO, UPDATE right after (past OR ...). A table read through a
// subquery, or a statement of another kind (WITH, PRAGMA, CREATE...),
// leaves the table empty and the span is named by the operation alone.
func parseQuery(query string) queryInfo {
	sc := sqlScanner{s: query}
	q := queryInfo{op: strings.ToUpper(sc.word()), text: query}
	switch q.op {
	case "SELECT", "DELETE":
		q.table = sc.after("FROM")
	case "INSERT", "REPLACE":
		q.table = sc.after("INTO")
	case "UPDATE":
		q.table = sc.word()
		if strings.EqualFold(q.table, "OR") {
			sc.word() // the conflict clause: ROLLBACK, ABORT, REPLACE, FAIL, IGNORE
			q.table = sc.word()
		}
	case "":
		q.op = "sqlite"
	}
	q.name = q.op
	if q.table != "" {
		q.name += " " + q.table
	}
	return q
}

// sqlScanner reads the words of an SQL statement outside parentheses,
// string literals and comments.
type sqlScanner struct {
	s string
	i int
}

// after skips to the word kw and returns the word following it: "" when
// there is none or when a parenthesis (a subquery) comes first.
func (sc *sqlScanner) after(kw string) string {
	for w := sc.word(); w != ""; w = sc.word() {
		if strings.EqualFold(w, kw) {
			rest := strings.TrimLeft(sc.s[sc.i:], " \t\r\n")
			if strings.HasPrefix(rest, "(") {
				return ""
			}
			return sc.word()
		}
	}
	return ""
}

// word returns the next word at depth 0 (a quoted identifier unquoted),
// "" at the end.
func (sc *sqlScanner) word() string {
	depth := 0
	for sc.i < len(sc.s) {
		c, rest := sc.s[sc.i], sc.s[sc.i:]
		switch {
		case strings.HasPrefix(rest, "--"):
			sc.skipPast("\n", 2)
		case strings.HasPrefix(rest, "/*"):
			sc.skipPast("*/", 2)
		case c == '\'':
			sc.skipPast("'", 1) // a '' inside reads as two literals
		case c == '(':
			depth++
			sc.i++
		case c == ')':
			depth = max(0, depth-1)
			sc.i++
		case depth == 0 && (c == '"' || c == '`' || c == '['):
			end := string(c)
			if c == '[' {
				end = "]"
			}
			j := strings.Index(rest[1:], end)
			if j < 0 {
				sc.i = len(sc.s)
				return ""
			}
			sc.i += j + 2
			return rest[1 : j+1]
		case depth == 0 && isWordByte(c):
			n := 1
			for n < len(rest) && isWordByte(rest[n]) {
				n++
			}
			sc.i += n
			return rest[:n]
		default:
			sc.i++
		}
	}
	return ""
}

// skipPast moves past the first end found from skip bytes on, or to the
// end of the statement.
func (sc *sqlScanner) skipPast(end string, skip int) {
	j := strings.Index(sc.s[sc.i+skip:], end)
	if j < 0 {
		sc.i = len(sc.s)
		return
	}
	sc.i += skip + j + len(end)
}

// isWordByte tells whether c may be part of an unquoted identifier or
// keyword (a schema-qualified name included).
func isWordByte(c byte) bool {
	return c == '_' || c == '.' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}
