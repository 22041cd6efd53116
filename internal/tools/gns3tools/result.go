package gns3tools

import (
	"cmp"
	"errors"
	"fmt"
	"sync"

	"agentchat/internal/gns3"
)

// Item statuses.
const (
	statusSuccess = "success"
	statusFailed  = "failed"
)

// outcome ends every result item: its status and, when failed, why.
type outcome struct {
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`
}

func (o *outcome) succeed()          { o.Status, o.Error = statusSuccess, "" }
func (o *outcome) fail(msg string)   { o.Status, o.Error = statusFailed, msg }
func (o *outcome) failErr(err error) { o.fail(describe(err)) }
func (o *outcome) result() *outcome  { return o }
func (o *outcome) done() bool        { return o.Status != "" }
func (o *outcome) failIfPending(m string) {
	if !o.done() {
		o.fail(m)
	}
}

// itemPtr is a pointer to a result item type T, which embeds outcome.
type itemPtr[T any] interface {
	*T
	result() *outcome
}

// report is the answer of every tool.
type report[T any] struct {
	Success    bool `json:"success"`
	Total      int  `json:"total"`
	Successful int  `json:"successful"`
	Failed     int  `json:"failed"`
	Results    []T  `json:"results"`
	firstError string
}

// summarizer is a report, as the logger sees it.
type summarizer interface {
	summary() (total, failed int, firstError string)
}

func (r report[T]) summary() (int, int, string) { return r.Total, r.Failed, r.firstError }

// finish counts the items into a report; an item left without a status
// is failed ("not run").
func finish[T any, P itemPtr[T]](items []T) report[T] {
	if items == nil {
		items = []T{}
	}
	r := report[T]{Total: len(items), Results: items}
	for i := range items {
		o := P(&items[i]).result()
		if o.Status == statusSuccess {
			r.Successful++
			continue
		}
		if o.Status != statusFailed || o.Error == "" {
			o.fail(cmp.Or(o.Error, "not run"))
		}
		r.Failed++
		if r.firstError == "" {
			r.firstError = o.Error
		}
	}
	r.Success = r.Failed == 0
	return r
}

// failAll fails every item not yet done with msg: a failure of the whole
// call.
func failAll[T any, P itemPtr[T]](items []T, msg string) report[T] {
	for i := range items {
		P(&items[i]).result().failIfPending(msg)
	}
	return finish[T, P](items)
}

// forEach runs f for every index in [0, n) concurrently and waits for all.
// The GNS3 requests inside f are bounded by call.limit.
func forEach(n int, f func(i int)) {
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { f(i) })
	}
	wg.Wait()
}

// describe is the short, secret-free text of an error for a result item.
func describe(err error) string {
	var te *toolError
	if errors.As(err, &te) {
		return te.msg
	}
	return gns3.Describe(err)
}

// toolError is an error of this package's own (a node or port not found),
// already readable and secret-free.
type toolError struct{ msg string }

func (e *toolError) Error() string { return e.msg }

// errorf formats a toolError.
func errorf(format string, args ...any) error {
	return &toolError{msg: fmt.Sprintf(format, args...)}
}
