// Package lambdatest drives agentchat's Lambda functions in tests the way
// AWS does: API Gateway HTTP API (payload 2.0) and function URL events
// shaped like the real ones, the response-streaming wire format (a JSON
// prelude, 8 NUL bytes, then the body as written), a fake of the Lambda
// Runtime API for built bootstrap binaries, a fake of SSM Parameter Store,
// dynalite for DynamoDB, and the build of the bootstraps.
package lambdatest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

// Account and region of the fake events.
const (
	AccountID = "123456789012"
	Region    = "us-east-1"
)

// APIRequest returns the API Gateway HTTP API event (payload format 2.0)
// of a request matched by route ("GET /v3/projects/{project_id}/chat/sessions")
// to target (the path and query actually requested), as API Gateway sends
// it: the route key, lower-case header names (multi-value headers joined by
// commas), the path parameters and the query parameters, after a JSON round
// trip like the one the Lambda runtime makes.
func APIRequest(route, target string, header map[string]string, body string) (events.APIGatewayV2HTTPRequest, error) {
	method, pattern, ok := strings.Cut(route, " ")
	if !ok {
		return events.APIGatewayV2HTTPRequest{}, fmt.Errorf("route %q is not \"METHOD /path\"", route)
	}
	path, rawQuery, _ := strings.Cut(target, "?")
	params, err := PathParameters(pattern, path)
	if err != nil {
		return events.APIGatewayV2HTTPRequest{}, err
	}
	query, err := queryParameters(rawQuery)
	if err != nil {
		return events.APIGatewayV2HTTPRequest{}, err
	}
	now := time.Now().UTC()
	ev := events.APIGatewayV2HTTPRequest{
		Version:               "2.0",
		RouteKey:              route,
		RawPath:               path,
		RawQueryString:        rawQuery,
		Headers:               lowerHeaders(header, len(body)),
		QueryStringParameters: query,
		PathParameters:        params,
		Body:                  body,
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			RouteKey:     route,
			AccountID:    AccountID,
			Stage:        "$default",
			RequestID:    fmt.Sprintf("req-%d", now.UnixNano()),
			APIID:        "a1b2c3d4e5",
			DomainName:   "a1b2c3d4e5.execute-api." + Region + ".amazonaws.com",
			DomainPrefix: "a1b2c3d4e5",
			Time:         now.Format("02/Jan/2006:15:04:05 -0700"),
			TimeEpoch:    now.UnixMilli(),
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{
				Method: method, Path: path, Protocol: "HTTP/1.1", SourceIP: "203.0.113.7", UserAgent: "lambdatest",
			},
		},
	}
	return roundTrip(ev)
}

// FunctionURLRequest returns the function URL event of a request to target
// (path and query), as Lambda sends it, after a JSON round trip.
func FunctionURLRequest(method, target string, header map[string]string, body string) (*events.LambdaFunctionURLRequest, error) {
	path, rawQuery, _ := strings.Cut(target, "?")
	query, err := queryParameters(rawQuery)
	if err != nil {
		return nil, err
	}
	now := time.Now().UTC()
	ev := events.LambdaFunctionURLRequest{
		Version:               "2.0",
		RawPath:               path,
		RawQueryString:        rawQuery,
		Headers:               lowerHeaders(header, len(body)),
		QueryStringParameters: query,
		Body:                  body,
		RequestContext: events.LambdaFunctionURLRequestContext{
			AccountID:    "anonymous",
			RequestID:    fmt.Sprintf("req-%d", now.UnixNano()),
			APIID:        "f6g7h8i9j0",
			DomainName:   "f6g7h8i9j0.lambda-url." + Region + ".on.aws",
			DomainPrefix: "f6g7h8i9j0",
			Time:         now.Format("02/Jan/2006:15:04:05 -0700"),
			TimeEpoch:    now.UnixMilli(),
			HTTP: events.LambdaFunctionURLRequestContextHTTPDescription{
				Method: method, Path: path, Protocol: "HTTP/1.1", SourceIP: "203.0.113.7", UserAgent: "lambdatest",
			},
		},
	}
	out, err := roundTrip(ev)
	return &out, err
}

// PathParameters matches path against a ServeMux-style pattern
// ("/v3/projects/{project_id}/chat") and returns the named segments.
func PathParameters(pattern, path string) (map[string]string, error) {
	ps := strings.Split(strings.TrimSuffix(pattern, "{$}"), "/")
	xs := strings.Split(path, "/")
	if len(ps) != len(xs) {
		return nil, fmt.Errorf("path %q does not match %q", path, pattern)
	}
	var params map[string]string
	for i, p := range ps {
		if name, ok := strings.CutPrefix(p, "{"); ok && strings.HasSuffix(name, "}") {
			if params == nil {
				params = map[string]string{}
			}
			params[strings.TrimSuffix(name, "}")] = xs[i]
			continue
		}
		if p != xs[i] {
			return nil, fmt.Errorf("path %q does not match %q", path, pattern)
		}
	}
	return params, nil
}

