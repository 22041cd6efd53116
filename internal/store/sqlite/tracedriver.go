package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
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

// WithTracing, when on, opens the store's databases through a
// database/sql driver wrapper that makes every statement run under a
// recording span a client span (OpenTelemetry database conventions,
// semconv 1.43: db.system.name sqlite, db.operation.name,
// db.collection.name, db.query.summary, db.query.text): the queries the
// store runs directly, its prepared statements and the BEGIN, COMMIT and
// ROLLBACK of its transactions. A statement run outside any span makes no
// span. db.query.text is the statement with its ? placeholders, never a
// parameter value (the values hold user content and secrets); a failure
// records the SQLite result code, never the error's message.
//
// Off (the default) the store uses the modernc driver as it is, with no
// wrapper at all. The local server turns it on when tracing is configured
// (telemetry.Enabled).
func WithTracing(on bool) Option {
	return func(s *Store) { s.traced = on }
}

// openDB opens dsn with the modernc driver: as sql.Open does when traced
// is false, else through tracedConnector.
func openDB(dsn string, traced bool) (*sql.DB, error) {
	if !traced {
		db, err := sql.Open("sqlite", dsn)
		if err != nil {
			return nil, fmt.Errorf("open database: %w", err)
		}
		return db, nil
	}
	c, err := msqlite.NewConnector(dsn)
	if err != nil {
		return nil, fmt.Errorf("sqlite connector: %w", err)
	}
	return sql.OpenDB(tracedConnector{next: c}), nil
}

// tracedConnector opens the connections of next wrapped in tracedConn.
type tracedConnector struct{ next driver.Connector }

// Connect opens a traced connection.
func (c tracedConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.next.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return wrapConn(conn)
}

// Driver returns the traced driver, so that (*sql.DB).Driver tells a
// traced database from a plain one.
func (c tracedConnector) Driver() driver.Driver { return tracedDriver{next: c.next.Driver()} }

// tracedDriver is the modernc driver opening traced connections.
type tracedDriver struct{ next driver.Driver }

// Open opens a traced connection to name.
func (d tracedDriver) Open(name string) (driver.Conn, error) {
	conn, err := d.next.Open(name)
	if err != nil {
		return nil, err
	}
	return wrapConn(conn)
}

// modernConn is what every connection of the modernc driver implements;
// a wrapper must forward all of it, or database/sql falls back to the
// context-free methods.
type modernConn interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.ExecerContext
	driver.QueryerContext
	driver.Pinger
	driver.SessionResetter
	driver.Validator
}

// modernStmt is what every statement of the modernc driver implements.
type modernStmt interface {
	driver.Stmt
	driver.StmtExecContext
	driver.StmtQueryContext
}

// wrapConn returns conn traced; it fails (closing conn) on a connection
// without the interfaces of modernConn.
func wrapConn(conn driver.Conn) (driver.Conn, error) {
	mc, ok := conn.(modernConn)
	if !ok {
		_ = conn.Close()
		return nil, fmt.Errorf("trace sqlite: connection %T lacks the context methods", conn)
	}
	return &tracedConn{modernConn: mc}, nil
}

// tracedConn is a connection whose statements and transactions are spans.
type tracedConn struct{ modernConn }

// Unwrap returns the driver's connection (modernc's Limit looks through
// wrappers with it).
func (c *tracedConn) Unwrap() driver.Conn { return c.modernConn }

// ExecContext runs query within its span.
func (c *tracedConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	if !recording(ctx) {
		return c.modernConn.ExecContext(ctx, query, args)
	}
	return traceExec(ctx, parseQuery(query), func() (driver.Result, error) { return c.modernConn.ExecContext(ctx, query, args) })
}

// QueryContext runs query within its span, which ends when its rows are
// closed.
func (c *tracedConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	if !recording(ctx) {
		return c.modernConn.QueryContext(ctx, query, args)
	}
	return traceQuery(ctx, parseQuery(query), func() (driver.Rows, error) { return c.modernConn.QueryContext(ctx, query, args) })
}

// PrepareContext prepares query (no span: compiling it is not running it)
// into a statement whose runs are spans.
func (c *tracedConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	st, err := c.modernConn.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	ms, ok := st.(modernStmt)
	if !ok {
		_ = st.Close()
		return nil, fmt.Errorf("trace sqlite: statement %T lacks the context methods", st)
	}
	return &tracedStmt{modernStmt: ms, info: parseQuery(query)}, nil
}

// BeginTx begins a transaction within a BEGIN span; its COMMIT or
// ROLLBACK is a span under the same parent.
func (c *tracedConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if !recording(ctx) {
		return c.modernConn.BeginTx(ctx, opts)
	}
	span := startSpan(ctx, queryInfo{op: "BEGIN", name: "BEGIN"})
	tx, err := c.modernConn.BeginTx(ctx, opts)
	endSpan(span, err)
	if err != nil {
		return nil, err
	}
	return tracedTx{next: tx, ctx: ctx}, nil
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

// tracedStmt is a prepared statement whose runs are spans.
type tracedStmt struct {
	modernStmt
	info queryInfo
}

// ExecContext runs the statement within its span.
func (s *tracedStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	if !recording(ctx) {
		return s.modernStmt.ExecContext(ctx, args)
	}
	return traceExec(ctx, s.info, func() (driver.Result, error) { return s.modernStmt.ExecContext(ctx, args) })
}

// QueryContext runs the statement within its span, which ends when its
// rows are closed.
func (s *tracedStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	if !recording(ctx) {
		return s.modernStmt.QueryContext(ctx, args)
	}
	return traceQuery(ctx, s.info, func() (driver.Rows, error) { return s.modernStmt.QueryContext(ctx, args) })
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
