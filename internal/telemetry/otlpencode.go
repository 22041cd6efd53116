package telemetry

import (
	"math"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/encoding/protowire"
)

// This file writes an OTLP ExportTraceServiceRequest in the protobuf wire
// format with protowire alone. The generated OTLP types
// (go.opentelemetry.io/proto/otlp/collector/trace/v1) that the SDK's own
// otlptracehttp exporter uses link gRPC and grpc-gateway, which made every
// Lambda function about 12 MB larger; the tests decode what is written here
// with those generated types. Field numbers are those of
// opentelemetry/proto/{trace,common,resource}/v1 (OTLP 1.x).

// Span flag bits of OTLP: whether the flags say if the parent (or a link's
// span) is remote, and that it is.
const (
	flagHasIsRemote = 0x100
	flagIsRemote    = 0x200
)

// encodeTraces is the ExportTraceServiceRequest of spans, grouped by
// resource and instrumentation scope in their order of appearance.
func encodeTraces(spans []sdktrace.ReadOnlySpan) []byte {
	type scopeKey struct {
		res   *resource.Resource
		scope instrumentation.Scope
	}
	var resources []*resource.Resource
	scopes := map[*resource.Resource][]instrumentation.Scope{}
	bySpan := map[scopeKey][]sdktrace.ReadOnlySpan{}
	for _, s := range spans {
		res, scope := s.Resource(), s.InstrumentationScope()
		if _, seen := scopes[res]; !seen {
			resources = append(resources, res)
			scopes[res] = nil
		}
		k := scopeKey{res, scope}
		if _, seen := bySpan[k]; !seen {
			scopes[res] = append(scopes[res], scope)
		}
		bySpan[k] = append(bySpan[k], s)
	}
	var out []byte
	for _, res := range resources {
		var rs []byte
		rs = appendMessage(rs, 1, encodeResource(res))
		for _, scope := range scopes[res] {
			var ss []byte
			ss = appendMessage(ss, 1, encodeScope(scope))
			for _, s := range bySpan[scopeKey{res, scope}] {
				ss = appendMessage(ss, 2, encodeSpan(s))
			}
			ss = appendString(ss, 3, scope.SchemaURL)
			rs = appendMessage(rs, 2, ss)
		}
		if res != nil {
			rs = appendString(rs, 3, res.SchemaURL())
		}
		out = appendMessage(out, 1, rs)
	}
	return out
}

func encodeResource(res *resource.Resource) []byte {
	var b []byte
	if res == nil {
		return b
	}
	for _, kv := range res.Attributes() {
		b = appendMessage(b, 1, encodeKeyValue(kv))
	}
	return b
}

func encodeScope(scope instrumentation.Scope) []byte {
	var b []byte
	b = appendString(b, 1, scope.Name)
	b = appendString(b, 2, scope.Version)
	for _, kv := range scope.Attributes.ToSlice() {
		b = appendMessage(b, 3, encodeKeyValue(kv))
	}
	return b
}

func encodeSpan(s sdktrace.ReadOnlySpan) []byte {
	sc := s.SpanContext()
	tid, sid := sc.TraceID(), sc.SpanID()
	var b []byte
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	b = protowire.AppendBytes(b, tid[:])
	b = protowire.AppendTag(b, 2, protowire.BytesType)
	b = protowire.AppendBytes(b, sid[:])
	b = appendString(b, 3, sc.TraceState().String())
	if parent := s.Parent(); parent.SpanID().IsValid() {
		psid := parent.SpanID()
		b = protowire.AppendTag(b, 4, protowire.BytesType)
		b = protowire.AppendBytes(b, psid[:])
	}
	b = appendString(b, 5, s.Name())
	b = appendVarint(b, 6, uint64(spanKind(s.SpanKind())))
	b = appendFixed64(b, 7, unixNano(s.StartTime().UnixNano()))
	b = appendFixed64(b, 8, unixNano(s.EndTime().UnixNano()))
	for _, kv := range s.Attributes() {
		b = appendMessage(b, 9, encodeKeyValue(kv))
	}
	b = appendVarint(b, 10, uint64(max(s.DroppedAttributes(), 0)))
	for _, e := range s.Events() {
		var eb []byte
		eb = appendFixed64(eb, 1, unixNano(e.Time.UnixNano()))
		eb = appendString(eb, 2, e.Name)
		for _, kv := range e.Attributes {
			eb = appendMessage(eb, 3, encodeKeyValue(kv))
		}
		eb = appendVarint(eb, 4, uint64(max(e.DroppedAttributeCount, 0)))
		b = appendMessage(b, 11, eb)
	}
	b = appendVarint(b, 12, uint64(max(s.DroppedEvents(), 0)))
	for _, l := range s.Links() {
		ltid, lsid := l.SpanContext.TraceID(), l.SpanContext.SpanID()
		var lb []byte
		lb = protowire.AppendTag(lb, 1, protowire.BytesType)
		lb = protowire.AppendBytes(lb, ltid[:])
		lb = protowire.AppendTag(lb, 2, protowire.BytesType)
		lb = protowire.AppendBytes(lb, lsid[:])
		lb = appendString(lb, 3, l.SpanContext.TraceState().String())
		for _, kv := range l.Attributes {
			lb = appendMessage(lb, 4, encodeKeyValue(kv))
		}
		lb = appendVarint(lb, 5, uint64(max(l.DroppedAttributeCount, 0)))
		lb = appendFixed32(lb, 6, spanFlags(l.SpanContext.TraceFlags(), l.SpanContext.IsRemote()))
		b = appendMessage(b, 13, lb)
	}
	b = appendVarint(b, 14, uint64(max(s.DroppedLinks(), 0)))
	st := s.Status()
	var sb []byte
	sb = appendString(sb, 2, st.Description)
	sb = appendVarint(sb, 3, uint64(statusCode(st.Code)))
	b = appendMessage(b, 15, sb)
	b = appendFixed32(b, 16, spanFlags(sc.TraceFlags(), s.Parent().IsRemote()))
	return b
}

