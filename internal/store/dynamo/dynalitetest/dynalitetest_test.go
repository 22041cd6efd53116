package dynalitetest

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestStartAnswersAndStops(t *testing.T) {
	ctx := t.Context()
	s, err := Launch(ctx)
	if err != nil {
		t.Fatalf("Launch: %v", err)
	}
	if !strings.HasPrefix(s.Endpoint(), "http://127.0.0.1:") {
		t.Errorf("endpoint %q is not on 127.0.0.1", s.Endpoint())
	}
	// dynalite answers a DynamoDB request without a signature check.
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.Endpoint(), strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", "DynamoDB_20120810.ListTables")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("ListTables: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusBadRequest {
		t.Errorf("ListTables: status %d", resp.StatusCode)
	}
	if err := s.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if err := s.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	if _, err := http.Get(s.Endpoint()); err == nil {
		t.Errorf("dynalite still answers after Stop")
	}
}

func TestStartTwiceGivesTwoServers(t *testing.T) {
	a, b := Start(t), Start(t)
	if a == b {
		t.Errorf("two Start calls share endpoint %s", a)
	}
}

func TestLaunchWithoutDynaliteSaysHowToInstall(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(sub)
	_, err := Launch(context.Background())
	if err == nil {
		t.Fatal("Launch without node_modules succeeded")
	}
	if !strings.Contains(err.Error(), "npm ci") || !strings.Contains(err.Error(), filepath.Join(dir, "node_modules")) {
		t.Errorf("error %q does not name the missing path and `npm ci`", err)
	}
}

// TestSurvivesAnAbortedRequest: a client that goes away in the middle of
// its request body (a cancelled call) does not end the emulator.
func TestSurvivesAnAbortedRequest(t *testing.T) {
	ctx := t.Context()
	s, err := Launch(ctx)
	if err != nil {
		t.Fatalf("Launch: %v", err)
	}
	defer s.Stop()
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.Endpoint(), "http://"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.WriteString(conn, "POST / HTTP/1.1\r\nHost: dynalite\r\nContent-Type: application/x-amz-json-1.0\r\n"+
		"X-Amz-Target: DynamoDB_20120810.ListTables\r\nContent-Length: 1000\r\n\r\n{\"Lim")
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // let dynalite start reading the body (not a timing assertion)
	conn.Close()
	for range 20 { // the emulator must still answer; a crashed one refuses at once
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.Endpoint(), strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/x-amz-json-1.0")
		req.Header.Set("X-Amz-Target", "DynamoDB_20120810.ListTables")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("ListTables after an aborted request: %v", err)
		}
		resp.Body.Close()
		time.Sleep(10 * time.Millisecond)
	}
	if err := s.Stop(); err != nil {
		t.Fatalf("Stop: %v (the emulator died)", err)
	}
}
