package benche2e

import (
	"bufio"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Proc is a child process of the benchmark: the scripted LLM, the proxy
// or agentchat.
type Proc struct {
	Name string
	// URL is the root the process announced (http://127.0.0.1:port).
	URL  string
	cmd  *exec.Cmd
	log  *os.File
	done chan struct{}
	err  error
}

// PID is the process id.
func (p *Proc) PID() int { return p.cmd.Process.Pid }

// readyTimeout bounds the wait for a process's "listening on" line.
const readyTimeout = 60 * time.Second

// listening is what every process prints once it accepts connections:
// "... listening on http://127.0.0.1:port".
const listening = "listening on http://"

// StartProc starts cmd, with its output going to logPath, and returns once
// it printed that it listens (or failed). The process gets SIGKILL should
// the benchmark die first (Linux).
func StartProc(ctx context.Context, name string, cmd *exec.Cmd, logPath string) (*Proc, error) {
	lf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd.Stderr = lf
	out, err := cmd.StdoutPipe()
	if err != nil {
		_ = lf.Close()
		return nil, err
	}
	setDeathSignal(cmd)
	if err := cmd.Start(); err != nil {
		_ = lf.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &Proc{Name: name, cmd: cmd, log: lf, done: make(chan struct{})}
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		announced := false
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(lf, line)
			if i := strings.Index(line, listening); i >= 0 && !announced {
				announced = true
				urls <- "http://" + strings.Fields(line[i+len(listening):] + " ")[0]
			}
		}
		_, _ = io.Copy(lf, out)
		p.err = cmd.Wait()
		close(p.done)
	}()
	t := time.NewTimer(readyTimeout)
	defer t.Stop()
	select {
	case p.URL = <-urls:
		return p, nil
	case <-p.done:
		err = fmt.Errorf("%s exited before listening: %v; log %s:\n%s", name, p.err, logPath, tail(logPath, 2000))
	case <-t.C:
		err = fmt.Errorf("%s did not listen within %s; log %s:\n%s", name, readyTimeout, logPath, tail(logPath, 2000))
	case <-ctx.Done():
		err = ctx.Err()
	}
	p.Stop(0)
	return nil, err
}

// Stop interrupts the process and waits up to grace for it to end, then
// kills it. It is idempotent.
func (p *Proc) Stop(grace time.Duration) {
	select {
	case <-p.done:
	default:
		_ = p.cmd.Process.Signal(os.Interrupt)
		t := time.NewTimer(grace)
		select {
		case <-p.done:
		case <-t.C:
			_ = p.cmd.Process.Kill()
			<-p.done
		}
		t.Stop()
	}
	_ = p.log.Close()
}

// Exited reports whether the process ended, and how.
func (p *Proc) Exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.err
	default:
		return false, nil
	}
}

// tail returns the last n bytes of a file.
func tail(path string, n int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > n {
		_, _ = f.Seek(st.Size()-n, io.SeekStart)
	}
	b, _ := io.ReadAll(f)
	return string(b)
}

// Commands start the benchmark's processes; the launcher adds the
// configuration (arguments, environment) and the output.
type Commands struct {
	// LLM and Proxy return the command of the scripted LLM and of the
	// proxy with args (see ServeLLM and ServeProxy).
	LLM, Proxy func(args ...string) *exec.Cmd
	// Server returns the command of agentchat's local server (configured by
	// the environment the launcher appends to the command's Env).
	Server func() *exec.Cmd
}

// LaunchOptions configure the processes.
type LaunchOptions struct {
	// Dir holds the logs and agentchat's DATA_DIR.
	Dir        string
	Chunks     int
	ChunkDelay time.Duration
	// ServerEnv is added to agentchat's environment (e.g. a CPU profile
	// path for the profiling build).
	ServerEnv []string
	// ProxyProfile, when set, is the file the proxy writes its CPU profile
	// to.
	ProxyProfile string
}

// System is the three running processes.
type System struct {
	LLM, Proxy, Server *Proc
	Env                Env
}

