package apitest

import (
	"context"
	"net/http"
	"strings"
	"sync"

	"agentchat/internal/llm"
)

// FlushLog records what the responses of wrapped handlers wrote between
// two flushes: what left the server in one write.
type FlushLog struct {
	mu       sync.Mutex
	pending  strings.Builder
	segments []string
}

// Wrap returns h writing through the log.
func (f *FlushLog) Wrap(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		h(&flushWriter{ResponseWriter: w, log: f}, r)
	}
}

// Flushed returns what each flush so far sent, in order.
func (f *FlushLog) Flushed() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.segments...)
}

// flushWriter is a ResponseWriter that logs its flushes.
type flushWriter struct {
	http.ResponseWriter
	log *FlushLog
}

func (w *flushWriter) Write(b []byte) (int, error) {
	w.log.mu.Lock()
	w.log.pending.Write(b)
	w.log.mu.Unlock()
	return w.ResponseWriter.Write(b)
}

func (w *flushWriter) Flush() {
	w.log.mu.Lock()
	w.log.segments = append(w.log.segments, w.log.pending.String())
	w.log.pending.Reset()
	w.log.mu.Unlock()
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap gives http.ResponseController the server's writer (deadlines).
func (w *flushWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// PausedClient is an llm.Client whose streams send First, wait for Gate
// (or the end of the call's context), then send Then and end with the
// content of both. A surface that held back what First sent until the
// LLM sent more would never end.
type PausedClient struct {
	First, Then []llm.Delta
	Gate        <-chan struct{}
}

// Stream implements llm.Client.
func (p PausedClient) Stream(ctx context.Context, req llm.Request, onDelta func(llm.Delta) error) (*llm.Result, error) {
	var res llm.Result
	send := func(ds []llm.Delta) error {
		for _, d := range ds {
			res.Content += d.Content
			if err := onDelta(d); err != nil {
				return err
			}
		}
		return nil
	}
	if err := send(p.First); err != nil {
		return &res, err
	}
	select {
	case <-p.Gate:
	case <-ctx.Done():
		return &res, ctx.Err()
	}
	if err := send(p.Then); err != nil {
		return &res, err
	}
	res.FinishReason = "stop"
	return &res, nil
}

// Complete implements llm.Client: the content of First and Then.
func (p PausedClient) Complete(ctx context.Context, req llm.Request) (*llm.Result, error) {
	var res llm.Result
	for _, d := range append(append([]llm.Delta(nil), p.First...), p.Then...) {
		res.Content += d.Content
	}
	res.FinishReason = "stop"
	return &res, nil
}

// Model implements llm.Client.
func (PausedClient) Model() string { return "paused-model" }
