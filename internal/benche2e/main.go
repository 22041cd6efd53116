package benche2e

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"agentchat/internal/store/dynamo/dynalitetest"
)

// Usage is the command's help.
const Usage = `usage: benche2e <command> [flags]

  run    start the scripted LLM, the proxy and agentchat (-server) as their own
         processes, measure them from this process and print the report
  llm    serve the scripted OpenAI-compatible LLM
  proxy  serve the bare reverse proxy in front of -upstream

"benche2e <command> -h" lists the command's flags.
`

// Main runs the benche2e command with args (without the program name) and
// returns its exit code.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, Usage)
		return 2
	}
	var err error
	switch args[0] {
	case "run":
		err = runMain(ctx, args[1:], stdout, stderr)
	case "llm":
		err = ServeLLM(ctx, args[1:], stdout, stderr)
	case "proxy":
		err = ServeProxy(ctx, args[1:], stdout, stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, Usage)
		return 0
	default:
		fmt.Fprintf(stderr, "benche2e: unknown command %q\n%s", args[0], Usage)
		return 2
	}
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		return 2
	}
	fmt.Fprintln(stderr, "benche2e:", err)
	return 1
}

var errUsage = errors.New("usage")

func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return errUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(fs.Output(), "unexpected arguments: %s\n", strings.Join(fs.Args(), " "))
		return errUsage
	}
	return nil
}

// serve runs h on addr (127.0.0.1 only) until ctx is done, after printing
// "<name> listening on http://host:port"; connCtx, when not nil, is the
// server's ConnContext.
func serve(ctx context.Context, name, addr string, h http.Handler, connCtx func(context.Context, net.Conn) context.Context, stdout, stderr io.Writer) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("%s: listen on a loopback address, not %q", name, addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute,
		ErrorLog: log.New(stderr, name+": ", 0), ConnContext: connCtx}
	fmt.Fprintf(stdout, "%s %s%s\n", name, listening, ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return srv.Close()
	}
	return nil
}

