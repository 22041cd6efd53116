package knowledge

import (
	"context"
	"fmt"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"agentchat/internal/tools/toolkit"
)

// Bounds of wait_seconds.
const (
	minWait = 1
	maxWait = 600
	// waitMargin is added to the longest wait for the tool's timeout, so
	// that the runtime's bound never cuts a wait the model asked for.
	waitMargin = 30 * time.Second
)

// waitArgs are the arguments of wait_seconds.
type waitArgs struct {
	Seconds int `json:"seconds" jsonschema:"How long to wait, in seconds (1 to 600)."`
}

// waitItem is the one result of wait_seconds.
type waitItem struct {
	Seconds int `json:"seconds"`
	// Waited is the time actually waited, in whole seconds.
	Waited int `json:"waited_seconds"`
	toolkit.Outcome
}

func waitSecondsSpec() *toolkit.Def[*Toolset] {
	d := toolkit.Define(ToolWaitSeconds,
		"Wait a number of seconds (1 to 600) before going on, for example for a node to boot after start_gns3_node before its console "+
			"answers (VPCS: a few seconds; IOS/IOL: 30 to 60; qemu images: minutes). The chat stays alive meanwhile and the user's stop "+
			"ends the wait at once. Check the device afterwards rather than waiting again blindly.",
		func(s *jsonschema.Schema) {
			p := s.Properties["seconds"]
			p.Minimum, p.Maximum = jsonschema.Ptr(float64(minWait)), jsonschema.Ptr(float64(maxWait))
		}, wait)
	d.Timeout = maxWait*time.Second + waitMargin
	return d
}

func wait(ctx context.Context, t *Toolset, a waitArgs) toolkit.Report[waitItem] {
	it := waitItem{Seconds: a.Seconds}
	start := t.now()
	err := t.sleep(ctx, time.Duration(a.Seconds)*time.Second)
	it.Waited = int(t.now().Sub(start) / time.Second)
	if err != nil {
		it.Fail(fmt.Sprintf("the wait was interrupted after %d of %d seconds", it.Waited, a.Seconds))
	} else {
		it.Succeed()
	}
	return toolkit.Finish([]waitItem{it})
}
