package toolkit

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// echoArgs are the arguments of the DefineFunc sample.
type echoArgs struct {
	Word string `json:"word" jsonschema:"The word to echo."`
}

// echoAnswer is the answer of the DefineFunc sample: its own shape.
type echoAnswer struct {
	Echo string `json:"echo"`
}

var errEcho = errors.New("cannot echo <that>")

func echoDef() *Def[*env] {
	return DefineFunc("echo", "Echoes a word.", func(s *jsonschema.Schema) { NonEmpty(s, "word") },
		func(_ context.Context, e *env, a echoArgs) (echoAnswer, error) {
			if a.Word == "fail" {
				return echoAnswer{}, errEcho
			}
			return echoAnswer{Echo: a.Word + " " + e.calls[0].Tool}, nil
		})
}

// TestDefineFunc runs a tool with an answer of its own through Set.Tools.
func TestDefineFunc(t *testing.T) {
	errOff := errors.New("echo is not configured")
	tests := []struct {
		name          string
		configured    bool
		notConfigured error
		args          string
		want          string
		wantErr       error
		wantErrText   string
	}{
		{name: "answer", configured: true, args: `{"word":"hi"}`, want: `{"echo":"hi echo"}`},
		{name: "html kept", configured: true, args: `{"word":"<b>"}`, want: `{"echo":"<b> echo"}`},
		{name: "error", configured: true, args: `{"word":"fail"}`, wantErr: errEcho},
		{name: "invalid", configured: true, args: `{"word":""}`, wantErrText: "invalid arguments: word: minLength: \"\" contains 0 Unicode code points, fewer than 1"},
		{name: "project_id refused", configured: true, args: `{"word":"hi","project_id":"x"}`, wantErrText: `invalid arguments: unexpected additional properties ["project_id"]`},
		{name: "not configured", notConfigured: errOff, args: `{"word":"hi"}`, wantErr: errOff},
		{name: "GNS3 by default", args: `{"word":"hi"}`, wantErr: ErrNotConfigured},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &Set[*env]{
				Defs:          []*Def[*env]{echoDef()},
				Configured:    tt.configured,
				NotConfigured: tt.notConfigured,
				Begin:         func(_ context.Context, c Call) *env { return &env{calls: []Call{c}} },
			}
			tools := s.Tools()
			if len(tools) != 1 || tools[0].Name != "echo" || tools[0].Description != "Echoes a word." {
				t.Fatalf("tools %+v", tools)
			}
			out, err := tools[0].Run(context.Background(), json.RawMessage(tt.args))
			switch {
			case tt.wantErr != nil:
				if !errors.Is(err, tt.wantErr) || out != "" {
					t.Fatalf("out %q, err %v; want error %v", out, err, tt.wantErr)
				}
			case tt.wantErrText != "":
				if err == nil || err.Error() != tt.wantErrText {
					t.Fatalf("err %v, want %s", err, tt.wantErrText)
				}
			case err != nil || out != tt.want:
				t.Fatalf("out %q, err %v; want %s", out, err, tt.want)
			}
		})
	}
}

// TestSetTools checks that Tools gives every tool, Global or not, without
// a project_id.
func TestSetTools(t *testing.T) {
	global := echoDef()
	global.Global = true
	s := &Set[*env]{Defs: []*Def[*env]{sampleDef(), global}}
	tools := s.Tools()
	if len(tools) != 2 {
		t.Fatalf("%d tools, want 2", len(tools))
	}
	for i, d := range s.Defs {
		if string(tools[i].Parameters) != string(d.Args(false).JSON()) {
			t.Errorf("%s: parameters %s, want the project-chat form", d.Name, tools[i].Parameters)
		}
	}
}
