package consoletools

import (
	"strings"
	"testing"

	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"agentchat/internal/console/consoletest"
	"agentchat/internal/tools/toolkit"
	"agentchat/internal/tools/toolkit/toolkittest"
)

// TestConsoleSpans: under a traced tool call, each device's console
// session is a client span under the call's span, naming the node, its
// device type and the console address, counting commands sent and
// refused, failed when the device failed; never a command or output.
// Without a span in the context no span is made.
func TestConsoleSpans(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.addRouter("R1", consoletest.IOSOptions{})
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	ctx, parent := tp.Tracer("test").Start(toolkittest.UserContext(userToken), "execute_tool "+ToolDeviceCommands)
	args := `{"device_configs":[{"device_name":"R1","commands":["show clock","reload"]},{"device_name":"R9","commands":["show clock"]}]}`
	a := e.Decode(e.Rec.Run(ctx, e.Tool(ToolDeviceCommands), args))
	parent.End()
	if a.Results[0].Status != toolkit.StatusPartial {
		t.Fatalf("R1: %+v", a.Results[0])
	}

	var consoles []tracetest.SpanStub
	for _, s := range exp.GetSpans() {
		if strings.HasPrefix(s.Name, "console ") {
			consoles = append(consoles, s)
		}
	}
	// R9 does not exist: no console was opened for it.
	if len(consoles) != 1 || consoles[0].Name != "console exec" {
		t.Fatalf("console spans: %v", exp.GetSpans())
	}
	s := consoles[0]
	if s.Parent.SpanID() != parent.SpanContext().SpanID() || s.SpanKind != trace.SpanKindClient {
		t.Errorf("the console span is not a client span under the tool's")
	}
	attrs := map[string]string{}
	for _, kv := range s.Attributes {
		attrs[string(kv.Key)] = kv.Value.String()
	}
	want := map[string]string{"gns3.node.name": "R1", "gns3.node.device_type": "cisco_ios_telnet", "server.address": "127.0.0.1",
		"agentchat.console.commands": "1", "agentchat.console.refused": "1", "agentchat.console.status": toolkit.StatusPartial}
	for k, v := range want {
		if attrs[k] != v {
			t.Errorf("%s = %q, want %q", k, attrs[k], v)
		}
	}
	if attrs["server.port"] == "" || s.Status.Code == codes.Error {
		t.Errorf("port %q, status %v", attrs["server.port"], s.Status)
	}
	for k, v := range attrs {
		if strings.Contains(v, "show clock") || strings.Contains(v, "reload") {
			t.Errorf("%s records a command: %q", k, v)
		}
	}

	// No span in the context: none made.
	exp.Reset()
	e.Call(ToolDeviceCommands, `{"device_configs":[{"device_name":"R1","commands":["show clock"]}]}`)
	if n := len(exp.GetSpans()); n != 0 {
		t.Errorf("%d spans without tracing", n)
	}
}
