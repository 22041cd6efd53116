package llm

//lint:file-ignore SA1019 go-openai's deprecated fields and models are part of what is compared

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	openai "github.com/sashabaranov/go-openai"
	"github.com/sashabaranov/go-openai/jsonschema"
)

// decodeJSON decodes b into any, numbers kept as their text.
func decodeJSON(t *testing.T, b []byte) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	if d.More() {
		t.Fatalf("trailing data after %s", b)
	}
	return v
}

// sameAsMarshal checks that marshalChatRequest gives what json.Marshal
// gives for r: the same JSON value, or the same error. It reports whether
// the hand encoder (not the fallback) wrote it.
func sameAsMarshal(t *testing.T, r *openai.ChatCompletionRequest) bool {
	t.Helper()
	want, wantErr := json.Marshal(r)
	got, gotErr := marshalChatRequest(r, nil)
	_, hand := appendChatRequest(nil, r, nil)
	if wantErr != nil || gotErr != nil {
		if wantErr == nil || gotErr == nil || gotErr.Error() != wantErr.Error() {
			t.Fatalf("error %v, json.Marshal's %v", gotErr, wantErr)
		}
		if hand {
			t.Fatalf("the hand encoder accepted a request json.Marshal refuses (%v)", wantErr)
		}
		return false
	}
	if !json.Valid(got) {
		t.Fatalf("invalid JSON %q", got)
	}
	if utf8.Valid(want) && !utf8.Valid(got) {
		t.Fatalf("invalid UTF-8 in %q", got)
	}
	if g, w := decodeJSON(t, got), decodeJSON(t, want); !reflect.DeepEqual(g, w) {
		t.Fatalf("encoded\n%s\njson.Marshal\n%s", got, want)
	}
	return hand
}

