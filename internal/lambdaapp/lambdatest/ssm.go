package lambdatest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
)

// SSM is a fake of SSM Parameter Store's GetParameters (the AWS JSON 1.1
// protocol the SDK speaks) over SecureString parameters.
type SSM struct {
	// URL is the endpoint (AWS_ENDPOINT_URL_SSM).
	URL string

	mu     sync.Mutex
	params map[string]string
	calls  []GetParametersCall
}

// GetParametersCall is one recorded GetParameters request.
type GetParametersCall struct {
	Names          []string
	WithDecryption bool
}

// NewSSM starts a fake holding params (name → value), closed in t.Cleanup.
func NewSSM(t testing.TB, params map[string]string) *SSM {
	t.Helper()
	s := &SSM{params: params}
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

// Client returns an SSM client of the fake with dummy credentials.
func (s *SSM) Client() *ssm.Client {
	return ssm.New(ssm.Options{
		BaseEndpoint: aws.String(s.URL),
		Region:       Region,
		Credentials:  credentials.NewStaticCredentialsProvider("lambdatest", "lambdatest", ""),
	})
}

// Calls returns the recorded GetParameters requests.
func (s *SSM) Calls() []GetParametersCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]GetParametersCall(nil), s.calls...)
}

type ssmParameter struct {
	Name     string `json:"Name"`
	Type     string `json:"Type"`
	Value    string `json:"Value"`
	Version  int    `json:"Version"`
	Selector string `json:"Selector,omitempty"`
	ARN      string `json:"ARN"`
	DataType string `json:"DataType"`
}

func (s *SSM) serve(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	if r.Method != http.MethodPost || r.Header.Get("X-Amz-Target") != "AmazonSSM.GetParameters" {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"__type":"UnknownOperationException","message":"fake SSM serves GetParameters only, not %s"}`, r.Header.Get("X-Amz-Target"))
		return
	}
	if !strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 ") {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"__type":"MissingAuthenticationTokenException","message":"request is not signed"}`)
		return
	}
	var in struct {
		Names          []string `json:"Names"`
		WithDecryption bool     `json:"WithDecryption"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"__type":"ValidationException","message":%q}`, err.Error())
		return
	}
	s.mu.Lock()
	s.calls = append(s.calls, GetParametersCall{Names: in.Names, WithDecryption: in.WithDecryption})
	s.mu.Unlock()
	out := struct {
		Parameters        []ssmParameter `json:"Parameters"`
		InvalidParameters []string       `json:"InvalidParameters"`
	}{Parameters: []ssmParameter{}, InvalidParameters: []string{}}
	for _, requested := range in.Names {
		name, selector, _ := strings.Cut(requested, ":")
		if strings.HasPrefix(requested, "arn:") {
			name, selector = requested[strings.Index(requested, ":parameter/")+len(":parameter"):], ""
		}
		v, ok := s.params[name]
		if !ok || (selector != "" && selector != "1") {
			out.InvalidParameters = append(out.InvalidParameters, requested)
			continue
		}
		if !in.WithDecryption {
			v = "AQICAHencrypted" // SecureString values come back encrypted without WithDecryption
		}
		p := ssmParameter{Name: name, Type: "SecureString", Value: v, Version: 1,
			ARN: "arn:aws:ssm:" + Region + ":" + AccountID + ":parameter/" + strings.TrimPrefix(name, "/"), DataType: "text"}
		if selector != "" {
			p.Selector = ":" + selector
		}
		out.Parameters = append(out.Parameters, p)
	}
	_ = json.NewEncoder(w).Encode(out)
}
