package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"

	msqlite "modernc.org/sqlite"
)

// The store's connections are the modernc driver's behind a thin wrapper
// (conn) that runs each statement with its context's values but without
// its cancellation.
//
// The driver watches the context of every statement, BEGIN and COMMIT
// that can be cancelled with a goroutine of its own, there to interrupt
// SQLite when the context ends, started and woken again around a run of
// microseconds: 25 per continuing project turn, of 46 goroutines in all
// (BenchmarkAddedTTFT's execution trace), and 3 per ledger commit. The
// store's statements touch a row, an index range or a page of one; what
// the wrapper gives up is interrupting one in mid-run, and ending early a
// wait for another process's write lock (that wait is bounded by
// busy_timeout).
//
// A context that has ended still stops everything before it starts: the
// wrapper checks it before each statement (as the driver did), and
// database/sql checks it before handing out a connection and rolls back
// the transaction of a context that ends (Tx's own watch).

// openDB opens dsn with the modernc driver behind conn, with spans when
// traced (WithTracing).
func openDB(dsn string, traced bool) (*sql.DB, error) {
	c, err := msqlite.NewConnector(dsn)
	if err != nil {
		return nil, fmt.Errorf("sqlite connector: %w", err)
	}
	return sql.OpenDB(connector{next: c, traced: traced}), nil
}

// connector opens the connections of next wrapped in conn.
type connector struct {
	next   driver.Connector
	traced bool
}

// Connect opens a wrapped connection.
func (c connector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.next.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return wrapConn(conn, c.traced)
}

// Driver returns the store's driver, so that (*sql.DB).Driver tells how
// a database was opened.
func (c connector) Driver() driver.Driver {
	return storeDriver{next: c.next.Driver(), traced: c.traced}
}

// storeDriver is the modernc driver opening wrapped connections.
type storeDriver struct {
	next   driver.Driver
	traced bool
}

// Open opens a wrapped connection to name.
func (d storeDriver) Open(name string) (driver.Conn, error) {
	conn, err := d.next.Open(name)
	if err != nil {
		return nil, err
	}
	return wrapConn(conn, d.traced)
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

// wrapConn returns conn wrapped; it fails (closing conn) on a connection
// without the interfaces of modernConn.
func wrapConn(c driver.Conn, traced bool) (driver.Conn, error) {
	mc, ok := c.(modernConn)
	if !ok {
		_ = c.Close()
		return nil, fmt.Errorf("sqlite: connection %T lacks the context methods", c)
	}
	return &conn{modernConn: mc, traced: traced}, nil
}

// conn is a connection of the driver whose statements run without their
// context's cancellation (see above), each a span when traced and its
// context's span records.
type conn struct {
	modernConn
	traced bool
}

// Unwrap returns the driver's connection (modernc's Limit looks through
// wrappers with it).
func (c *conn) Unwrap() driver.Conn { return c.modernConn }

// uncancelled is ctx's values without its cancellation, or ctx itself when
// it cannot be cancelled; the error of a context that has ended already.
func uncancelled(ctx context.Context) (context.Context, error) {
	if ctx.Done() == nil {
		return ctx, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return context.WithoutCancel(ctx), nil
}

// ExecContext runs query, within its span when traced.
func (c *conn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	run, err := uncancelled(ctx)
	if err != nil {
		return nil, err
	}
	if !c.traced || !recording(ctx) {
		return c.modernConn.ExecContext(run, query, args)
	}
	return traceExec(ctx, parseQuery(query), func() (driver.Result, error) { return c.modernConn.ExecContext(run, query, args) })
}

// QueryContext runs query, within its span when traced, which ends when
// its rows are closed.
func (c *conn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	run, err := uncancelled(ctx)
	if err != nil {
		return nil, err
	}
	if !c.traced || !recording(ctx) {
		return c.modernConn.QueryContext(run, query, args)
	}
	return traceQuery(ctx, parseQuery(query), func() (driver.Rows, error) { return c.modernConn.QueryContext(run, query, args) })
}

// PrepareContext prepares query (no span: compiling it is not running it)
// into a wrapped statement.
func (c *conn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	st, err := c.modernConn.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	ms, ok := st.(modernStmt)
	if !ok {
		_ = st.Close()
		return nil, fmt.Errorf("sqlite: statement %T lacks the context methods", st)
	}
	w := &stmt{modernStmt: ms, traced: c.traced}
	if c.traced {
		w.info = parseQuery(query)
	}
	return w, nil
}

// BeginTx begins a transaction whose BEGIN and COMMIT run without the
// context's cancellation; when traced and recording, within a BEGIN span,
// its COMMIT or ROLLBACK a span under the same parent.
func (c *conn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	run, err := uncancelled(ctx)
	if err != nil {
		return nil, err
	}
	if !c.traced || !recording(ctx) {
		return c.modernConn.BeginTx(run, opts)
	}
	span := startSpan(ctx, queryInfo{op: "BEGIN", name: "BEGIN"})
	tx, err := c.modernConn.BeginTx(run, opts)
	endSpan(span, err)
	if err != nil {
		return nil, err
	}
	return tracedTx{next: tx, ctx: ctx}, nil
}

// stmt is a prepared statement of conn; info is set when traced.
type stmt struct {
	modernStmt
	traced bool
	info   queryInfo
}

// ExecContext runs the statement, within its span when traced.
func (s *stmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	run, err := uncancelled(ctx)
	if err != nil {
		return nil, err
	}
	if !s.traced || !recording(ctx) {
		return s.modernStmt.ExecContext(run, args)
	}
	return traceExec(ctx, s.info, func() (driver.Result, error) { return s.modernStmt.ExecContext(run, args) })
}

// QueryContext runs the statement, within its span when traced, which
// ends when its rows are closed.
func (s *stmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	run, err := uncancelled(ctx)
	if err != nil {
		return nil, err
	}
	if !s.traced || !recording(ctx) {
		return s.modernStmt.QueryContext(run, args)
	}
	return traceQuery(ctx, s.info, func() (driver.Rows, error) { return s.modernStmt.QueryContext(run, args) })
}
