package gns3

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"time"
)

// Data link types of a capture (GNS3's names, as a port's data_link_types
// lists them).
const (
	DLTEthernet  = "DLT_EN10MB"
	DLTCiscoHDLC = "DLT_C_HDLC"
)

// CaptureOptions are the body of a capture start: both optional.
type CaptureOptions struct {
	// FileName is the pcap file's name in the project's captures
	// directory ("": GNS3 names it after the link's ends).
	FileName string `json:"capture_file_name,omitempty"`
	// DataLinkType is the pcap link type ("": DLT_EN10MB, Ethernet).
	DataLinkType string `json:"data_link_type,omitempty"`
}

// StartCapture starts a packet capture on a link (POST
// /v3/projects/{p}/links/{l}/capture/start, 201) and returns the link,
// now capturing. GNS3 answers 409 when no device of the link runs.
func (c *Client) StartCapture(ctx context.Context, token, projectID, linkID string, o CaptureOptions) (*Link, error) {
	p, err := itemPath(projectID, "links", "link", linkID)
	if err != nil {
		return nil, err
	}
	var out Link
	if err := c.Do(ctx, token, http.MethodPost, p+"/capture/start", o, &out); err != nil {
		return nil, itemErr(projectID, err)
	}
	return &out, nil
}

// StopCapture stops the packet capture of a link (POST
// /v3/projects/{p}/links/{l}/capture/stop, 204).
func (c *Client) StopCapture(ctx context.Context, token, projectID, linkID string) error {
	p, err := itemPath(projectID, "links", "link", linkID)
	if err != nil {
		return err
	}
	if err := c.Do(ctx, token, http.MethodPost, p+"/capture/stop", nil, nil); err != nil {
		return itemErr(projectID, err)
	}
	return nil
}

// CaptureStream opens the pcap bytes of a link's running capture (GET
// /v3/projects/{p}/links/{l}/capture/stream): the capture file from its
// start, then its packets as they come, for as long as the capture runs.
// The caller reads what it needs and closes the stream; the request is
// bounded by ctx only (not by the client's call timeout), so ctx must
// end it. GNS3 answers 409 when the link has no capture running.
func (c *Client) CaptureStream(ctx context.Context, token, projectID, linkID string) (io.ReadCloser, error) {
	p, err := itemPath(projectID, "links", "link", linkID)
	if err != nil {
		return nil, err
	}
	path := p + "/capture/stream"
	// The stream lasts as long as the caller reads: neither the client's
	// call timeout nor http.Client.Timeout may cut it, but the answer's
	// headers must come within the call timeout.
	sctx, cancel := context.WithCancel(ctx)
	var late atomic.Bool
	if d := c.CallTimeout(); d > 0 {
		t := time.AfterFunc(d, func() { late.Store(true); cancel() })
		defer t.Stop()
	}
	req, err := http.NewRequestWithContext(sctx, http.MethodGet, c.base+path, nil)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("gns3 GET %s: %w", path, err)
	}
	req.Header.Set("Accept", "application/vnd.tcpdump.pcap")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	hc := *c.hc
	hc.Timeout = 0
	resp, err := hc.Do(req)
	if err != nil {
		cancel()
		if late.Load() {
			return nil, fmt.Errorf("gns3 GET %s: no answer in time: %w", path, context.DeadlineExceeded)
		}
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, fmt.Errorf("gns3 GET %s: %w", path, ctxErr)
		}
		if isTimeout(err) {
			return nil, fmt.Errorf("gns3 GET %s: no answer in time: %w", path, context.DeadlineExceeded)
		}
		return nil, fmt.Errorf("gns3 GET %s: %w", path, unavailable(transportReason(err)))
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		defer cancel()
		defer resp.Body.Close()
		return nil, itemErr(projectID, &StatusError{Method: http.MethodGet, Path: path, StatusCode: resp.StatusCode, Message: errorMessage(resp.Body)})
	}
	return &stream{ReadCloser: resp.Body, cancel: cancel}, nil
}

// stream is a capture stream's body; closing it ends its request.
type stream struct {
	io.ReadCloser
	cancel context.CancelFunc
}

// Close closes the body and ends the request.
func (s *stream) Close() error {
	err := s.ReadCloser.Close()
	s.cancel()
	return err
}
