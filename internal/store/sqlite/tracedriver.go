package sqlite

import (
	"context"
	"database/sql/driver"
	"errors"
	"io"
	"reflect"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	msqlite "modernc.org/sqlite"

	"agentchat/internal/telemetry"
)

// WithTracing, when on, makes every statement of the store's connections
// (see conn) run under a recording span a client span (OpenTelemetry database conventions,
// semconv 1.43: db.system.name sqlite, db.operation.name,
// db.collection.name, db.query.summary, db.query.text): the queries the
// store runs directly, its prepared statements and the BEGIN, COMMIT and
// ROLLBACK of its transactions. A statement run outside any span makes no
// span. db.query.text is the statement with its ? placeholders, never a
// parameter value (the values hold user content and secrets); a failure
// records the SQLite result code, never the error's message.
//
// Off (the default) no statement is a span and no span is looked for. The
// local server turns it on when tracing is configured (telemetry.Enabled).
func WithTracing(on bool) Option {
	return func(s *Store) { s.traced = on }
}

// tracedTx is a transaction begun under a recording span.
type tracedTx struct {
	next driver.Tx
	ctx  context.Context // the context of BeginTx: the parent of the end's span
}

// Commit commits within a COMMIT span.
func (t tracedTx) Commit() error {
	span := startSpan(t.ctx, queryInfo{op: "COMMIT", name: "COMMIT"})
	err := t.next.Commit()
	endSpan(span, err)
	return err
}

// Rollback rolls back within a ROLLBACK span.
func (t tracedTx) Rollback() error {
	span := startSpan(t.ctx, queryInfo{op: "ROLLBACK", name: "ROLLBACK"})
	err := t.next.Rollback()
	endSpan(span, err)
	return err
}

// recording tells whether ctx carries a recording span: only then is a
// statement a span.
func recording(ctx context.Context) bool { return trace.SpanFromContext(ctx).IsRecording() }

// traceExec runs exec within the span of q.
func traceExec(ctx context.Context, q queryInfo, exec func() (driver.Result, error)) (driver.Result, error) {
	span := startSpan(ctx, q)
	res, err := exec()
	endSpan(span, err)
	return res, err
}

// traceQuery runs query within the span of q, ended by the rows' Close
// (or at once when the query fails).
func traceQuery(ctx context.Context, q queryInfo, query func() (driver.Rows, error)) (driver.Rows, error) {
	span := startSpan(ctx, q)
	rows, err := query()
	if err != nil {
		endSpan(span, err)
		return nil, err
	}
	return &tracedRows{Rows: rows, span: span}, nil
}

// startSpan starts the client span of q under ctx's span, with its
// tracer provider.
func startSpan(ctx context.Context, q queryInfo) trace.Span {
	attrs := make([]attribute.KeyValue, 0, 5)
	attrs = append(attrs, attribute.String("db.system.name", "sqlite"), attribute.String("db.operation.name", q.op))
	if q.table != "" {
		attrs = append(attrs, attribute.String("db.collection.name", q.table), attribute.String("db.query.summary", q.name))
	}
	if q.text != "" {
		attrs = append(attrs, attribute.String("db.query.text", q.text))
	}
	_, span := trace.SpanFromContext(ctx).TracerProvider().Tracer(telemetry.ScopeName).Start(ctx, q.name,
		trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	return span
}

// endSpan ends span, recording err: error.type and db.response.status_code
// are SQLite's result code (error.type by name, SQLITE_BUSY...), or
// error.type canceled, deadline_exceeded or _OTHER; never the message.
func endSpan(span trace.Span, err error) {
	if err != nil {
		var se *msqlite.Error
		if errors.As(err, &se) {
			name := resultCodeName(se.Code())
			span.SetAttributes(attribute.String("db.response.status_code", strconv.Itoa(se.Code())), attribute.String("error.type", name))
			span.SetStatus(codes.Error, name)
		} else {
			kind := telemetry.ErrorType(err)
			span.SetAttributes(attribute.String("error.type", kind))
			span.SetStatus(codes.Error, kind)
		}
	}
	span.End()
}

// resultCodeName is the name of an SQLite result code (SQLITE_BUSY), or
// the code in digits for one the driver does not name.
func resultCodeName(code int) string {
	s := msqlite.ErrorCodeString[code]
	i, j := strings.LastIndexByte(s, '('), strings.LastIndexByte(s, ')')
	if i >= 0 && j > i+1 {
		return s[i+1 : j]
	}
	return strconv.Itoa(code)
}

// tracedRows are the rows of a traced query: Close ends its span with
// db.response.returned_rows.
type tracedRows struct {
	driver.Rows
	span trace.Span
	n    int64
}

// Next reads the next row; a failure (not the end) is recorded on the
// span.
func (r *tracedRows) Next(dest []driver.Value) error {
	err := r.Rows.Next(dest)
	switch {
	case err == nil:
		r.n++
	case !errors.Is(err, io.EOF) && r.span != nil:
		r.span.SetAttributes(attribute.String("error.type", telemetry.ErrorType(err)))
		r.span.SetStatus(codes.Error, "read rows")
	}
	return err
}

// Close closes the rows and ends the span.
func (r *tracedRows) Close() error {
	err := r.Rows.Close()
	if r.span != nil {
		r.span.SetAttributes(attribute.Int64("db.response.returned_rows", r.n))
		endSpan(r.span, err)
		r.span = nil
	}
	return err
}

// The column type methods forward to the driver's rows, with database/sql's
// defaults for those it lacks.

// ColumnTypeScanType implements driver.RowsColumnTypeScanType.
func (r *tracedRows) ColumnTypeScanType(i int) reflect.Type {
	if x, ok := r.Rows.(driver.RowsColumnTypeScanType); ok {
		return x.ColumnTypeScanType(i)
	}
	return reflect.TypeFor[any]()
}

// ColumnTypeDatabaseTypeName implements driver.RowsColumnTypeDatabaseTypeName.
func (r *tracedRows) ColumnTypeDatabaseTypeName(i int) string {
	if x, ok := r.Rows.(driver.RowsColumnTypeDatabaseTypeName); ok {
		return x.ColumnTypeDatabaseTypeName(i)
	}
	return ""
}

// ColumnTypeLength implements driver.RowsColumnTypeLength.
func (r *tracedRows) ColumnTypeLength(i int) (int64, bool) {
	if x, ok := r.Rows.(driver.RowsColumnTypeLength); ok {
		return x.ColumnTypeLength(i)
	}
	return 0, false
}

// ColumnTypeNullable implements driver.RowsColumnTypeNullable.
func (r *tracedRows) ColumnTypeNullable(i int) (nullable, ok bool) {
	if x, ok := r.Rows.(driver.RowsColumnTypeNullable); ok {
		return x.ColumnTypeNullable(i)
	}
	return false, false
}

// ColumnTypePrecisionScale implements driver.RowsColumnTypePrecisionScale.
func (r *tracedRows) ColumnTypePrecisionScale(i int) (precision, scale int64, ok bool) {
	if x, ok := r.Rows.(driver.RowsColumnTypePrecisionScale); ok {
		return x.ColumnTypePrecisionScale(i)
	}
	return 0, 0, false
}