// ServeLLM is the llm command: the scripted LLM on -addr.
func ServeLLM(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("benche2e llm", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:0", "listen address (loopback)")
	chunks := fs.Int("chunks", DefaultChunks, "content chunks per streamed answer")
	delay := fs.Duration("chunk-delay", 0, "pause between two chunks")
	first := fs.Duration("first-delay", 0, "pause before the first content chunk")
	if err := parse(fs, args); err != nil {
		return err
	}
	l := NewLLM(LLMOptions{Chunks: *chunks, ChunkDelay: *delay, FirstDelay: *first})
	return serve(ctx, "llm", *addr, l, l.ConnContext, stdout, stderr)
}

// ServeProxy is the proxy command: NewProxy to -upstream on -addr.
func ServeProxy(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("benche2e proxy", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:0", "listen address (loopback)")
	upstream := fs.String("upstream", "", "upstream root URL, e.g. http://127.0.0.1:9000")
	profile := fs.String("cpuprofile", "", "write the proxy's CPU profile of its whole run to this file")
	if err := parse(fs, args); err != nil {
		return err
	}
	u, err := url.Parse(*upstream)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return fmt.Errorf("proxy: -upstream must be an http URL, got %q", *upstream)
	}
	if *profile != "" {
		stop, err := StartCPUProfile(*profile)
		if err != nil {
			return fmt.Errorf("proxy: %w", err)
		}
		defer stop()
	}
	return serve(ctx, "proxy", *addr, NewProxy(u, log.New(stderr, "proxy: ", 0)), nil, stdout, stderr)
}

// ProxyProfile is the path of the proxy's CPU profile beside agentchat's
// profile at path: the two compare with
// go tool pprof -top -diff_base <path>.proxy <path>.
func ProxyProfile(path string) string { return path + ".proxy" }

// EnvCPUProfile names the file the profiling build of agentchat
// (cmd/profserver) writes its CPU profile to.
const EnvCPUProfile = "BENCH_E2E_CPUPROFILE"

// runMain is the run command.
func runMain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("benche2e run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	server := fs.String("server", "", "agentchat local server binary (go build ./functions/local)")
	var o Options
	fs.IntVar(&o.Requests, "n", DefaultRequests, "measured requests per target, scenario and concurrency")
	fs.IntVar(&o.Warmup, "warmup", 200, "warm-up requests per target and scenario")
	fs.IntVar(&o.Concurrency, "c", 50, "concurrency of the second phase (1: none)")
	fs.IntVar(&o.Batch, "batch", 0, "requests per batch of the concurrent phase (0: 5 × c)")
	fs.IntVar(&o.Chunks, "chunks", DefaultChunks, "content chunks per streamed answer")
	fs.IntVar(&o.TurnsPerSession, "turns", 8, "measured turns per continuing session")
	delay := fs.Duration("chunk-delay", 0, "pause between two chunks of the scripted LLM")
	scenarios := fs.String("scenarios", strings.Join(Scenarios, ","), "scenarios to run, comma-separated")
	timeout := fs.Duration("timeout", 15*time.Minute, "stop the whole run after this long")
	profile := fs.String("cpuprofile", "", "CPU profile file for agentchat (needs the profiling build, cmd/profserver); the proxy's goes beside it, with .proxy appended")
	jsonOut := fs.String("json", "", "also write the report as JSON to this file")
	keep := fs.Bool("keep", false, "keep the work directory (logs, SQLite file)")
	storeKind := fs.String("store", "sqlite", "agentchat's store: sqlite (a file in the work directory) or dynalite (the DynamoDB emulator, started for the run from node_modules: npm ci)")
	var settings envSettings
	fs.Var(&settings, "server-env", "KEY=VALUE added to agentchat's environment, for a comparison (e.g. TURN_LOG=off); repeatable")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *server == "" {
		fmt.Fprintln(stderr, "benche2e run: -server is required")
		return errUsage
	}
	if *storeKind != "sqlite" && *storeKind != "dynalite" {
		fmt.Fprintf(stderr, "benche2e run: -store must be sqlite or dynalite, got %q\n", *storeKind)
		return errUsage
	}
	o.Scenarios = strings.Split(*scenarios, ",")
	o.Store = *storeKind
	o.Progress = stderr
	self, err := os.Executable()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	dir, err := os.MkdirTemp("", "benche2e-")
	if err != nil {
		return err
	}
	if *keep {
		fmt.Fprintln(stderr, "work directory:", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	serverEnv := append([]string(nil), settings...)
	switch *storeKind {
	case "sqlite":
	case "dynalite":
		// The server creates its table on an emulator's endpoint.
		dyn, err := dynalitetest.Launch(ctx)
		if err != nil {
			return fmt.Errorf("start dynalite: %w", err)
		}
		defer func() { _ = dyn.Stop() }()
		serverEnv = append(serverEnv, "STORE=dynamodb", "TABLE_NAME=benche2e", "DYNAMODB_ENDPOINT="+dyn.Endpoint(),
			"AWS_REGION=us-east-1", "AWS_ACCESS_KEY_ID=benche2e", "AWS_SECRET_ACCESS_KEY=benche2e")
	}
	var proxyProfile string
	if *profile != "" {
		abs, err := filepath.Abs(*profile)
		if err != nil {
			return err
		}
		// The profiles are written at the end of the run: a directory
		// missing then would waste the whole run.
		if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
			return fmt.Errorf("profile directory: %w", err)
		}
		serverEnv = append(serverEnv, EnvCPUProfile+"="+abs)
		proxyProfile = ProxyProfile(abs)
	}
	cmds := Commands{
		LLM:    func(a ...string) *exec.Cmd { return exec.Command(self, append([]string{"llm"}, a...)...) },
		Proxy:  func(a ...string) *exec.Cmd { return exec.Command(self, append([]string{"proxy"}, a...)...) },
		Server: func() *exec.Cmd { return exec.Command(*server) },
	}
	sys, err := Launch(ctx, cmds, LaunchOptions{Dir: dir, Chunks: o.Chunks, ChunkDelay: *delay, ServerEnv: serverEnv,
		ProxyProfile: proxyProfile})
	if err != nil {
		return err
	}
	rep, err := Run(ctx, sys.Env, o)
	if err != nil {
		sys.Stop()
		if ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return errInterrupted // Ctrl-C: nothing to explain
		}
		return fmt.Errorf("%w\nagentchat log (end):\n%s", err, tail(filepath.Join(dir, "agentchat.log"), 3000))
	}
	sys.Stop()
	if exited, perr := sys.Server.Exited(); exited && perr != nil {
		fmt.Fprintln(stderr, "agentchat exited with", perr)
	}
	rep.WriteText(stdout)
	if *jsonOut != "" {
		b, err := json.MarshalIndent(rep.Summary(), "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(*jsonOut, append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// envSettings are KEY=VALUE flags.
type envSettings []string

// String implements flag.Value.
func (e *envSettings) String() string { return strings.Join(*e, " ") }

// Set implements flag.Value.
func (e *envSettings) Set(v string) error {
	if k, _, ok := strings.Cut(v, "="); !ok || k == "" || strings.ContainsAny(k, " \t\n") {
		return fmt.Errorf("want KEY=VALUE, got %q", v)
	}
	*e = append(*e, v)
	return nil
}
