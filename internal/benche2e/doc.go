// Package benche2e measures agentchat as its users see it: the client,
// agentchat's local server, a scripted OpenAI-compatible LLM and a bare
// httputil.ReverseProxy in front of that LLM each run as their own process
// on 127.0.0.1, and the client (the run command) alternates requests sent
// straight to the LLM, through the proxy and through agentchat, so that
// the three are measured under the same load of a shared machine. It
// reports, per target: time to first token and to the end (p50, p99),
// requests per second, CPU time of the target's process per request
// (/proc/<pid>/stat) and its peak RSS (/proc/<pid>/status), then
// agentchat's ratios to the proxy.
//
// `make bench-e2e` (scripts/bench-e2e.sh) builds the binaries and runs it;
// cmd/benche2e is the command, cmd/profserver the local server with a CPU
// profile for EnvCPUProfile; with -cpuprofile the proxy writes its own
// profile beside it (ProxyProfile), for go tool pprof -diff_base.
package benche2e
