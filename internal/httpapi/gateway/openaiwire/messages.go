package openaiwire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"agentchat/internal/httpapi/openaierr"
	"agentchat/internal/idsyntax"

	openai "github.com/sashabaranov/go-openai"
)

// convertMessages validates messages and flattens their content.
func convertMessages(in []Message, param string) ([]openai.ChatCompletionMessage, error) {
	out := make([]openai.ChatCompletionMessage, 0, len(in)+1)
	for i := range in {
		m := &in[i]
		p := fmt.Sprintf("%s[%d]", param, i)
		text, err := contentText(m.Content, p+".content")
		if err != nil {
			return nil, err
		}
		msg := openai.ChatCompletionMessage{Content: text, Name: m.Name}
		switch m.Role {
		case openai.ChatMessageRoleSystem, openai.ChatMessageRoleDeveloper:
			// Many OpenAI-compatible servers do not know "developer".
			msg.Role = openai.ChatMessageRoleSystem
		case openai.ChatMessageRoleUser:
			msg.Role = m.Role
		case openai.ChatMessageRoleAssistant:
			msg.Role = m.Role
			for j := range m.ToolCalls {
				tc, err := convertToolCall(&m.ToolCalls[j], fmt.Sprintf("%s.tool_calls[%d]", p, j))
				if err != nil {
					return nil, err
				}
				msg.ToolCalls = append(msg.ToolCalls, tc)
			}
		case openai.ChatMessageRoleTool:
			if m.ToolCallID == "" {
				return nil, openaierr.Invalid(p+".tool_call_id", "'%s.tool_call_id' is required for a tool message.", p)
			}
			msg.Role, msg.ToolCallID = m.Role, m.ToolCallID
		case openai.ChatMessageRoleFunction:
			return nil, openaierr.Invalid(p+".role", "Role 'function' (deprecated) is not supported: use 'tools' and role 'tool'.")
		case "":
			return nil, openaierr.Invalid(p+".role", "'%s.role' is required.", p)
		default:
			return nil, openaierr.Invalid(p+".role", "Invalid value for '%s.role': %q (want system, developer, user, assistant or tool).", p, clip(m.Role, 32))
		}
		out = append(out, msg)
	}
	return out, nil
}

func convertToolCall(tc *ToolCallSpec, param string) (openai.ToolCall, error) {
	if tc.Type != "" && tc.Type != string(openai.ToolTypeFunction) {
		return openai.ToolCall{}, openaierr.Invalid(param+".type", "Only tool calls of type 'function' are supported (got %q).", clip(tc.Type, 32))
	}
	if tc.Function.Name == "" {
		return openai.ToolCall{}, openaierr.Invalid(param+".function.name", "'%s.function.name' is required.", param)
	}
	args := ""
	raw := bytes.TrimSpace(tc.Function.Arguments)
	switch {
	case len(raw) == 0 || string(raw) == "null":
	case raw[0] == '"':
		if err := json.Unmarshal(raw, &args); err != nil {
			return openai.ToolCall{}, openaierr.Invalid(param+".function.arguments", "'%s.function.arguments' must be a JSON string.", param)
		}
	case raw[0] == '{':
		args = string(raw)
	default:
		return openai.ToolCall{}, openaierr.Invalid(param+".function.arguments", "'%s.function.arguments' must be a JSON string.", param)
	}
	return openai.ToolCall{ID: tc.ID, Type: openai.ToolTypeFunction,
		Function: openai.FunctionCall{Name: tc.Function.Name, Arguments: args}}, nil
}

// contentPart is one element of an array content.
type contentPart struct {
	Type    string  `json:"type"`
	Text    *string `json:"text"`
	Refusal *string `json:"refusal"`
}

// contentText flattens a content (string, null or parts) to text.
func contentText(raw json.RawMessage, param string) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", openaierr.Invalid(param, "'%s' is not a valid string.", param)
		}
		return s, nil
	case '[':
	default:
		return "", openaierr.Invalid(param, "'%s' must be a string, an array of content parts or null.", param)
	}
	var parts []json.RawMessage
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", openaierr.Invalid(param, "'%s' must be a string, an array of content parts or null.", param)
	}
	texts := make([]string, 0, len(parts))
	for j, rawPart := range parts {
		pp := fmt.Sprintf("%s[%d]", param, j)
		var part contentPart
		if err := json.Unmarshal(rawPart, &part); err != nil {
			return "", openaierr.Invalid(pp, "'%s' must be a content part object such as {\"type\":\"text\",\"text\":\"...\"}.", pp)
		}
		switch part.Type {
		case "text", "input_text", "output_text":
			if part.Text == nil {
				return "", openaierr.Invalid(pp+".text", "'%s.text' is required for a text part.", pp)
			}
			texts = append(texts, *part.Text)
		case "refusal":
			if part.Refusal != nil {
				texts = append(texts, *part.Refusal)
			}
		case "image_url", "input_image", "image", "input_audio", "audio", "file", "input_file":
			return "", openaierr.Invalid(pp, "Content parts of type '%s' are not supported: the agents here read text only. Send text parts.", part.Type)
		case "":
			return "", openaierr.Invalid(pp+".type", "'%s.type' is required.", pp)
		default:
			return "", openaierr.Invalid(pp+".type", "Unsupported content part type %q (send text parts).", clip(part.Type, 32))
		}
	}
	return strings.Join(texts, "\n"), nil
}

