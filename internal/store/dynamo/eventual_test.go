package dynamo

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"agentchat/internal/store"
)

// The history is read eventually consistent (half the read units) and
// read again strongly consistent only when that read lacks a committed
// message, as a replica behind the latest write would: the reader gets
// the whole committed history either way.
func TestHistoryReadsEventualFirst(t *testing.T) {
	for _, behind := range []bool{false, true} {
		var (
			mu                   sync.Mutex
			eventual, consistent int
		)
		s := newAnswerStore(t, "", nil, func(op string, in, out any, err error) error {
			q, ok := in.(*dynamodb.QueryInput)
			res, _ := out.(*dynamodb.QueryOutput)
			if op != "Query" || !ok || res == nil || err != nil || !isMessageQuery(q) {
				return nil
			}
			mu.Lock()
			defer mu.Unlock()
			if aws.ToBool(q.ConsistentRead) {
				consistent++
			} else {
				eventual++
				if behind && len(res.Items) > 0 {
					res.Items = res.Items[1:] // the newest message not there yet
				}
			}
			return nil
		})
		k := createSession(t, s)
		ctx := t.Context()
		var want []string
		for _, c := range []string{"q1", "a1", "q2", "a2"} {
			mustAppend(t, s, k, store.Message{Role: store.RoleUser, Content: c})
			want = append(want, c)
		}
		reads := []struct {
			name string
			read func() ([]store.Message, error)
		}{
			{"ListMessages", func() ([]store.Message, error) { return s.ListMessages(ctx, k, 0) }},
			{"ListMessages, last 2", func() ([]store.Message, error) { return s.ListMessages(ctx, k, 2) }},
			{"ListHistory", func() ([]store.Message, error) {
				m, _, err := s.ListHistory(ctx, k, store.HistoryPage{Limit: 100})
				return m, err
			}},
			// The lease's own answer gives the commit state: the page
			// queried beside it may even predate the last commit.
			{"OpenTurn", func() ([]store.Message, error) {
				_, m, err := s.OpenTurn(ctx, k, "reader", time.Minute, 0)
				if err == nil {
					err = s.ReleaseLease(ctx, k, "reader")
				}
				return m, err
			}},
		}
		for _, r := range reads {
			mu.Lock()
			eventual, consistent = 0, 0
			mu.Unlock()
			got, err := r.read()
			if err != nil {
				t.Fatalf("behind %v, %s: %v", behind, r.name, err)
			}
			w := want
			if r.name == "ListMessages, last 2" {
				w = want[2:]
			}
			if !slices.Equal(contents(got), w) {
				t.Errorf("behind %v, %s: %q, want %q", behind, r.name, contents(got), w)
			}
			mu.Lock()
			wantConsistent := 0
			if behind {
				wantConsistent = 1
			}
			if eventual != 1 || consistent != wantConsistent {
				t.Errorf("behind %v, %s: %d eventually and %d strongly consistent queries, want 1 and %d", behind, r.name, eventual, consistent, wantConsistent)
			}
			mu.Unlock()
		}
	}
}

// isMessageQuery tells a query of message items (a sort key range
// starting at MSG#).
func isMessageQuery(q *dynamodb.QueryInput) bool {
	for _, v := range q.ExpressionAttributeValues {
		if strings.HasPrefix(getS(item{"v": v}, "v"), msgPrefix) {
			return true
		}
	}
	return false
}
