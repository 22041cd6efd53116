package localserver

import "runtime/debug"

// GCPercent is the garbage collector's target of the local server when the
// environment sets no GOGC: a new cycle starts once the heap grew by 70 %
// since the last one (the Go default is 100). The server's live heap is a
// few MiB, so a cycle is cheap, while the heap it grows to between two
// cycles is most of its resident size under load after the binary itself
// (make bench-e2e, 50 concurrent streams: peak RSS 32.4-32.6 MiB at 100,
// 31.5-31.7 MiB at 70, CPU per request the same within noise; 50 saved
// another MiB for about 5 % more CPU).
const GCPercent = 70

// TuneGC applies GCPercent unless GOGC is set (then the runtime already
// follows it). It changes the process's garbage collector: call it once,
// from main.
func TuneGC(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(GCPercent)
	}
}
