// Package dynalitetest starts dynalite, an in-memory DynamoDB emulator from
// npm, for tests. The emulator is the one pinned in the repository's
// package.json and installed into node_modules by `npm ci` (`make deps`).
//
// Start gives one emulator to a test (or a top-level test sharing it among
// its subtests); Launch gives one to a TestMain. Either way a test that
// cannot get an emulator fails with a message telling how to install it; it
// is never skipped.
package dynalitetest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// installHint is appended to every start failure.
const installHint = "install the test dependencies with `npm ci` (or `make deps`) in the module root"

// cliPath is the dynalite entry point relative to the module root.
var cliPath = filepath.Join("node_modules", "dynalite", "cli.js")

// startTimeout bounds the time given to node to load dynalite and listen.
const startTimeout = 30 * time.Second

// Server is a running dynalite process listening on 127.0.0.1.
type Server struct {
	endpoint string
	cmd      *exec.Cmd
	done     chan struct{} // closed when the process has exited
	stopOnce sync.Once
	logs     *tailBuffer
}

// Start starts dynalite (in-memory) on 127.0.0.1 on a free port, waits until
// it answers, and stops it in t.Cleanup. It returns the endpoint URL, e.g.
// "http://127.0.0.1:41234". If node or the dynalite package is missing or
// the emulator cannot start, the test fails with a message telling to run
// `npm ci`.
func Start(t testing.TB) (endpoint string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	s, err := Launch(ctx)
	if err != nil {
		t.Fatalf("dynalitetest: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Errorf("dynalitetest: %v", err)
		}
	})
	return s.Endpoint()
}

// Launch starts a dynalite process like Start, for callers without a
// testing.TB such as TestMain; the caller must call Stop. The error message
// says how to install dynalite when it is missing.
func Launch(ctx context.Context) (*Server, error) {
	return launch(ctx)
}

// LaunchPersistent starts a dynalite process like Launch whose tables live
// in the LevelDB directory dir instead of in memory: an emulator started
// again on dir, after Stop (a SIGKILL) or a crash of the earlier one,
// finds what it stored. The caller must call Stop.
func LaunchPersistent(ctx context.Context, dir string) (*Server, error) {
	if dir == "" {
		return nil, errors.New("dynalite data directory is empty")
	}
	return launch(ctx, "--path", dir)
}

// launch starts dynalite with the extra command-line arguments.
func launch(ctx context.Context, extra ...string) (*Server, error) {
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, fmt.Errorf("node is not on PATH (%v); install Node.js >= 20 and %s", err, installHint)
	}
	root, err := moduleRoot()
	if err != nil {
		return nil, fmt.Errorf("%v; %s", err, installHint)
	}
	cli := filepath.Join(root, cliPath)
	if _, err := os.Stat(cli); err != nil {
		return nil, fmt.Errorf("dynalite is not installed (%s missing); %s", cli, installHint)
	}
	var lastErr error
	// Picking a free port and handing it to node races with other
	// processes; a few attempts make a collision harmless.
	for attempt := 0; attempt < 5; attempt++ {
		port, err := freePort()
		if err != nil {
			return nil, fmt.Errorf("find a free port: %w", err)
		}
		s, err := launchOn(ctx, node, cli, port, extra...)
		if err == nil {
			return s, nil
		}
		lastErr = err
		if ctx.Err() != nil {
			break
		}
	}
	return nil, fmt.Errorf("start dynalite: %w; %s", lastErr, installHint)
}

// Endpoint returns the emulator's base URL.
func (s *Server) Endpoint() string { return s.endpoint }

// Stop ends the emulator process and waits for it to exit. It is safe to
// call more than once.
func (s *Server) Stop() error {
	var err error
	s.stopOnce.Do(func() {
		select {
		case <-s.done:
			err = fmt.Errorf("dynalite exited before Stop; output:\n%s", s.logs.String())
			return
		default:
		}
		if kerr := s.cmd.Process.Kill(); kerr != nil && !errors.Is(kerr, os.ErrProcessDone) {
			err = fmt.Errorf("stop dynalite (pid %d): %w", s.cmd.Process.Pid, kerr)
			return
		}
		select {
		case <-s.done:
		case <-time.After(10 * time.Second):
			err = fmt.Errorf("dynalite (pid %d) did not exit after kill", s.cmd.Process.Pid)
		}
	})
	return err
}

