package sessions

import (
	"context"
	"net/http"
	"slices"
	"strconv"

	"agentchat/internal/httpapi"
	"agentchat/internal/httpapi/views"
	"agentchat/internal/store"
)

// HistoryMaxBytes bounds one page of GET .../history: older messages stop
// being added once their text (store.MessageSize) would pass it; the
// newest message of the page is always returned, whatever its size.
const HistoryMaxBytes = 8 << 20

// HeaderNextCursor carries the cursor of the next page of a listing: the
// session list's next page, the history's older messages (before=).
const HeaderNextCursor = "X-Next-Cursor"

// history answers GET .../sessions/{session_id}/history?limit=&before=:
// the last limit (default 100, at most 1000) committed messages below the
// cursor before (none: the newest), in order, at most HistoryMaxBytes of
// text past the first. When older messages remain, X-Next-Cursor holds
// the before of the page that continues backwards.
func (h *Handlers) history(w http.ResponseWriter, r *http.Request) error {
	k, err := httpapi.SessionKey(r)
	if err != nil {
		return err
	}
	limit, err := ParseLimit(r, "limit", defaultHistory)
	if err != nil {
		return err
	}
	before, err := parseBefore(r)
	if err != nil {
		return err
	}
	s, err := h.store.GetSession(r.Context(), k)
	if err != nil {
		return storeError(k, err)
	}
	msgs, more, err := h.historyPage(r.Context(), k, store.HistoryPage{Before: before, Limit: limit, MaxBytes: HistoryMaxBytes})
	if err != nil {
		return storeError(k, err)
	}
	out := ConversationHistory{
		ThreadID:  s.ThreadID,
		Title:     s.Title,
		Messages:  make([]views.OpenAIMessage, 0, len(msgs)),
		CreatedAt: views.Timestamp(s.CreatedAt),
		UpdatedAt: views.Timestamp(s.UpdatedAt),
		LLMCalls:  s.LLMCallsCount,
	}
	for i := range msgs {
		out.Messages = append(out.Messages, MessageView(&msgs[i]))
	}
	if more && len(msgs) > 0 {
		w.Header().Set(HeaderNextCursor, strconv.FormatInt(msgs[0].Seq, 10))
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// historyPage reads one page through the store's HistoryPager, or, for a
// store without one, from its whole history.
func (h *Handlers) historyPage(ctx context.Context, k store.Key, p store.HistoryPage) ([]store.Message, bool, error) {
	if hp, ok := store.Capability[store.HistoryPager](h.store); ok {
		return hp.ListHistory(ctx, k, p)
	}
	all, err := h.store.ListMessages(ctx, k, 0)
	if err != nil {
		return nil, false, err
	}
	var page []store.Message
	bytes := 0
	for i := len(all) - 1; i >= 0; i-- {
		m := &all[i]
		if p.Before > 0 && m.Seq >= p.Before {
			continue
		}
		size := store.MessageSize(m)
		if !p.Fits(len(page), bytes, size) {
			slices.Reverse(page)
			return page, true, nil
		}
		page, bytes = append(page, *m), bytes+size
	}
	slices.Reverse(page)
	return page, false, nil
}

// parseBefore reads the history cursor before: a positive integer, the
// X-Next-Cursor of the previous page (0 when absent).
func parseBefore(r *http.Request) (int64, error) {
	v := r.URL.Query().Get("before")
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 1 {
		return 0, httpapi.Errorf(http.StatusUnprocessableEntity, "Query parameter 'before' must be the X-Next-Cursor value of the previous history page (a positive integer)")
	}
	return n, nil
}