// toolsFixture are tool declarations as the agent and the gateway build them.
func toolsFixture() []openai.Tool {
	return []openai.Tool{
		{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: "run_command",
			Description: "Runs <cmd> & returns \"output\"",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"cmd":{"type":"string","pattern":"^<a>&$"}},"required":["cmd"]}`)}},
		{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: "spaced", Strict: true,
			Parameters: json.RawMessage(" {\n  \"type\" : \"object\",\n  \"properties\" : { }\n} ")}},
		{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: "no_params"}},
		{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: "nil_raw", Parameters: json.RawMessage(nil)}},
	}
}

func TestEncoderMatchesJSONMarshal(t *testing.T) {
	user := func(s string) []openai.ChatCompletionMessage {
		return []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: s}}
	}
	idx := 2
	tests := []struct {
		name string
		req  openai.ChatCompletionRequest
		// fallback: json.Marshal writes it (or refuses it), not the hand encoder.
		fallback bool
	}{
		{"minimal", openai.ChatCompletionRequest{Model: "m", Messages: user("hi")}, false},
		{"stream with usage", openai.ChatCompletionRequest{Model: "m", Messages: user("hi"), Stream: true,
			StreamOptions: &openai.StreamOptions{IncludeUsage: true}}, false},
		{"stream options without usage", openai.ChatCompletionRequest{Model: "m", Messages: user("hi"),
			StreamOptions: &openai.StreamOptions{}}, false},
		{"nil messages", openai.ChatCompletionRequest{Model: "m"}, false},
		{"empty messages", openai.ChatCompletionRequest{Model: "m", Messages: []openai.ChatCompletionMessage{}}, false},
		{"empty model and role", openai.ChatCompletionRequest{Messages: []openai.ChatCompletionMessage{{}}}, false},
		{"every message field", openai.ChatCompletionRequest{Model: "m", Messages: []openai.ChatCompletionMessage{
			{Role: "system", Content: "sys", Name: "n"},
			{Role: "assistant", Content: "c", Refusal: "no", ReasoningContent: "thinking…",
				FunctionCall: &openai.FunctionCall{Name: "f", Arguments: `{"a":1}`},
				ToolCalls: []openai.ToolCall{
					{ID: "call_1", Type: openai.ToolTypeFunction, Function: openai.FunctionCall{Name: "f", Arguments: `{"x":"<y>"}`}},
					{Index: &idx, Type: "", Function: openai.FunctionCall{}},
				}},
			{Role: "tool", ToolCallID: "call_1", Content: `{"ok":true}`},
			{Role: "assistant", FunctionCall: &openai.FunctionCall{}},
		}}, false},
		{"multi content", openai.ChatCompletionRequest{Model: "m", Messages: []openai.ChatCompletionMessage{
			{Role: "user", MultiContent: []openai.ChatMessagePart{
				{Type: openai.ChatMessagePartTypeText, Text: "look"},
				{Type: openai.ChatMessagePartTypeImageURL, ImageURL: &openai.ChatMessageImageURL{URL: "https://x/y.png?a=1&b=<2>", Detail: openai.ImageURLDetailLow}},
				{Type: openai.ChatMessagePartTypeImageURL, ImageURL: &openai.ChatMessageImageURL{}},
				{},
			}, Name: "u"},
		}}, false},
		{"empty multi content with no text", openai.ChatCompletionRequest{Model: "m", Messages: []openai.ChatCompletionMessage{
			{Role: "user", MultiContent: []openai.ChatMessagePart{}}}}, false},
		{"content and multi content", openai.ChatCompletionRequest{Model: "m", Messages: []openai.ChatCompletionMessage{
			{Role: "user", Content: "x", MultiContent: []openai.ChatMessagePart{{Text: "y"}}}}}, true},
		{"content and empty multi content", openai.ChatCompletionRequest{Model: "m", Messages: []openai.ChatCompletionMessage{
			{Role: "user", Content: "x", MultiContent: []openai.ChatMessagePart{}}}}, true},
		{"unicode", openai.ChatCompletionRequest{Model: "modèle", Messages: user("café 你好 😀 \u2028 \u2029 \u00a0 \ufeff")}, false},
		{"control characters", openai.ChatCompletionRequest{Model: "m", Messages: user("\x00\x01\x07\b\f\n\r\t\x1f\x7f \"q\" \\ / <script>&amp;</script>")}, false},
		{"invalid UTF-8", openai.ChatCompletionRequest{Model: "m\xff", Messages: []openai.ChatCompletionMessage{
			{Role: "user", Content: "bad \xff\xfe utf8 \xe2\x82 cut \xed\xa0\x80 surrogate", Name: "\xc0"}},
			Stop: []string{"\xff"}}, false},
		{"sampling parameters", openai.ChatCompletionRequest{Model: "m", Messages: user("x"), MaxTokens: 16,
			Temperature: 0.7, Stop: []string{"\n", "END"}}, false},
		{"reasoning parameters", openai.ChatCompletionRequest{Model: "gpt-5", Messages: user("x"), MaxCompletionTokens: 40}, false},
		{"smallest temperature", openai.ChatCompletionRequest{Model: "m", Messages: user("x"), Temperature: math.SmallestNonzeroFloat32}, false},
		{"temperature two", openai.ChatCompletionRequest{Model: "m", Messages: user("x"), Temperature: 2}, false},
		{"temperature tiny", openai.ChatCompletionRequest{Model: "m", Messages: user("x"), Temperature: 1e-7}, false},
		{"temperature huge", openai.ChatCompletionRequest{Model: "m", Messages: user("x"), Temperature: 3e21}, false},
		{"temperature negative zero", openai.ChatCompletionRequest{Model: "m", Messages: user("x"), Temperature: float32(math.Copysign(0, -1))}, false},
		{"temperature NaN", openai.ChatCompletionRequest{Model: "m", Messages: user("x"), Temperature: float32(math.NaN())}, true},
		{"temperature infinite", openai.ChatCompletionRequest{Model: "m", Messages: user("x"), Temperature: float32(math.Inf(1))}, true},
		{"negative max tokens", openai.ChatCompletionRequest{Model: "m", Messages: user("x"), MaxTokens: -3}, false},
		{"empty stop", openai.ChatCompletionRequest{Model: "m", Messages: user("x"), Stop: []string{}}, false},
		{"tools", openai.ChatCompletionRequest{Model: "m", Messages: user("x"), Tools: toolsFixture()}, false},
		{"tool without function", openai.ChatCompletionRequest{Model: "m", Messages: user("x"), Tools: []openai.Tool{{Type: "web_search"}}}, false},
		{"tool with responses properties", openai.ChatCompletionRequest{Model: "m", Messages: user("x"), Tools: []openai.Tool{
			{Type: "web_search", Parameters: map[string]any{"search_context_size": "low"}}}}, false},
		{"tool overriding type", openai.ChatCompletionRequest{Model: "m", Messages: user("x"), Tools: []openai.Tool{
			{Type: "web_search", Parameters: map[string]any{"type": "x"}}}}, true},
		{"jsonschema parameters", openai.ChatCompletionRequest{Model: "m", Messages: user("x"), Tools: []openai.Tool{
			{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: "f", Parameters: jsonschema.Definition{
				Type: jsonschema.Object, Properties: map[string]jsonschema.Definition{"q": {Type: jsonschema.String, Description: "<q>"}}}}}}}, false},
		{"map parameters", openai.ChatCompletionRequest{Model: "m", Messages: user("x"), Tools: []openai.Tool{
			{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: "f", Parameters: map[string]any{"type": "object"}}}}}, false},
		{"byte slice parameters (base64, as json.Marshal)", openai.ChatCompletionRequest{Model: "m", Messages: user("x"), Tools: []openai.Tool{
			{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: "f", Parameters: []byte(`{"type":"object"}`)}}}}, false},
		{"invalid raw parameters", openai.ChatCompletionRequest{Model: "m", Messages: user("x"), Tools: []openai.Tool{
			{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: "f", Parameters: json.RawMessage(`{"type":`)}}}}, true},
		{"empty raw parameters", openai.ChatCompletionRequest{Model: "m", Messages: user("x"), Tools: []openai.Tool{
			{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: "f", Parameters: json.RawMessage{}}}}}, true},
		{"unmarshalable parameters", openai.ChatCompletionRequest{Model: "m", Messages: user("x"), Tools: []openai.Tool{
			{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: "f", Parameters: make(chan int)}}}}, true},
		{"tool choice string", openai.ChatCompletionRequest{Model: "m", Messages: user("x"), Tools: toolsFixture(), ToolChoice: "auto"}, false},
		{"tool choice empty string", openai.ChatCompletionRequest{Model: "m", Messages: user("x"), ToolChoice: ""}, false},
		{"tool choice value", openai.ChatCompletionRequest{Model: "m", Messages: user("x"), Tools: toolsFixture(),
			ToolChoice: openai.ToolChoice{Type: openai.ToolTypeFunction, Function: openai.ToolFunction{Name: "run_command"}}}, false},
		{"tool choice pointer", openai.ChatCompletionRequest{Model: "m", Messages: user("x"),
			ToolChoice: &openai.ToolChoice{Type: openai.ToolTypeFunction, Function: openai.ToolFunction{Name: "f"}}}, false},
		{"tool choice nil pointer", openai.ChatCompletionRequest{Model: "m", Messages: user("x"), ToolChoice: (*openai.ToolChoice)(nil)}, false},
		{"tool choice empty value", openai.ChatCompletionRequest{Model: "m", Messages: user("x"), ToolChoice: openai.ToolChoice{}}, false},
		{"tool choice map", openai.ChatCompletionRequest{Model: "m", Messages: user("x"), ToolChoice: map[string]any{"type": "required"}}, false},
		{"tool choice raw", openai.ChatCompletionRequest{Model: "m", Messages: user("x"), ToolChoice: json.RawMessage(`"none"`)}, false},
		{"field the encoder does not write", openai.ChatCompletionRequest{Model: "m", Messages: user("x"), TopP: 0.5, User: "u"}, true},
		{"empty maps are omitted", openai.ChatCompletionRequest{Model: "m", Messages: user("x"),
			LogitBias: map[string]int{}, Metadata: map[string]string{}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if hand := sameAsMarshal(t, &tt.req); hand == tt.fallback {
				t.Fatalf("hand encoder used: %v, want %v", hand, !tt.fallback)
			}
		})
	}
}

// TestEncoderErrorsAreGoOpenAIs: what the hand encoder leaves to
// json.Marshal fails with go-openai's error, which classify knows.
func TestEncoderErrorsAreGoOpenAIs(t *testing.T) {
	r := openai.ChatCompletionRequest{Model: "m", Messages: []openai.ChatCompletionMessage{
		{Role: "user", Content: "x", MultiContent: []openai.ChatMessagePart{{Text: "y"}}}}}
	_, err := marshalChatRequest(&r, nil)
	if !errors.Is(err, openai.ErrContentFieldsMisused) {
		t.Fatalf("error %v", err)
	}
	bg := context.Background()
	if le := classify(bg, bg, err, ""); le.Kind != KindBadRequest {
		t.Fatalf("classified %+v", le)
	}
}

// TestEncoderCoversRequestFields: every field of ChatCompletionRequest the
// encoder does not write makes it fall back to json.Marshal when set, so
// that a field go-openai adds is never silently dropped.
func TestEncoderCoversRequestFields(t *testing.T) {
	encoded := []string{"Model", "Messages", "MaxTokens", "MaxCompletionTokens", "Temperature", "Stream",
		"Stop", "Tools", "ToolChoice", "StreamOptions"}
	base := openai.ChatCompletionRequest{Model: "m", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "x"}}}
	if _, ok := appendChatRequest(nil, &base, nil); !ok {
		t.Fatal("the base request falls back")
	}
	var visit func(v reflect.Value, path string)
	visit = func(v reflect.Value, path string) {
		for i := range v.NumField() {
			f := v.Type().Field(i)
			name := path + f.Name
			if f.Anonymous && f.Type.Kind() == reflect.Struct {
				visit(v.Field(i), name+".")
				continue
			}
			if slices.Contains(encoded, name) {
				continue
			}
			t.Run(name, func(t *testing.T) {
				r := base
				setNonEmpty(t, reflect.ValueOf(&r).Elem().FieldByIndex(fieldIndex(t, name)))
				if _, ok := appendChatRequest(nil, &r, nil); ok {
					t.Fatalf("%s is set but the hand encoder does not fall back to json.Marshal", name)
				}
				sameAsMarshal(t, &r)
			})
		}
	}
	visit(reflect.ValueOf(base), "")
}

// fieldIndex finds a (possibly embedded, "A.B") field of ChatCompletionRequest.
func fieldIndex(t *testing.T, path string) []int {
	t.Helper()
	typ := reflect.TypeFor[openai.ChatCompletionRequest]()
	var index []int
	for _, name := range strings.Split(path, ".") {
		f, ok := typ.FieldByName(name)
		if !ok {
			t.Fatalf("no field %s", path)
		}
		index = append(index, f.Index...)
		typ = f.Type
	}
	return index
}

// setNonEmpty gives v a value that omitempty does not omit.
func setNonEmpty(t *testing.T, v reflect.Value) {
	t.Helper()
	switch v.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(0.5)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		m.SetMapIndex(reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem())
		v.Set(m)
	case reflect.Interface:
		v.Set(reflect.ValueOf("x"))
	default:
		t.Fatalf("no non-empty value for a %s", v.Type())
	}
}

// TestEncoderKnowsEveryField: the encoder writes every field of these
// types; a field go-openai adds must be added to it (and here).
func TestEncoderKnowsEveryField(t *testing.T) {
	tests := []struct {
		typ    reflect.Type
		fields []string
	}{
		{reflect.TypeFor[openai.ChatCompletionMessage](), []string{"Role", "Content", "Refusal", "MultiContent", "Name",
			"ReasoningContent", "FunctionCall", "ToolCalls", "ToolCallID"}},
		{reflect.TypeFor[openai.ChatMessagePart](), []string{"Type", "Text", "ImageURL"}},
		{reflect.TypeFor[openai.ChatMessageImageURL](), []string{"URL", "Detail"}},
		{reflect.TypeFor[openai.ToolCall](), []string{"Index", "ID", "Type", "Function"}},
		{reflect.TypeFor[openai.FunctionCall](), []string{"Name", "Arguments"}},
		{reflect.TypeFor[openai.Tool](), []string{"Type", "Function", "Parameters"}},
		{reflect.TypeFor[openai.FunctionDefinition](), []string{"Name", "Description", "Strict", "Parameters"}},
		{reflect.TypeFor[openai.ToolChoice](), []string{"Type", "Function"}},
		{reflect.TypeFor[openai.ToolFunction](), []string{"Name"}},
		{reflect.TypeFor[openai.StreamOptions](), []string{"IncludeUsage"}},
	}
	for _, tt := range tests {
		var got []string
		for i := range tt.typ.NumField() {
			got = append(got, tt.typ.Field(i).Name)
		}
		if !slices.Equal(got, tt.fields) {
			t.Errorf("%s has fields %v, the encoder knows %v", tt.typ, got, tt.fields)
		}
	}
}

// TestEncoderBufferReuse: the returned body is not shared with the
// pooled scratch.
func TestEncoderBufferReuse(t *testing.T) {
	r1 := openai.ChatCompletionRequest{Model: "first", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "one"}}}
	r2 := openai.ChatCompletionRequest{Model: "second", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "two"}}}
	b1, err := marshalChatRequest(&r1, nil)
	if err != nil {
		t.Fatal(err)
	}
	keep := bytes.Clone(b1)
	for range 10 {
		if _, err := marshalChatRequest(&r2, nil); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(b1, keep) {
		t.Fatalf("body changed to %s", b1)
	}
}

func TestAppendFloat32MatchesEncodingJSON(t *testing.T) {
	for _, f := range []float32{0, 1, -1, 0.1, 0.2, 0.7, 1.5, 2, 1e-6, 9.99e-7, 1e-7, 1e-10, 1e20, 1e21, 3.4e38,
		math.SmallestNonzeroFloat32, math.MaxFloat32, 123456789, 0.000123, float32(math.Copysign(0, -1))} {
		want, err := json.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := appendFloat32(nil, f)
		if !ok || string(got) != string(want) {
			t.Errorf("appendFloat32(%v) = %s, json %s", f, got, want)
		}
	}
}

// fuzzRequest builds a request from fuzz input: strings go everywhere a
// string goes, sel picks the shape.
func fuzzRequest(s1, s2 string, raw []byte, sel uint16, temp float32) openai.ChatCompletionRequest {
	r := openai.ChatCompletionRequest{Model: s1, Stream: sel&1 != 0, Temperature: temp}
	if sel&2 != 0 {
		r.StreamOptions = &openai.StreamOptions{IncludeUsage: sel&4 != 0}
	}
	if sel&8 != 0 {
		r.Stop = []string{s2, s1}
	}
	if sel&16 != 0 {
		r.MaxTokens = int(sel)
	}
	m := openai.ChatCompletionMessage{Role: s1, Content: s2, Name: s1, Refusal: s2, ReasoningContent: s1, ToolCallID: s2}
	if sel&32 != 0 {
		m.MultiContent = []openai.ChatMessagePart{{Type: openai.ChatMessagePartType(s1), Text: s2},
			{ImageURL: &openai.ChatMessageImageURL{URL: s2, Detail: openai.ImageURLDetail(s1)}}}
		if sel&64 != 0 {
			m.Content = ""
		}
	}
	if sel&128 != 0 {
		i := int(sel >> 8)
		m.ToolCalls = []openai.ToolCall{{Index: &i, ID: s1, Type: openai.ToolType(s2), Function: openai.FunctionCall{Name: s1, Arguments: s2}}}
		m.FunctionCall = &openai.FunctionCall{Arguments: s1}
	}
	r.Messages = []openai.ChatCompletionMessage{m, {Role: "user", Content: s1}}
	if sel&256 != 0 {
		r.Tools = []openai.Tool{{Type: openai.ToolType(s1), Function: &openai.FunctionDefinition{
			Name: s2, Description: s1, Strict: sel&512 != 0, Parameters: json.RawMessage(raw)}}}
	}
	switch sel >> 10 & 7 {
	case 1:
		r.ToolChoice = s1
	case 2:
		r.ToolChoice = openai.ToolChoice{Type: openai.ToolType(s1), Function: openai.ToolFunction{Name: s2}}
	case 3:
		r.ToolChoice = &openai.ToolChoice{Function: openai.ToolFunction{Name: s1}}
	case 4:
		r.ToolChoice = json.RawMessage(raw)
	}
	return r
}

func FuzzEncodeRequest(f *testing.F) {
	f.Add("gpt-4o-mini", "hello", []byte(`{"type":"object"}`), uint16(0xffff), float32(0.7))
	f.Add("m", "", []byte(` { "a" : [1, 2.5e3, "<&>"] } `), uint16(0x0fff), float32(math.SmallestNonzeroFloat32))
	f.Add("\xff\x00<", "\u2028\t\"\\", []byte(`{`), uint16(0x1123), float32(0))
	f.Add("é", "😀", []byte(nil), uint16(0x0900), float32(2))
	f.Fuzz(func(t *testing.T, s1, s2 string, raw []byte, sel uint16, temp float32) {
		r := fuzzRequest(s1, s2, raw, sel, temp)
		sameAsMarshal(t, &r)
	})
}

func BenchmarkEncodeRequest(b *testing.B) {
	r := openai.ChatCompletionRequest{Model: "gpt-4o-mini", Stream: true, StreamOptions: &openai.StreamOptions{IncludeUsage: true},
		Temperature: 0.2, MaxTokens: 1024, Tools: toolsFixture(), ToolChoice: "auto",
		Messages: []openai.ChatCompletionMessage{
			{Role: "system", Content: strings.Repeat("You are a network engineering copilot. Be precise.\n", 30)},
			{Role: "user", Content: "Why can R1 not reach R2? Check the routes."},
			{Role: "assistant", ToolCalls: []openai.ToolCall{{ID: "call_1", Type: "function",
				Function: openai.FunctionCall{Name: "run_command", Arguments: `{"cmd":"show ip route"}`}}}},
			{Role: "tool", ToolCallID: "call_1", Content: strings.Repeat("O 10.0.0.0/24 [110/2] via 192.168.1.2, Gi0/0\n", 20)},
		}}
	b.Run("hand", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := marshalChatRequest(&r, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("hand-known-schemas", func(b *testing.B) {
		var schemas validJSON
		b.ReportAllocs()
		for b.Loop() {
			if _, err := marshalChatRequest(&r, &schemas); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json.Marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(&r); err != nil {
				b.Fatal(err)
			}
		}
	})
}
