package toolkit

import "cmp"

// Item statuses.
const (
	// StatusSuccess is an item done in full.
	StatusSuccess = "success"
	// StatusPartial is an item done in part (some of a device's commands
	// failed or were blocked); it counts as failed.
	StatusPartial = "partial_success"
	// StatusFailed is an item not done.
	StatusFailed = "failed"
)

// Outcome ends every result item: embedded in the item's struct, it gives
// the item its status and, unless it is a success, why.
type Outcome struct {
	// Status is StatusSuccess, StatusPartial or StatusFailed; "" while
	// the item is pending.
	Status string `json:"status"`
	// Error is why the item failed, in whole or in part.
	Error string `json:"error,omitempty"`
}

// Succeed marks the item done.
func (o *Outcome) Succeed() { o.Status, o.Error = StatusSuccess, "" }

// Fail marks the item failed for msg.
func (o *Outcome) Fail(msg string) { o.Status, o.Error = StatusFailed, msg }

// FailErr marks the item failed for err, as Describe tells it.
func (o *Outcome) FailErr(err error) { o.Fail(Describe(err)) }

// Partial marks the item done in part; msg tells what failed.
func (o *Outcome) Partial(msg string) { o.Status, o.Error = StatusPartial, msg }

// Done reports whether the item has a status.
func (o *Outcome) Done() bool { return o.Status != "" }

// FailIfPending fails the item for msg unless it has a status already.
func (o *Outcome) FailIfPending(msg string) {
	if !o.Done() {
		o.Fail(msg)
	}
}

func (o *Outcome) outcome() *Outcome { return o }

// Item is a pointer to a result item type T, which embeds Outcome.
type Item[T any] interface {
	*T
	outcome() *Outcome
}

// Report is the answer of every tool: one result per item, and their
// counts. Failed counts the items that are not fully successful.
type Report[T any] struct {
	// Success is true when every item is a success.
	Success bool `json:"success"`
	// Total, Successful and Failed count the items.
	Total      int `json:"total"`
	Successful int `json:"successful"`
	Failed     int `json:"failed"`
	// Results are the items, in the order they were asked for.
	Results    []T `json:"results"`
	firstError string
}

// Answer is a Report of any item type, as Define and Set see it.
type Answer interface {
	summary() (total, failed int, firstError string)
}

func (r Report[T]) summary() (int, int, string) { return r.Total, r.Failed, r.firstError }

// Finish counts the items into a report. An item left without a status,
// or with another status than the three, is failed with its error or
// "not run"; a failed item without an error gets "failed".
func Finish[T any, P Item[T]](items []T) Report[T] {
	if items == nil {
		items = []T{}
	}
	r := Report[T]{Total: len(items), Results: items}
	for i := range items {
		o := P(&items[i]).outcome()
		switch o.Status {
		case StatusSuccess:
			r.Successful++
			continue
		case StatusPartial:
		case StatusFailed:
			o.Error = cmp.Or(o.Error, "failed")
		default:
			o.Fail(cmp.Or(o.Error, "not run"))
		}
		r.Failed++
		if r.firstError == "" {
			r.firstError = o.Error
		}
	}
	r.Success = r.Failed == 0
	return r
}

// FailAll fails every item not yet done with msg, a failure of the whole
// call (the nodes cannot be read), and counts them.
func FailAll[T any, P Item[T]](items []T, msg string) Report[T] {
	for i := range items {
		P(&items[i]).outcome().FailIfPending(msg)
	}
	return Finish[T, P](items)
}