// nameChars are the bytes of a function's or a JSON schema's name (1 to
// 64 of them).
var nameChars = idsyntax.NewSet(true, "_-")

// emptySchema is the parameters of a function declared without any.
var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// convertTools validates the client's tool declarations.
func convertTools(in []ToolSpec) ([]openai.Tool, error) {
	if len(in) > MaxTools {
		return nil, openaierr.Invalid("tools", "At most %d tools are supported (got %d).", MaxTools, len(in))
	}
	seen := map[string]bool{}
	out := make([]openai.Tool, 0, len(in))
	for i := range in {
		t := &in[i]
		p := fmt.Sprintf("tools[%d]", i)
		if t.Type != string(openai.ToolTypeFunction) {
			return nil, openaierr.Invalid(p+".type", "Only tools of type 'function' are supported (got %q).", clip(t.Type, 32))
		}
		if t.Function == nil {
			return nil, openaierr.Invalid(p+".function", "'%s.function' is required.", p)
		}
		f := t.Function
		if !nameChars.All(f.Name, 1, 64) {
			return nil, openaierr.Invalid(p+".function.name", "'%s.function.name' must be 1 to 64 letters, digits, '_' or '-'.", p)
		}
		if seen[f.Name] {
			return nil, openaierr.Invalid(p+".function.name", "Tool %q is declared twice.", f.Name)
		}
		seen[f.Name] = true
		params := bytes.TrimSpace(f.Parameters)
		switch {
		case len(params) == 0 || string(params) == "null":
			params = emptySchema
		case params[0] != '{' || !json.Valid(params):
			return nil, openaierr.Invalid(p+".function.parameters", "'%s.function.parameters' must be a JSON Schema object.", p)
		}
		def := &openai.FunctionDefinition{Name: f.Name, Description: f.Description, Parameters: json.RawMessage(params)}
		if f.Strict != nil {
			def.Strict = *f.Strict
		}
		out = append(out, openai.Tool{Type: openai.ToolTypeFunction, Function: def})
	}
	return out, nil
}

// toolChoiceSpec is an object tool_choice.
type toolChoiceSpec struct {
	Type     string `json:"type"`
	Function *struct {
		Name string `json:"name"`
	} `json:"function"`
}

// toolChoice validates tool_choice: null or absent (nil), "none", "auto",
// "required", or {"type":"function","function":{"name":...}} (an
// openai.ToolChoice). Whether the named function exists is checked by the
// run, which knows the agent's tools.
func toolChoice(raw json.RawMessage) (any, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	const want = `none, auto, required or {"type":"function","function":{"name":"..."}}`
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, openaierr.Invalid("tool_choice", "'tool_choice' is not a valid string.")
		}
		switch s {
		case "none", "auto", "required":
			return s, nil
		}
		return nil, openaierr.Invalid("tool_choice", "Invalid value for 'tool_choice': %q (want %s).", clip(s, 32), want)
	case '{':
	default:
		return nil, openaierr.Invalid("tool_choice", "'tool_choice' must be a string or an object (%s).", want)
	}
	var spec toolChoiceSpec
	if err := json.Unmarshal(raw, &spec); err != nil {
		return nil, openaierr.Invalid("tool_choice", "'tool_choice' must be %s.", want)
	}
	switch {
	case spec.Type != string(openai.ToolTypeFunction):
		return nil, openaierr.Invalid("tool_choice.type", "Only a tool_choice of type 'function' is supported (got %q).", clip(spec.Type, 32))
	case spec.Function == nil:
		return nil, openaierr.Invalid("tool_choice.function", "'tool_choice.function' is required.")
	case !nameChars.All(spec.Function.Name, 1, 64):
		return nil, openaierr.Invalid("tool_choice.function.name", "'tool_choice.function.name' must be 1 to 64 letters, digits, '_' or '-'.")
	}
	return openai.ToolChoice{Type: openai.ToolTypeFunction, Function: openai.ToolFunction{Name: spec.Function.Name}}, nil
}
