package gateway_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"testing"
	"time"
)

// firstToken posts a streaming completion and returns the time until the
// first non-empty content delta arrived; the rest of the stream is read
// (untimed) so that the connection is reused.
func firstToken(b *testing.B, hc *http.Client, url, authz string, body []byte) time.Duration {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if authz != "" {
		req.Header.Set("Authorization", authz)
	}
	start := time.Now()
	resp, err := hc.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(resp.Body)
		b.Fatalf("%s: %d %s", url, resp.StatusCode, msg)
	}
	br := bufio.NewReader(resp.Body)
	var chunk struct {
		Choices []struct {
			Delta struct {
				Content string `json:"content"`
			} `json:"delta"`
		} `json:"choices"`
	}
	var ttft time.Duration
	for ttft == 0 {
		line, err := br.ReadBytes('\n')
		if err != nil {
			b.Fatalf("%s: stream ended before a token: %v", url, err)
		}
		data, ok := bytes.CutPrefix(line, []byte("data: "))
		if !ok || bytes.HasPrefix(data, []byte("[DONE]")) {
			continue
		}
		chunk.Choices = chunk.Choices[:0]
		if err := json.Unmarshal(data, &chunk); err != nil {
			b.Fatalf("%s: chunk %q: %v", url, data, err)
		}
		if len(chunk.Choices) > 0 && chunk.Choices[0].Delta.Content != "" {
			ttft = time.Since(start)
		}
	}
	if _, err := io.Copy(io.Discard, br); err != nil {
		b.Fatal(err)
	}
	return ttft
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkCompletionsOverhead measures the time to first token of a
// streamed /v1/chat/completions (stateless path, naked agent, JWT auth,
// real router and SQLite-backed server) against the same request sent
// straight to the scripted LLM, alternating the two. It reports both
// medians and their difference, the gateway's added time to first token
// (target ≤ 500 µs).
func BenchmarkCompletionsOverhead(b *testing.B) {
	e := newEnv(b, envOptions{})
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	msgs := `"messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Say hello to the benchmark."}]`
	direct := []byte(`{"model":"test-model","stream":true,` + msgs + `}`)
	viaGateway := []byte(`{"model":"naked","stream":true,` + msgs + `}`)
	authz := e.bearer()
	llmURL := e.llm.BaseURL() + "/chat/completions"
	gwURL := e.base + "/chat/completions"
	// Warm up both paths (connections, first-use allocations).
	for range 20 {
		firstToken(b, hc, llmURL, "", direct)
		firstToken(b, hc, gwURL, authz, viaGateway)
	}
	var d, g []time.Duration
	for b.Loop() {
		d = append(d, firstToken(b, hc, llmURL, "", direct))
		g = append(g, firstToken(b, hc, gwURL, authz, viaGateway))
	}
	b.StopTimer()
	md, mg := median(d), median(g)
	b.ReportMetric(float64(md.Microseconds()), "ttft-direct-µs")
	b.ReportMetric(float64(mg.Microseconds()), "ttft-gateway-µs")
	b.ReportMetric(float64((mg - md).Microseconds()), "ttft-added-µs")
}