func queryParameters(raw string) (map[string]string, error) {
	if raw == "" {
		return nil, nil
	}
	v, err := url.ParseQuery(raw)
	if err != nil {
		return nil, fmt.Errorf("query %q: %w", raw, err)
	}
	out := make(map[string]string, len(v))
	for k, vs := range v {
		out[k] = strings.Join(vs, ",")
	}
	return out, nil
}

// lowerHeaders returns header with lower-case names, and content-length
// and host as the services add them.
func lowerHeaders(header map[string]string, bodyLen int) map[string]string {
	out := map[string]string{"user-agent": "lambdatest", "x-forwarded-proto": "https", "x-forwarded-for": "203.0.113.7"}
	if bodyLen > 0 {
		out["content-length"] = fmt.Sprint(bodyLen)
	}
	for k, v := range header {
		out[strings.ToLower(k)] = v
	}
	return out
}

func roundTrip[T any](v T) (T, error) {
	var out T
	b, err := json.Marshal(v)
	if err != nil {
		return out, fmt.Errorf("encode event: %w", err)
	}
	if err := json.Unmarshal(b, &out); err != nil {
		return out, fmt.Errorf("decode event: %w", err)
	}
	return out, nil
}

// Prelude is the head of a streamed function URL response.
type Prelude struct {
	StatusCode int               `json:"statusCode"`
	Headers    map[string]string `json:"headers"`
	Cookies    []string          `json:"cookies"`
}

// preludeEnd separates the prelude from the body.
var preludeEnd = make([]byte, 8)

// ReadPrelude reads the prelude of a streamed function URL response
// (application/vnd.awslambda.http-integration-response: JSON, then 8 NUL
// bytes) from r and returns it with the reader of the body that follows.
func ReadPrelude(r io.Reader) (Prelude, *bufio.Reader, error) {
	br := bufio.NewReader(r)
	var head []byte
	for !bytes.HasSuffix(head, preludeEnd) {
		c, err := br.ReadByte()
		if err != nil {
			return Prelude{}, nil, fmt.Errorf("read prelude (%q so far): %w", head, err)
		}
		head = append(head, c)
		if len(head) > 64<<10 {
			return Prelude{}, nil, errors.New("no prelude end (8 NUL bytes) in the first 64 KiB")
		}
	}
	var p Prelude
	if err := json.Unmarshal(head[:len(head)-len(preludeEnd)], &p); err != nil {
		return Prelude{}, nil, fmt.Errorf("decode prelude %q: %w", head, err)
	}
	return p, br, nil
}

// SplitPrelude splits a whole streamed response into its prelude and body.
func SplitPrelude(b []byte) (Prelude, []byte, error) {
	i := bytes.Index(b, preludeEnd)
	if i < 0 {
		return Prelude{}, nil, fmt.Errorf("no prelude end (8 NUL bytes) in %q", truncate(b, 200))
	}
	var p Prelude
	if err := json.Unmarshal(b[:i], &p); err != nil {
		return Prelude{}, nil, fmt.Errorf("decode prelude %q: %w", b[:i], err)
	}
	return p, b[i+len(preludeEnd):], nil
}

func truncate(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}

// Copilot returns the /v3/copilot/projects alias of a project route
// ("GET /v3/projects/..." → "GET /v3/copilot/projects/...").
func Copilot(route string) string {
	return strings.Replace(route, " /v3/projects/", " /v3/copilot/projects/", 1)
}

// SSEData returns the data payloads of an SSE body, in order (a payload
// spread over several data lines is returned line by line).
func SSEData(body []byte) []string {
	var out []string
	for _, line := range strings.Split(string(body), "\n") {
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			out = append(out, d)
		}
	}
	return out
}

// DeltaContent returns choices[0].delta.content of an OpenAI chat
// completion chunk (the payload of one data line), "" for anything else.
func DeltaContent(payload string) string {
	var chunk struct {
		Choices []struct {
			Delta struct {
				Content string `json:"content"`
			} `json:"delta"`
		} `json:"choices"`
	}
	if json.Unmarshal([]byte(payload), &chunk) != nil || len(chunk.Choices) == 0 {
		return ""
	}
	return chunk.Choices[0].Delta.Content
}