// Stop ends every process, agentchat first (it may write a profile).
func (s *System) Stop() {
	for _, p := range []*Proc{s.Server, s.Proxy, s.LLM} {
		if p != nil {
			p.Stop(15 * time.Second)
		}
	}
}

// benchSecret is the JWT secret of the benchmark's agentchat.
const benchSecret = "agentchat-bench-e2e-secret-0123456789abcdef"

// Launch starts the scripted LLM, the proxy in front of it and agentchat
// (SQLite in Dir, JWT auth on), all on 127.0.0.1. On error, what started
// is stopped.
func Launch(ctx context.Context, c Commands, o LaunchOptions) (_ *System, err error) {
	s := &System{}
	defer func() {
		if err != nil {
			s.Stop()
		}
	}()
	llmArgs := []string{"-addr", "127.0.0.1:0", "-chunks", fmt.Sprint(o.Chunks), "-chunk-delay", o.ChunkDelay.String()}
	if s.LLM, err = StartProc(ctx, "llm", withEnv(c.LLM(llmArgs...)), filepath.Join(o.Dir, "llm.log")); err != nil {
		return nil, err
	}
	proxyArgs := []string{"-addr", "127.0.0.1:0", "-upstream", s.LLM.URL}
	if o.ProxyProfile != "" {
		proxyArgs = append(proxyArgs, "-cpuprofile", o.ProxyProfile)
	}
	if s.Proxy, err = StartProc(ctx, "proxy", withEnv(c.Proxy(proxyArgs...)),
		filepath.Join(o.Dir, "proxy.log")); err != nil {
		return nil, err
	}
	data := filepath.Join(o.Dir, "data")
	srv := withEnv(c.Server(),
		"ADDR=127.0.0.1:0",
		"DATA_DIR="+data,
		"STORE=sqlite",
		"JWT_SECRET="+benchSecret,
		"OPENAI_BASE_URL="+s.LLM.URL+"/v1",
		"OPENAI_API_KEY=bench-key",
		"OPENAI_MODEL=bench-model",
		// One user sends every request: the per-user cap of concurrent
		// turns (default 8) would refuse the c=50 phase. The cap's store
		// writes are still made, and measured.
		"MAX_TURNS_PER_USER=1000",
	)
	srv.Env = append(srv.Env, o.ServerEnv...)
	if s.Server, err = StartProc(ctx, "agentchat", srv, filepath.Join(o.Dir, "agentchat.log")); err != nil {
		return nil, err
	}
	s.Env = Env{
		LLMURL: s.LLM.URL, ProxyURL: s.Proxy.URL, ServerURL: s.Server.URL,
		ProxyPID: s.Proxy.PID(), ServerPID: s.Server.PID(), LLMPID: s.LLM.PID(),
		Token: MintJWT([]byte(benchSecret), "bench-user", 24*time.Hour, time.Now()),
	}
	return s, nil
}

// passEnv are the variables of the benchmark's environment its processes
// get: the Go runtime's knobs (for experiments) and the basics. Nothing
// else passes, so that a GNS3_URL or OPENAI_* of the shell cannot change
// what is measured.
var passEnv = []string{"PATH", "HOME", "TMPDIR", "GOMAXPROCS", "GOGC", "GOMEMLIMIT", "GODEBUG"}

// withEnv gives cmd the passed-through environment plus extra (after what
// the command itself set).
func withEnv(cmd *exec.Cmd, extra ...string) *exec.Cmd {
	env := cmd.Env
	for _, k := range passEnv {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	cmd.Env = append(env, extra...)
	return cmd
}

// MintJWT returns an HS256 token for sub, valid ttl from now, as a GNS3
// controller sharing secret would issue it.
func MintJWT(secret []byte, sub string, ttl time.Duration, now time.Time) string {
	enc := base64.RawURLEncoding
	header := enc.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))
	claims, _ := json.Marshal(map[string]any{"sub": sub, "iat": now.Unix(), "exp": now.Add(ttl).Unix()})
	signing := header + "." + enc.EncodeToString(claims)
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(signing))
	return signing + "." + enc.EncodeToString(mac.Sum(nil))
}

// errInterrupted reports a run stopped by a signal.
var errInterrupted = errors.New("interrupted")
