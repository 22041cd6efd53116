package gns3tools

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"agentchat/internal/gns3"
	"agentchat/internal/pcapsum"
	"agentchat/internal/tools/toolkit"
)

// ToolAnalyzeTraffic is the name of analyze_link_traffic.
const ToolAnalyzeTraffic = "analyze_link_traffic"

// Bounds of analyze_link_traffic.
const (
	defaultCaptureSeconds = 10
	maxCaptureSeconds     = 60
	// stopCaptureTimeout bounds the stop of a capture we started, run on
	// a fresh context so that an abort still stops it.
	stopCaptureTimeout = 10 * time.Second
	// analyzeTimeout is the tool's timeout: the longest read plus the
	// GNS3 requests around it.
	analyzeTimeout = 2 * time.Minute
)

// analyzeArgs are the arguments of analyze_link_traffic.
type analyzeArgs struct {
	Link       string `json:"link" jsonschema:"The link: its link_id, or its ends as node:port."`
	Seconds    *int   `json:"seconds,omitempty" jsonschema:"How long to listen, 1 to 60 seconds (default 10)."`
	MaxPackets *int   `json:"max_packets,omitempty" jsonschema:"Stop after this many packets, 1 to 5000 (default 500)."`
	Filter     string `json:"filter,omitempty" jsonschema:"Keep only some packets: a protocol (arp, ip, ipv6, icmp, icmp6, tcp, udp, ospf, bgp, stp, cdp, lldp, vlan), 'host ADDRESS' or an address, 'port N', 'vlan N', joined by and, or, not; for example 'ospf', 'arp or icmp', 'tcp port 179'."`
}

// analyzeResult is the result of analyze_link_traffic.
type analyzeResult struct {
	Link   string `json:"link"`
	LinkID string `json:"link_id,omitempty"`
	Ends   string `json:"ends,omitempty"`
	// Capture tells whose capture was read and what became of it.
	Capture string `json:"capture,omitempty"`
	// Listened is how long the tool read, in seconds.
	Listened float64          `json:"listened_seconds,omitempty"`
	Summary  *pcapsum.Summary `json:"summary,omitempty"`
	toolkit.Outcome
}

func analyzeTrafficSpec() *spec {
	sp := toolkit.Define(ToolAnalyzeTraffic,
		"Capture a link's traffic for a few seconds and sum it up: protocol counts, top conversations, and the facts that reveal "+
			"faults (ARP requests without a reply, pings without a reply and ICMP unreachables, OSPF hello/dead intervals, areas, masks "+
			"and MTUs per router with their mismatches, BGP OPEN and NOTIFICATION, spanning-tree roots and roles, CDP/LLDP neighbours, "+
			"TCP resets and retransmissions), plus the first packets. A capture the user already runs on the link is read and left running; "+
			"otherwise one is started for the call and stopped after it. Traffic only flows on links whose devices are started.",
		func(s *jsonschema.Schema) {
			toolkit.Length(s.Properties["link"], 1, maxLinkRef)
			s.Properties["link"].Description = linkRefHelp
			s.Properties["seconds"].Minimum, s.Properties["seconds"].Maximum = jsonschema.Ptr(1.0), jsonschema.Ptr(float64(maxCaptureSeconds))
			s.Properties["max_packets"].Minimum, s.Properties["max_packets"].Maximum = jsonschema.Ptr(1.0), jsonschema.Ptr(float64(pcapsum.MaxMaxPackets))
			toolkit.Length(s.Properties["filter"], 0, 200)
		}, analyzeTraffic)
	sp.Timeout = analyzeTimeout
	return sp
}

