package gns3_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"agentchat/internal/gns3"
	"agentchat/internal/gns3/gns3test"
)

func TestLinkFilters(t *testing.T) {
	l := newLab(t)
	ctx := context.Background()
	lid := l.topo.Links[0] // PC1 (vpcs) - Switch1
	fs, err := l.c.AvailableFilters(ctx, tokAlice, l.pid, lid)
	if err != nil || len(fs) != 5 || fs[2].Type != "delay" || len(fs[2].Parameters) != 2 || *fs[2].Parameters[1].Maximum != 32767 || fs[0].Parameters[0].Minimum == nil || *fs[0].Parameters[0].Minimum != -1 {
		t.Fatalf("available filters %+v, %v", fs, err)
	}
	got, err := l.c.UpdateLink(ctx, tokAlice, l.pid, lid, map[string]any{
		"filters":           map[string]any{"delay": []int{100, 10}, "packet_loss": []int{0}, "bpf": []string{"icmp\n"}},
		"show_filters_icon": false,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Filters) != 2 || got.Filters["bpf"].([]any)[0] != "icmp" || got.ShowFiltersIcon == nil || *got.ShowFiltersIcon {
		t.Errorf("updated link %+v", got)
	}
	if back, err := l.c.GetLink(ctx, tokAlice, l.pid, lid); err != nil || len(back.Filters) != 2 {
		t.Errorf("get link %+v, %v", back, err)
	}
	if _, err := l.c.GetLink(ctx, tokAlice, l.pid, missingID); err == nil {
		t.Error("missing link read")
	} else {
		wantStatus(t, err, http.StatusNotFound, "Link ID "+missingID+" doesn't exist", false)
	}
	l.fake.SetRequestAuthorizer(gns3test.DenyPrivileges("Link.Modify"))
	_, err = l.c.UpdateLink(ctx, tokAlice, l.pid, lid, map[string]any{"filters": map[string]any{}})
	wantStatus(t, err, http.StatusForbidden, "privilege Link.Modify is required", false)
	if _, err := l.c.UpdateLink(ctx, tokAlice, l.pid, "not-a-uuid", nil); err == nil || l.fake.Hits("PUT /v3/projects/"+l.pid+"/links/not-a-uuid") != 0 {
		t.Errorf("invalid id: %v", err)
	}
}

func TestCapture(t *testing.T) {
	l := newLab(t)
	ctx := context.Background()
	lid := l.topo.Links[0]
	l.fake.SetCaptureSource(lid, func() io.Reader { return bytes.NewReader([]byte("pcap-bytes")) })
	if _, err := l.c.CaptureStream(ctx, tokAlice, l.pid, lid); err == nil {
		t.Fatal("stream without a capture")
	} else {
		wantStatus(t, err, http.StatusConflict, "This link has no active packet capture", false)
	}
	link, err := l.c.StartCapture(ctx, tokAlice, l.pid, lid, gns3.CaptureOptions{DataLinkType: gns3.DLTEthernet})
	if err != nil || !link.Capturing || link.CaptureFileName != "PC1_0-0_to_Switch1_0-0.pcap" {
		t.Fatalf("start %+v, %v", link, err)
	}
	_, err = l.c.StartCapture(ctx, tokAlice, l.pid, lid, gns3.CaptureOptions{})
	wantStatus(t, err, http.StatusConflict, "already activated", false)

	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	rc, err := l.c.CaptureStream(sctx, tokAlice, l.pid, lid)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 10)
	if _, err := io.ReadFull(rc, buf); err != nil || string(buf) != "pcap-bytes" {
		t.Fatalf("read %q, %v", buf, err)
	}
	if err := l.c.StopCapture(ctx, tokAlice, l.pid, lid); err != nil {
		t.Fatal(err)
	}
	// The stream ends once the capture stops, as GNS3's does.
	if rest, err := io.ReadAll(rc); err != nil || len(rest) != 0 {
		t.Errorf("after stop: %q, %v", rest, err)
	}
	rc.Close()
	if l.fake.Link(l.pid, lid)["capturing"] != false {
		t.Error("still capturing")
	}
	// A link of stopped devices cannot be captured.
	r1 := l.topo.Nodes["R1"]
	pc2 := l.topo.Nodes["PC2"]
	dead := l.fake.AddLink(l.pid, gns3test.LinkPayload(l.pid, r1, 0, 1, "gi0/1", pc2, 0, 0, "e0"))
	_, err = l.c.StartCapture(ctx, tokAlice, l.pid, dead, gns3.CaptureOptions{})
	wantStatus(t, err, http.StatusConflict, "Cannot capture because there is no running device on this link", false)
}

// TestCaptureStreamNotCutByClientTimeout: a stream outlives the
// http.Client's Timeout and the call timeout; only its context ends it.
func TestCaptureStreamNotCutByClientTimeout(t *testing.T) {
	l := newLab(t)
	c, err := gns3.New(l.fake.URL, &http.Client{Timeout: 50 * time.Millisecond}, gns3.WithCallTimeout(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	lid := l.topo.Links[0]
	if _, err := c.StartCapture(ctx, tokAlice, l.pid, lid, gns3.CaptureOptions{}); err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	t.Cleanup(func() { pw.Close() })
	l.fake.SetCaptureSource(lid, func() io.Reader { return pr })
	sctx, cancel := context.WithCancel(ctx)
	rc, err := c.CaptureStream(sctx, tokAlice, l.pid, lid)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		_, _ = pw.Write([]byte("a"))
		time.Sleep(200 * time.Millisecond) // longer than both timeouts
		_, _ = pw.Write([]byte("b"))
	}()
	buf := make([]byte, 2)
	if _, err := io.ReadFull(rc, buf); err != nil || string(buf) != "ab" {
		t.Fatalf("read %q, %v", buf, err)
	}
	cancel()
	if _, err := io.ReadAll(rc); err == nil {
		t.Error("stream still readable after its context ended")
	}
	rc.Close()
	pw.Close()
}
