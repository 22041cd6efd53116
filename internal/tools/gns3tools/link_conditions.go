package gns3tools

import (
	"context"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"

	"agentchat/internal/agent"
	"agentchat/internal/gns3"
	"agentchat/internal/tools/toolkit"
)

// ToolLinkConditions is the name of manage_gns3_link_conditions.
const ToolLinkConditions = "manage_gns3_link_conditions"

// Actions of manage_gns3_link_conditions.
const (
	condGetAvailable = "get_available"
	condGet          = "get"
	condSet          = "set"
	condClear        = "clear"
)

// Bounds of the link conditions (GNS3's FILTERS in
// gns3server/controller/link.py).
const (
	maxFrequencyDrop = 32767
	maxDelayMS       = 32767
	maxBPFLen        = 256
)

// linkConditionsArgs are the arguments of manage_gns3_link_conditions.
type linkConditionsArgs struct {
	Action     string          `json:"action" jsonschema:"get_available: the conditions GNS3 can apply on the link; get: the link's current conditions; set: replace them with 'conditions' (a condition not given is removed: get first to keep some); clear: remove them all."`
	Link       string          `json:"link" jsonschema:"The link: its link_id, or its ends as node:port."`
	Conditions *linkConditions `json:"conditions,omitempty" jsonschema:"The conditions of set (at least one)."`
	ShowIcon   *bool           `json:"show_icon,omitempty" jsonschema:"set and clear: whether the web UI marks the link with the conditions icon (false hides a fault from a student); omitted: GNS3's setting is left as it is."`
}

// linkConditions are the conditions of set, each checked against GNS3's
// bounds before GNS3 is called.
type linkConditions struct {
	FrequencyDrop *int   `json:"frequency_drop,omitempty" jsonschema:"Drop every Nth packet (1 to 32767); -1 drops every packet; 0 drops none."`
	PacketLoss    *int   `json:"packet_loss,omitempty" jsonschema:"Chance, in percent (0 to 100), that a packet is lost."`
	DelayMS       *int   `json:"delay_ms,omitempty" jsonschema:"Latency added to every packet, in milliseconds (0 to 32767)."`
	JitterMS      *int   `json:"jitter_ms,omitempty" jsonschema:"Jitter (+/-) of that latency, in milliseconds (0 to 32767); needs delay_ms."`
	Corrupt       *int   `json:"corrupt,omitempty" jsonschema:"Chance, in percent (0 to 100), that a packet is corrupted."`
	BPF           string `json:"bpf,omitempty" jsonschema:"One BPF expression (tcpdump syntax, one line): the packets it matches are dropped, for example 'icmp' or 'tcp port 179'."`
}

// conditionsResult is the result of manage_gns3_link_conditions.
type conditionsResult struct {
	Link     string `json:"link"`
	LinkID   string `json:"link_id,omitempty"`
	Ends     string `json:"ends,omitempty"`
	Action   string `json:"action"`
	Suspend  bool   `json:"suspended,omitempty"`
	ShowIcon *bool  `json:"show_icon,omitempty"`
	// Conditions are the link's conditions as GNS3 holds them after the
	// call, in GNS3's form ({"delay": [latency, jitter], ...}).
	Conditions map[string]any    `json:"conditions,omitempty"`
	Available  []gns3.LinkFilter `json:"available,omitempty"`
	Note       string            `json:"note,omitempty"`
	toolkit.Outcome
}

func linkConditionsSpec() *spec {
	sp := toolkit.Define(ToolLinkConditions,
		"Read or change the conditions GNS3 applies to a link's traffic: packet loss, delay and jitter, corruption, "+
			"frequency drop, and a BPF expression whose packets are dropped. get_available lists what the link supports "+
			"(none when neither end runs on an emulator that applies them, such as a switch-to-switch link); get shows "+
			"the current conditions; set replaces them; clear removes them.",
		func(s *jsonschema.Schema) {
			s.Properties["action"].Enum = []any{condGetAvailable, condGet, condSet, condClear}
			toolkit.Length(s.Properties["link"], 1, maxLinkRef)
			s.Properties["link"].Description = linkRefHelp
			c := s.Properties["conditions"]
			bound := func(name string, lo, hi int) {
				c.Properties[name].Minimum, c.Properties[name].Maximum = jsonschema.Ptr(float64(lo)), jsonschema.Ptr(float64(hi))
			}
			bound("frequency_drop", -1, maxFrequencyDrop)
			bound("packet_loss", 0, 100)
			bound("delay_ms", 0, maxDelayMS)
			bound("jitter_ms", 0, maxDelayMS)
			bound("corrupt", 0, 100)
			toolkit.Length(c.Properties["bpf"], 1, maxBPFLen)
			c.Properties["bpf"].Pattern = `^[ -~]+$`
		}, manageLinkConditions)
	sp.SideEffects, sp.Tier = true, agent.TierDestructive
	return sp
}