func analyzeTraffic(ctx context.Context, c *call, a analyzeArgs) toolkit.Report[analyzeResult] {
	items := []analyzeResult{{Link: a.Link}}
	it := &items[0]
	filter, err := pcapsum.ParseFilter(a.Filter)
	if err != nil {
		it.Fail(err.Error())
		return toolkit.Finish(items)
	}
	seconds, maxPackets := defaultCaptureSeconds, pcapsum.DefaultMaxPackets
	if a.Seconds != nil {
		seconds = min(max(*a.Seconds, 1), maxCaptureSeconds)
	}
	if a.MaxPackets != nil {
		maxPackets = min(max(*a.MaxPackets, 1), pcapsum.MaxMaxPackets)
	}
	l, err := c.resolveLink(ctx, a.Link)
	if err != nil {
		it.FailErr(err)
		return toolkit.Finish(items)
	}
	it.LinkID, it.Ends = l.link.LinkID, l.ends
	ours := !l.link.Capturing
	if ours {
		err := c.limit(ctx, func() error {
			_, err := c.client.StartCapture(ctx, c.Token, c.ProjectID, l.link.LinkID, gns3.CaptureOptions{DataLinkType: c.dataLinkType(ctx, &l.link)})
			return err
		})
		if err != nil {
			it.Fail("cannot start a capture on the link: " + toolkit.Describe(err))
			return toolkit.Finish(items)
		}
		it.Capture = "started for this call and stopped after it"
		defer func() {
			// A fresh context: the call's may be cancelled (an abort) or
			// out of time, and the capture must stop all the same.
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopCaptureTimeout)
			defer cancel()
			if err := c.client.StopCapture(sctx, c.Token, c.ProjectID, l.link.LinkID); err != nil {
				it.Capture = "started for this call; stopping it failed (" + toolkit.Describe(err) + "): stop it in the web UI"
				c.log.WarnContext(ctx, "capture not stopped", "tool", ToolAnalyzeTraffic, "project_id", c.ProjectID,
					"link_id", l.link.LinkID, "error", toolkit.Describe(err))
			}
		}()
	} else {
		it.Capture = "already running (the user's): read from the start of its file, and left running"
	}
	rctx, cancel := context.WithTimeout(ctx, time.Duration(seconds)*time.Second)
	defer cancel()
	began := time.Now()
	stream, err := c.client.CaptureStream(rctx, c.Token, c.ProjectID, l.link.LinkID)
	if err != nil {
		if ctx.Err() != nil {
			it.Fail("cancelled before the capture could be read")
		} else {
			it.Fail("cannot read the capture: " + toolkit.Describe(err))
		}
		return toolkit.Finish(items)
	}
	sum, err := pcapsum.Read(rctx, stream, pcapsum.Options{MaxPackets: maxPackets, Filter: filter})
	_ = stream.Close()
	it.Listened = float64(time.Since(began).Milliseconds()) / 1000
	if err != nil {
		it.Fail("cannot decode the capture: " + err.Error())
		return toolkit.Finish(items)
	}
	switch {
	case sum.Stopped != pcapsum.StopContext:
	case ctx.Err() != nil:
		sum.Stopped = "cancelled"
	default:
		sum.Stopped = "time_limit"
	}
	if sum.Stopped == pcapsum.StopEnd && ours {
		sum.Findings = append(sum.Findings, "the capture ended before the time was up (its devices stopped, or someone stopped it)")
	}
	if sum.Scanned == 0 && sum.Stopped == "time_limit" {
		sum.Findings = append(sum.Findings, "no packets in "+time.Duration(seconds*int(time.Second)).String()+": the link is idle, or its devices are not started")
	}
	it.Summary = &sum
	if ctx.Err() != nil {
		msg := "cancelled"
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			msg = "the tool ran out of time"
		}
		it.Fail(msg + "; the summary covers what was read")
		return toolkit.Finish(items)
	}
	it.Succeed()
	return toolkit.Finish(items)
}

// dataLinkType is the pcap link type to capture the link with:
// Ethernet, or for a serial link the HDLC framing Cisco uses by default
// (else the first its port lists).
func (c *call) dataLinkType(ctx context.Context, l *gns3.Link) string {
	if l.LinkType != "serial" || len(l.Nodes) == 0 {
		return gns3.DLTEthernet
	}
	nodes, err := c.nodes(ctx)
	if err != nil {
		return gns3.DLTCiscoHDLC
	}
	e := l.Nodes[0]
	for i := range nodes {
		if nodes[i].NodeID != e.NodeID {
			continue
		}
		for _, p := range nodes[i].Ports {
			if p.AdapterNumber != e.AdapterNumber || p.PortNumber != e.PortNumber || len(p.DataLinkTypes) == 0 {
				continue
			}
			var dlts []string
			for _, v := range p.DataLinkTypes {
				dlts = append(dlts, v)
			}
			slices.Sort(dlts)
			if slices.Contains(dlts, gns3.DLTCiscoHDLC) {
				return gns3.DLTCiscoHDLC
			}
			return dlts[0]
		}
	}
	return gns3.DLTCiscoHDLC
}
