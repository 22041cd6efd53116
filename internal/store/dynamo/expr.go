package dynamo

import (
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// expr builds the update, condition and key expressions of one request,
// with every attribute name and value behind a placeholder (so that any
// tool name or reserved word is safe).
type expr struct {
	sets, adds, removes []string
	names               map[string]string
	values              item
	byName              map[string]string
}

func newExpr() *expr {
	return &expr{names: map[string]string{}, values: item{}, byName: map[string]string{}}
}

// n returns the placeholder of attribute name a.
func (e *expr) n(a string) string {
	if p, ok := e.byName[a]; ok {
		return p
	}
	p := "#n" + strconv.Itoa(len(e.byName))
	e.byName[a] = p
	e.names[p] = a
	return p
}

// v returns a new placeholder for value x.
func (e *expr) v(x types.AttributeValue) string {
	p := ":v" + strconv.Itoa(len(e.values))
	e.values[p] = x
	return p
}

// set adds "SET a = x".
func (e *expr) set(a string, x types.AttributeValue) { e.sets = append(e.sets, e.n(a)+" = "+e.v(x)) }

// setRaw adds a SET clause written with placeholders.
func (e *expr) setRaw(clause string) { e.sets = append(e.sets, clause) }

// add adds "ADD a x".
func (e *expr) add(a string, x types.AttributeValue) { e.adds = append(e.adds, e.n(a)+" "+e.v(x)) }

// remove adds "REMOVE a".
func (e *expr) remove(a string) { e.removes = append(e.removes, e.n(a)) }

// update returns the update expression.
func (e *expr) update() string {
	var parts []string
	if len(e.sets) > 0 {
		parts = append(parts, "SET "+strings.Join(e.sets, ", "))
	}
	if len(e.adds) > 0 {
		parts = append(parts, "ADD "+strings.Join(e.adds, ", "))
	}
	if len(e.removes) > 0 {
		parts = append(parts, "REMOVE "+strings.Join(e.removes, ", "))
	}
	return strings.Join(parts, " ")
}
