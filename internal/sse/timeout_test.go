package sse

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestWriteTimeoutOnStuckClient: a client that stops reading makes the
// stream fail after the write timeout, also for small events (their bytes
// leave in the flush, not in the write).
func TestWriteTimeoutOnStuckClient(t *testing.T) {
	const maxBytes = 256 << 20 // far beyond the socket buffers
	result := make(chan error, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := Start(w)
		defer s.Close()
		s.SetWriteTimeout(100 * time.Millisecond)
		event := strings.Repeat("x", 512)
		for n := 0; n < maxBytes; n += len(event) {
			if err := s.Data([]byte(event)); err != nil {
				result <- err
				return
			}
		}
		result <- nil
	}))
	defer srv.Close()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	// Never read.
	select {
	case err := <-result:
		if err == nil {
			t.Fatal("every write went through to a client that reads nothing")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("a write to a stuck client blocked beyond the write timeout")
	}
}
