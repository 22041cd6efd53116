package lambdatest

import (
	"agentchat/internal/syncbuf"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// ModuleRoot returns the directory holding go.mod (`go env GOMOD`).
func ModuleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD (is go on PATH?): %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("not inside the agentchat module (go env GOMOD is empty)")
	}
	return filepath.Dir(gomod), nil
}

// BuildFunctions builds every function with scripts/build-lambdas.sh (the
// script `make build` runs) for linux/goarch into dir/<name>/bootstrap and
// returns the script's output. It fails with a clear message when bash or
// go is missing.
func BuildFunctions(ctx context.Context, dir, goarch string) (string, error) {
	root, err := ModuleRoot()
	if err != nil {
		return "", err
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		return "", fmt.Errorf("bash is not on PATH (%v): it runs scripts/build-lambdas.sh", err)
	}
	if _, err := exec.LookPath("go"); err != nil {
		return "", fmt.Errorf("go is not on PATH (%v): the Lambda binaries are built with the go command", err)
	}
	cmd := exec.CommandContext(ctx, bash, filepath.Join(root, "scripts", "build-lambdas.sh"), "--out", dir, goarch)
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("scripts/build-lambdas.sh --out %s %s: %w\n%s", dir, goarch, err, out)
	}
	return string(out), nil
}

// HostArch returns the architecture the tests run on, for bootstraps they
// execute, or an error if Lambda has no such architecture or the host is
// not Linux.
func HostArch() (string, error) {
	if runtime.GOOS != "linux" || (runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64") {
		return "", fmt.Errorf("running a bootstrap needs linux/amd64 or linux/arm64, this is %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	return runtime.GOARCH, nil
}

// Process is a bootstrap running under a fake Runtime API.
type Process struct {
	Cmd     *exec.Cmd
	Started time.Time
	out     *syncbuf.Buffer
	done    chan struct{}
	err     error
}

// StartBootstrap runs the bootstrap at path with env (and only env: no
// variable of the test process leaks in), pointed at rt. It is killed in
// t.Cleanup; its output is printed if the test fails.
func StartBootstrap(t testing.TB, path string, rt *Runtime, env map[string]string) *Process {
	t.Helper()
	p := &Process{out: &syncbuf.Buffer{}, done: make(chan struct{})}
	p.Cmd = exec.Command(path)
	p.Cmd.Env = []string{"AWS_LAMBDA_RUNTIME_API=" + rt.Addr, "AWS_LAMBDA_FUNCTION_NAME=" + rt.FunctionName,
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE=512", "AWS_LAMBDA_FUNCTION_VERSION=$LATEST", "TZ=UTC", "LANG=C"}
	for k, v := range env {
		p.Cmd.Env = append(p.Cmd.Env, k+"="+v)
	}
	p.Cmd.Stdout, p.Cmd.Stderr = p.out, p.out
	p.Started = time.Now()
	if err := p.Cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", path, err)
	}
	go func() { p.err = p.Cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		p.Stop()
		if t.Failed() {
			t.Logf("output of %s:\n%s", filepath.Base(filepath.Dir(path)), p.Output())
		}
	})
	return p
}

// Output returns what the process printed.
func (p *Process) Output() string { return p.out.String() }

// Exited returns a channel closed when the process exits.
func (p *Process) Exited() <-chan struct{} { return p.done }

// Err returns the exit error once the process has exited.
func (p *Process) Err() error {
	select {
	case <-p.done:
		return p.err
	default:
		return nil
	}
}

// Stop kills the process and waits for it.
func (p *Process) Stop() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.Cmd.Process.Kill()
	<-p.done
}

// Failure describes why a process exited, with its output, for messages.
func (p *Process) Failure() string {
	return fmt.Sprintf("exited (%v); output:\n%s", p.Err(), strings.TrimSpace(p.Output()))
}