// abortGuard is preloaded into dynalite's node process: dynalite throws
// the error of a request whose client went away mid-body (its index.js:
// req.on('error', function (err) { throw err })), which killed the
// emulator under every later test when a test cancelled a request in
// flight (a cut-off DeleteProject cancels its other deletes). That error
// is logged and the emulator serves on; any other uncaught error still
// ends it.
const abortGuard = `process.on('uncaughtException', function (err) {
  if (err && err.code === 'ECONNRESET') {
    console.error('dynalite: a client aborted its request: ' + err.message)
    return
  }
  console.error((err && err.stack) || err)
  process.exit(1)
})
`

// launchOn starts dynalite on port, with the extra arguments, and waits
// for its listening line and a first answered HTTP request.
func launchOn(ctx context.Context, node, cli string, port int, extra ...string) (*Server, error) {
	guardDir, err := os.MkdirTemp("", "dynalite-guard-")
	if err != nil {
		return nil, fmt.Errorf("dynalite abort guard: %w", err)
	}
	guard := filepath.Join(guardDir, "abort-guard.js")
	if err := os.WriteFile(guard, []byte(abortGuard), 0o600); err != nil {
		_ = os.RemoveAll(guardDir)
		return nil, fmt.Errorf("dynalite abort guard: %w", err)
	}
	args := []string{"--require", guard, cli,
		"--host", "127.0.0.1",
		"--port", strconv.Itoa(port),
		"--createTableMs", "0",
		"--deleteTableMs", "0",
		"--updateTableMs", "0",
	}
	cmd := exec.Command(node, append(args, extra...)...)
	cmd.Dir = filepath.Dir(cli)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		_ = os.RemoveAll(guardDir)
		return nil, fmt.Errorf("stdout pipe: %w", err)
	}
	logs := &tailBuffer{max: 8 << 10}
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		_ = os.RemoveAll(guardDir)
		return nil, fmt.Errorf("run %s %s: %w", node, cli, err)
	}
	s := &Server{
		endpoint: "http://127.0.0.1:" + strconv.Itoa(port),
		cmd:      cmd,
		done:     make(chan struct{}),
		logs:     logs,
	}
	listening := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		signalled := false
		for sc.Scan() {
			line := sc.Text()
			_, _ = logs.Write([]byte(line + "\n"))
			if !signalled && strings.Contains(line, "listening at") {
				signalled = true
				close(listening)
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
		_ = cmd.Wait()
		_ = os.RemoveAll(guardDir)
		close(s.done)
	}()

	select {
	case <-listening:
	case <-s.done:
		return nil, fmt.Errorf("dynalite exited at start on port %d; output:\n%s", port, logs.String())
	case <-ctx.Done():
		_ = s.Stop()
		return nil, fmt.Errorf("dynalite did not listen on port %d: %w; output:\n%s", port, ctx.Err(), logs.String())
	}
	if err := waitAnswer(ctx, s); err != nil {
		_ = s.Stop()
		return nil, err
	}
	return s, nil
}

// waitAnswer polls the endpoint until it answers an HTTP request (any
// status: dynalite rejects an unsigned GET, which is enough).
func waitAnswer(ctx context.Context, s *Server) error {
	client := &http.Client{Timeout: 2 * time.Second}
	delay := 10 * time.Millisecond
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.endpoint, nil)
		if err != nil {
			return fmt.Errorf("build probe request: %w", err)
		}
		resp, err := client.Do(req)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			return nil
		}
		select {
		case <-s.done:
			return fmt.Errorf("dynalite exited before answering; output:\n%s", s.logs.String())
		case <-ctx.Done():
			return fmt.Errorf("dynalite at %s did not answer: %w (last error: %v)", s.endpoint, ctx.Err(), err)
		case <-time.After(delay):
		}
		delay = min(2*delay, 200*time.Millisecond)
	}
}

// moduleRoot walks up from the working directory to the directory holding
// go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("working directory: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod found above the working directory")
		}
		dir = parent
	}
}

// freePort asks the kernel for a free TCP port on 127.0.0.1.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// tailBuffer keeps the last max bytes written to it, for error messages.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

// Write appends p, dropping the oldest bytes beyond max.
func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.max; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	return len(p), nil
}

// String returns the kept output.
func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}