// spanKind is the OTLP Span.SpanKind of k (the numbers are the same,
// unknown kinds are SPAN_KIND_UNSPECIFIED).
func spanKind(k trace.SpanKind) int {
	switch k {
	case trace.SpanKindInternal, trace.SpanKindServer, trace.SpanKindClient, trace.SpanKindProducer, trace.SpanKindConsumer:
		return int(k)
	}
	return 0
}

// statusCode is the OTLP Status.StatusCode of c: UNSET 0, OK 1, ERROR 2
// (the Go API numbers Error 1 and Ok 2).
func statusCode(c codes.Code) int {
	switch c {
	case codes.Ok:
		return 1
	case codes.Error:
		return 2
	}
	return 0
}

func spanFlags(tf trace.TraceFlags, remote bool) uint32 {
	f := uint32(tf) | flagHasIsRemote
	if remote {
		f |= flagIsRemote
	}
	return f
}

func unixNano(n int64) uint64 {
	if n < 0 {
		return 0
	}
	return uint64(n)
}

func encodeKeyValue(kv attribute.KeyValue) []byte {
	var b []byte
	b = appendString(b, 1, string(kv.Key))
	return appendMessage(b, 2, encodeValue(kv.Value))
}

// encodeValue is the AnyValue of v; slices are ArrayValues.
func encodeValue(v attribute.Value) []byte {
	var b []byte
	switch v.Type() {
	case attribute.BOOL:
		return appendBool(b, 2, v.AsBool())
	case attribute.INT64:
		b = protowire.AppendTag(b, 3, protowire.VarintType)
		return protowire.AppendVarint(b, uint64(v.AsInt64()))
	case attribute.FLOAT64:
		b = protowire.AppendTag(b, 4, protowire.Fixed64Type)
		return protowire.AppendFixed64(b, math.Float64bits(v.AsFloat64()))
	case attribute.STRING:
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		return protowire.AppendString(b, v.AsString())
	case attribute.BOOLSLICE:
		var arr []byte
		for _, x := range v.AsBoolSlice() {
			arr = appendMessage(arr, 1, appendBool(nil, 2, x))
		}
		return appendMessage(b, 5, arr)
	case attribute.INT64SLICE:
		var arr []byte
		for _, x := range v.AsInt64Slice() {
			arr = appendMessage(arr, 1, encodeValue(attribute.Int64Value(x)))
		}
		return appendMessage(b, 5, arr)
	case attribute.FLOAT64SLICE:
		var arr []byte
		for _, x := range v.AsFloat64Slice() {
			arr = appendMessage(arr, 1, encodeValue(attribute.Float64Value(x)))
		}
		return appendMessage(b, 5, arr)
	case attribute.STRINGSLICE:
		var arr []byte
		for _, x := range v.AsStringSlice() {
			arr = appendMessage(arr, 1, encodeValue(attribute.StringValue(x)))
		}
		return appendMessage(b, 5, arr)
	}
	// An empty or unknown value is an AnyValue with no value set.
	return b
}

// appendMessage appends field num holding the encoded message m (also when
// m is empty: an empty message is still present).
func appendMessage(b []byte, num protowire.Number, m []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, m)
}

// appendString appends a string field unless it is empty (proto3 default).
func appendString(b []byte, num protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

// appendVarint appends a varint field unless it is 0.
func appendVarint(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

// appendBool appends a bool field, also when false (a oneof member).
func appendBool(b []byte, num protowire.Number, v bool) []byte {
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, protowire.EncodeBool(v))
}

func appendFixed64(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.Fixed64Type)
	return protowire.AppendFixed64(b, v)
}

func appendFixed32(b []byte, num protowire.Number, v uint32) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.Fixed32Type)
	return protowire.AppendFixed32(b, v)
}
