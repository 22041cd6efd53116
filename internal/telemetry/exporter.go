package telemetry

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// DefaultExportTimeout bounds one export when OTEL_EXPORTER_OTLP_TIMEOUT
// names none (the specification's 10 s).
const DefaultExportTimeout = 10 * time.Second

// maxResponseBytes is how much of a collector's answer is read: the answer
// is discarded, and a misbehaving endpoint cannot make us buffer more.
const maxResponseBytes = 64 << 10

// maxExportAttempts bounds the sends of one batch, besides the export's
// context.
const maxExportAttempts = 5

// exporterConfig is the OTLP/HTTP trace export the OTEL_EXPORTER_OTLP_*
// variables describe.
type exporterConfig struct {
	endpoint string
	headers  http.Header
	timeout  time.Duration
	gzip     bool
	tls      *tls.Config
}

// otlpEnv returns the trace-specific variable OTEL_EXPORTER_OTLP_TRACES_x
// when set, else OTEL_EXPORTER_OTLP_x.
func otlpEnv(getenv func(string) string, x string) string {
	if v := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_" + x)); v != "" {
		return v
	}
	return strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_" + x))
}

// exporterConfigFromEnv reads the standard variables: the endpoint
// (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as it is, or
// OTEL_EXPORTER_OTLP_ENDPOINT with /v1/traces appended), HEADERS
// (k=v,k2=v2, values percent-decoded), TIMEOUT (milliseconds), COMPRESSION
// (gzip or none), CERTIFICATE (a PEM file of trusted CAs), PROTOCOL (only
// http/protobuf).
func exporterConfigFromEnv(getenv func(string) string) (exporterConfig, error) {
	cfg := exporterConfig{headers: http.Header{}, timeout: DefaultExportTimeout}
	if p := otlpEnv(getenv, "PROTOCOL"); p != "" && p != "http/protobuf" {
		return cfg, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL %q is not supported: agentchat exports traces over http/protobuf", p)
	}
	if ep := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")); ep != "" {
		cfg.endpoint = ep
	} else {
		cfg.endpoint = strings.TrimRight(strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_ENDPOINT")), "/") + "/v1/traces"
	}
	u, err := url.Parse(cfg.endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return cfg, errors.New("OTLP traces endpoint must be an http:// or https:// URL")
	}
	if h := otlpEnv(getenv, "HEADERS"); h != "" {
		for pair := range strings.SplitSeq(h, ",") {
			k, v, ok := strings.Cut(pair, "=")
			k = strings.TrimSpace(k)
			if !ok || k == "" {
				return cfg, errors.New("OTEL_EXPORTER_OTLP_HEADERS: each entry must be key=value")
			}
			dv, err := url.PathUnescape(strings.TrimSpace(v))
			if err != nil {
				return cfg, fmt.Errorf("OTEL_EXPORTER_OTLP_HEADERS: value of %s is not percent-encoded", k)
			}
			cfg.headers.Add(k, dv)
		}
	}
	if t := otlpEnv(getenv, "TIMEOUT"); t != "" {
		ms, err := strconv.Atoi(t)
		if err != nil || ms <= 0 {
			return cfg, fmt.Errorf("OTEL_EXPORTER_OTLP_TIMEOUT %q: want a positive number of milliseconds", t)
		}
		cfg.timeout = time.Duration(ms) * time.Millisecond
	}
	switch c := otlpEnv(getenv, "COMPRESSION"); c {
	case "", "none":
	case "gzip":
		cfg.gzip = true
	default:
		return cfg, fmt.Errorf("OTEL_EXPORTER_OTLP_COMPRESSION %q: want gzip or none", c)
	}
	if ca := otlpEnv(getenv, "CERTIFICATE"); ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return cfg, fmt.Errorf("OTEL_EXPORTER_OTLP_CERTIFICATE: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return cfg, errors.New("OTEL_EXPORTER_OTLP_CERTIFICATE holds no PEM certificate")
		}
		cfg.tls = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	return cfg, nil
}

// exporter sends spans to an OTLP/HTTP collector as protobuf, retrying the
// answers the specification calls retryable (429, 502, 503, 504) with the
// collector's Retry-After or an exponential backoff, within the export's
// context. It implements sdktrace.SpanExporter.
type exporter struct {
	cfg    exporterConfig
	client *http.Client

	mu     sync.Mutex
	closed bool
}

var _ sdktrace.SpanExporter = (*exporter)(nil)

func newExporter(cfg exporterConfig) *exporter {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if cfg.tls != nil {
		tr.TLSClientConfig = cfg.tls
	}
	return &exporter{cfg: cfg, client: &http.Client{
		Transport: tr,
		// The collector is the operator's; a redirect is a misconfiguration,
		// not a place to send spans to.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// ExportSpans sends spans in one request (retried when retryable).
func (e *exporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	e.mu.Lock()
	closed := e.closed
	e.mu.Unlock()
	if closed || len(spans) == 0 {
		return nil
	}
	body := encodeTraces(spans)
	if e.cfg.gzip {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		if _, err := zw.Write(body); err != nil {
			return fmt.Errorf("otlp export: gzip: %w", err)
		}
		if err := zw.Close(); err != nil {
			return fmt.Errorf("otlp export: gzip: %w", err)
		}
		body = buf.Bytes()
	}
	backoff := 100 * time.Millisecond
	for attempt := 1; ; attempt++ {
		retryAfter, err := e.post(ctx, body)
		if err == nil {
			return nil
		}
		var re retryableError
		if !errors.As(err, &re) || attempt == maxExportAttempts {
			return err
		}
		wait := backoff
		if retryAfter > 0 {
			wait = retryAfter
		}
		backoff = min(backoff*2, 5*time.Second)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("otlp export: %w (last: %w)", ctx.Err(), err)
		case <-t.C:
		}
	}
}

// retryableError is an answer worth sending again.
type retryableError struct{ status int }

func (r retryableError) Error() string {
	return "otlp export: collector answered " + strconv.Itoa(r.status) + " " + http.StatusText(r.status)
}

// post sends body once; it returns the Retry-After of a retryable answer.
func (e *exporter) post(ctx context.Context, body []byte) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, e.cfg.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.cfg.endpoint, bytes.NewReader(body))
	if err != nil {
		return 0, fmt.Errorf("otlp export: %w", err)
	}
	for k, vs := range e.cfg.headers {
		req.Header[k] = vs
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	if e.cfg.gzip {
		req.Header.Set("Content-Encoding", "gzip")
	}
	resp, err := e.client.Do(req)
	if err != nil {
		// A transport error is retried like an unavailable collector.
		if ctx.Err() == nil {
			return 0, retryableError{status: http.StatusServiceUnavailable}
		}
		return 0, fmt.Errorf("otlp export: %w", ctx.Err())
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxResponseBytes))
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return 0, nil
	case resp.StatusCode == http.StatusTooManyRequests, resp.StatusCode == http.StatusBadGateway,
		resp.StatusCode == http.StatusServiceUnavailable, resp.StatusCode == http.StatusGatewayTimeout:
		var after time.Duration
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
			after = time.Duration(s) * time.Second
		}
		return after, retryableError{status: resp.StatusCode}
	}
	return 0, fmt.Errorf("otlp export: collector answered %d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
}

// Shutdown stops exporting; later exports do nothing.
func (e *exporter) Shutdown(ctx context.Context) error {
	e.mu.Lock()
	e.closed = true
	e.mu.Unlock()
	e.client.CloseIdleConnections()
	return ctx.Err()
}
