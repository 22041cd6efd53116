package benche2e

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// Kind is the shape of a response the client reads.
type Kind int

// The response kinds.
const (
	// KindChunks is an OpenAI chat.completion.chunk stream ending with
	// data: [DONE].
	KindChunks Kind = iota
	// KindCompletion is one chat.completion JSON body.
	KindCompletion
	// KindEvents is agentchat's project SSE stream ending with a done
	// event.
	KindEvents
)

// Call is one request the load client sends.
type Call struct {
	URL string
	// Auth is the bearer credential ("" for none).
	Auth string
	Body []byte
	Kind Kind
	// Want is the number of content chunks (events) the answer must have;
	// 0 accepts any positive number.
	Want int
	// Target is sent as HeaderTarget (the scripted LLM counts requests and
	// connections by target).
	Target string
}

// Sample is what one request measured.
type Sample struct {
	// TTFT is the time from sending the request to reading the first
	// content (for KindCompletion: the whole body).
	TTFT time.Duration
	// Total is the time to the end of the response.
	Total time.Duration
	// SessionID is agentchat's X-Session-Id header.
	SessionID string
}

// Client sends Calls over keep-alive HTTP/1.1 connections to 127.0.0.1.
type Client struct {
	hc   *http.Client
	tr   *http.Transport
	bufs sync.Pool
}

// NewClient returns a client keeping up to maxConns idle connections per
// host, so that c concurrent requests reuse theirs.
func NewClient(maxConns int) *Client {
	tr := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        4 * maxConns,
		MaxIdleConnsPerHost: maxConns,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
	c := &Client{hc: &http.Client{Transport: tr}, tr: tr}
	c.bufs.New = func() any { return bufio.NewReaderSize(nil, 16<<10) }
	return c
}

// Close closes the idle connections.
func (c *Client) Close() { c.tr.CloseIdleConnections() }

// Errors of a response that is not what the benchmark expects.
var (
	errNoContent = errors.New("the answer has no content")
	errEndless   = errors.New("the stream ended without its end marker")
)

// Do sends call and reads its answer to the end.
func (c *Client) Do(ctx context.Context, call Call) (Sample, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, call.URL, bytes.NewReader(call.Body))
	if err != nil {
		return Sample{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	if call.Kind == KindCompletion {
		req.Header.Set("Accept", "application/json")
	} else {
		req.Header.Set("Accept", "text/event-stream")
	}
	if call.Auth != "" {
		req.Header.Set("Authorization", "Bearer "+call.Auth)
	}
	if call.Target != "" {
		req.Header.Set(HeaderTarget, call.Target)
	}
	start := time.Now()
	resp, err := c.hc.Do(req)
	if err != nil {
		return Sample{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 2048))
		return Sample{}, fmt.Errorf("POST %s: %s: %s", call.URL, resp.Status, bytes.TrimSpace(msg))
	}
	s := Sample{SessionID: resp.Header.Get("X-Session-Id")}
	if call.Kind == KindCompletion {
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return s, fmt.Errorf("read %s: %w", call.URL, err)
		}
		s.TTFT = time.Since(start)
		s.Total = s.TTFT
		if !bytes.Contains(b, []byte(`"object":"chat.completion"`)) || !hasContent(b) {
			return s, fmt.Errorf("POST %s: not a chat.completion with content: %.200s", call.URL, b)
		}
		return s, nil
	}
	br := c.bufs.Get().(*bufio.Reader)
	br.Reset(resp.Body)
	defer func() {
		br.Reset(nil)
		c.bufs.Put(br)
	}()
	n, err := readStream(br, call.Kind, func() {
		if s.TTFT == 0 {
			s.TTFT = time.Since(start)
		}
	})
	if err != nil {
		return s, fmt.Errorf("POST %s: %w", call.URL, err)
	}
	// Read to EOF so that the connection goes back to the pool.
	if _, err := io.Copy(io.Discard, br); err != nil {
		return s, fmt.Errorf("POST %s: read the end: %w", call.URL, err)
	}
	s.Total = time.Since(start)
	switch {
	case n == 0:
		return s, fmt.Errorf("POST %s: %w", call.URL, errNoContent)
	case call.Want > 0 && n != call.Want:
		return s, fmt.Errorf("POST %s: %d contents, want %d", call.URL, n, call.Want)
	}
	return s, nil
}

// readStream reads SSE data lines up to the end marker, calling onContent
// at each content (a chunk with a non-empty delta.content, or a project
// content event) and returning how many there were. An error chunk or
// event ends it with an error.
func readStream(br *bufio.Reader, kind Kind, onContent func()) (int, error) {
	n := 0
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			if errors.Is(err, bufio.ErrBufferFull) {
				// A line longer than the buffer: skip the rest of it.
				for errors.Is(err, bufio.ErrBufferFull) {
					_, err = br.ReadSlice('\n')
				}
				if err == nil {
					continue
				}
			}
			if errors.Is(err, io.EOF) {
				return n, errEndless
			}
			return n, err
		}
		p, ok := bytes.CutPrefix(line, []byte("data: "))
		if !ok {
			continue
		}
		p = bytes.TrimRight(p, "\r\n")
		switch kind {
		case KindChunks:
			if string(p) == "[DONE]" {
				return n, nil
			}
			if bytes.HasPrefix(p, []byte(`{"error"`)) {
				return n, fmt.Errorf("error chunk: %.300s", p)
			}
			if hasContent(p) {
				n++
				onContent()
			}
		case KindEvents:
			switch {
			case bytes.HasPrefix(p, []byte(`{"type":"content"`)):
				if hasContent(p) {
					n++
					onContent()
				}
			case bytes.HasPrefix(p, []byte(`{"type":"done"`)):
				return n, nil
			case bytes.HasPrefix(p, []byte(`{"type":"error"`)):
				return n, fmt.Errorf("error event: %.300s", p)
			}
		}
	}
}

// hasContent reports whether JSON b has a "content" string that is not
// empty (the role chunk's "content":"" is not content).
func hasContent(b []byte) bool {
	key := []byte(`"content":"`)
	for {
		i := bytes.Index(b, key)
		if i < 0 {
			return false
		}
		b = b[i+len(key):]
		if len(b) > 0 && b[0] != '"' {
			return true
		}
	}
}