func manageLinkConditions(ctx context.Context, c *call, a linkConditionsArgs) toolkit.Report[conditionsResult] {
	items := []conditionsResult{{Link: a.Link, Action: a.Action}}
	it := &items[0]
	filters, err := conditionsFilters(a)
	if err != nil {
		it.FailErr(err)
		return toolkit.Finish(items)
	}
	l, err := c.resolveLink(ctx, a.Link)
	if err != nil {
		it.FailErr(err)
		return toolkit.Finish(items)
	}
	it.LinkID, it.Ends = l.link.LinkID, l.ends
	switch a.Action {
	case condGet:
		it.report(&l.link)
		it.Succeed()
	case condGetAvailable:
		avail, err := c.availableFilters(ctx, l.link.LinkID)
		if err != nil {
			it.Fail("cannot read the link's available conditions: " + toolkit.Describe(err))
			break
		}
		it.Available = avail
		if len(avail) == 0 {
			it.Note = noFiltersNote
		}
		it.Succeed()
	case condSet, condClear:
		if a.Action == condSet {
			avail, err := c.availableFilters(ctx, l.link.LinkID)
			if err != nil {
				it.Fail("cannot read the link's available conditions: " + toolkit.Describe(err))
				break
			}
			if msg := unsupported(filters, avail); msg != "" {
				it.Fail(msg)
				break
			}
		}
		fields := map[string]any{"filters": filters}
		if a.ShowIcon != nil {
			fields["show_filters_icon"] = *a.ShowIcon
		}
		var got *gns3.Link
		err := c.limit(ctx, func() (err error) {
			got, err = c.client.UpdateLink(ctx, c.Token, c.ProjectID, l.link.LinkID, fields)
			return err
		})
		if err != nil {
			it.Fail("GNS3 refused the conditions: " + toolkit.Describe(err))
			break
		}
		it.report(got)
		if got.Suspend {
			it.Note = "the link is suspended: it drops every packet whatever its conditions"
		}
		it.Succeed()
	}
	return toolkit.Finish(items)
}

const noFiltersNote = "GNS3 applies no conditions on this link: neither end runs on an emulator that applies them (VPCS, Qemu, Dynamips, IOU, Docker, VirtualBox, VMware, cloud, NAT)"

func (r *conditionsResult) report(l *gns3.Link) {
	r.Conditions, r.Suspend, r.ShowIcon = l.Filters, l.Suspend, l.ShowFiltersIcon
	if r.Conditions == nil {
		r.Conditions = map[string]any{}
	}
}

func (c *call) availableFilters(ctx context.Context, linkID string) ([]gns3.LinkFilter, error) {
	var out []gns3.LinkFilter
	err := c.limit(ctx, func() (err error) {
		out, err = c.client.AvailableFilters(ctx, c.Token, c.ProjectID, linkID)
		return err
	})
	return out, err
}

// unsupported names the conditions of filters the link cannot apply.
func unsupported(filters map[string]any, avail []gns3.LinkFilter) string {
	if len(avail) == 0 {
		return noFiltersNote
	}
	have := map[string]bool{}
	for _, f := range avail {
		have[f.Type] = true
	}
	for name := range filters {
		if !have[name] {
			return fmt.Sprintf("GNS3 cannot apply %s on this link", name)
		}
	}
	return ""
}

// conditionsFilters checks the arguments and returns the filters to send
// (GNS3's form): for set, the conditions given; for clear, none; for the
// reads, nil. A value out of GNS3's bounds is an error, before any
// request.
func conditionsFilters(a linkConditionsArgs) (map[string]any, error) {
	switch a.Action {
	case condGet, condGetAvailable:
		if a.Conditions != nil || a.ShowIcon != nil {
			return nil, toolkit.Errorf("%s takes no conditions and no show_icon", a.Action)
		}
		return nil, nil
	case condClear:
		if a.Conditions != nil {
			return nil, toolkit.Errorf("clear takes no conditions: it removes them all")
		}
		return map[string]any{}, nil
	case condSet:
	default:
		return nil, toolkit.Errorf("unknown action %q (want get_available, get, set or clear)", a.Action)
	}
	k := a.Conditions
	if k == nil || (k.FrequencyDrop == nil && k.PacketLoss == nil && k.DelayMS == nil && k.JitterMS == nil && k.Corrupt == nil && k.BPF == "") {
		return nil, toolkit.Errorf("set needs at least one condition (use clear to remove them all)")
	}
	out := map[string]any{}
	check := func(name string, v *int, lo, hi int) error {
		if v == nil {
			return nil
		}
		if *v < lo || *v > hi {
			return toolkit.Errorf("%s %d is out of range (%d to %d)", name, *v, lo, hi)
		}
		out[name] = []int{*v}
		return nil
	}
	for _, err := range []error{
		check("frequency_drop", k.FrequencyDrop, -1, maxFrequencyDrop),
		check("packet_loss", k.PacketLoss, 0, 100),
		check("corrupt", k.Corrupt, 0, 100),
		check("delay", k.DelayMS, 0, maxDelayMS),
	} {
		if err != nil {
			return nil, err
		}
	}
	if k.JitterMS != nil {
		if k.DelayMS == nil {
			return nil, toolkit.Errorf("jitter_ms needs delay_ms")
		}
		if *k.JitterMS < 0 || *k.JitterMS > maxDelayMS {
			return nil, toolkit.Errorf("jitter_ms %d is out of range (0 to %d)", *k.JitterMS, maxDelayMS)
		}
		out["delay"] = []int{*k.DelayMS, *k.JitterMS}
	}
	if k.BPF != "" {
		if len(k.BPF) > maxBPFLen {
			return nil, toolkit.Errorf("bpf is longer than %d characters", maxBPFLen)
		}
		for _, r := range k.BPF {
			if r < 0x20 || r > 0x7e {
				return nil, toolkit.Errorf("bpf must be one line of printable ASCII (no control characters)")
			}
		}
		out["bpf"] = []string{k.BPF}
	}
	return out, nil
}
