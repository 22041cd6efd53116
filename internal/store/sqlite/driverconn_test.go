package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"runtime/metrics"
	"testing"
	"time"
)

// goroutinesCreated is the number of goroutines the process has started.
func goroutinesCreated(t *testing.T) uint64 {
	t.Helper()
	s := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		t.Fatalf("metric %s unsupported", s[0].Name)
	}
	return s[0].Value.Uint64()
}

// TestStatementsStartNoGoroutine: a statement, a BEGIN or a COMMIT run
// under a context that can be cancelled starts no goroutine of the
// driver's (modernc starts one per statement to interrupt it); a
// transaction starts at most database/sql's own watch. The old driver use
// started four per transaction of one statement, and one per statement.
func TestStatementsStartNoGoroutine(t *testing.T) {
	s, _ := openTemp(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := s.w.ExecContext(ctx, `CREATE TABLE scratch (k INTEGER PRIMARY KEY, v TEXT)`); err != nil {
		t.Fatal(err)
	}
	ins, err := s.w.PrepareContext(ctx, `INSERT INTO scratch (v) VALUES (?)`)
	if err != nil {
		t.Fatal(err)
	}
	defer ins.Close()
	const n = 300
	for range 10 { // the pool's connections and the statement's first use
		if _, err := ins.ExecContext(ctx, "warm"); err != nil {
			t.Fatal(err)
		}
	}

	before := goroutinesCreated(t)
	for range n {
		if _, err := ins.ExecContext(ctx, "direct"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.w.ExecContext(ctx, `UPDATE scratch SET v = ? WHERE k = 1`, "unprepared"); err != nil {
			t.Fatal(err)
		}
	}
	if got := goroutinesCreated(t) - before; got > n/10 {
		t.Errorf("%d statements outside a transaction started %d goroutines, want about none", 2*n, got)
	}

	before = goroutinesCreated(t)
	for range n {
		if err := s.write(ctx, func(tx *sql.Tx) error {
			_, err := tx.StmtContext(ctx, ins).ExecContext(ctx, "in a transaction")
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	// database/sql's Tx watches its context with a goroutine: one each.
	if got := goroutinesCreated(t) - before; got > n+n/10 {
		t.Errorf("%d transactions of one statement started %d goroutines, want at most %d", n, got, n+n/10)
	}
}

// TestEndedContextStopsStatements: a context cancelled or past its
// deadline still stops a statement, a transaction and a query before they
// start, and nothing is written.
func TestEndedContextStopsStatements(t *testing.T) {
	s, _ := openTemp(t)
	bg := context.Background()
	if _, err := s.w.ExecContext(bg, `CREATE TABLE scratch (k INTEGER PRIMARY KEY, v TEXT)`); err != nil {
		t.Fatal(err)
	}
	ins, err := s.w.PrepareContext(bg, `INSERT INTO scratch (v) VALUES (?)`)
	if err != nil {
		t.Fatal(err)
	}
	defer ins.Close()
	cancelled, cancel := context.WithCancel(bg)
	cancel()
	expired, cancel2 := context.WithDeadline(bg, time.Now().Add(-time.Second))
	defer cancel2()
	for _, tc := range []struct {
		name string
		ctx  context.Context
		want error
	}{
		{"cancelled", cancelled, context.Canceled},
		{"past its deadline", expired, context.DeadlineExceeded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := ins.ExecContext(tc.ctx, "prepared"); !errors.Is(err, tc.want) {
				t.Errorf("prepared statement: %v, want %v", err, tc.want)
			}
			if _, err := s.w.ExecContext(tc.ctx, `INSERT INTO scratch (v) VALUES ('direct')`); !errors.Is(err, tc.want) {
				t.Errorf("statement: %v, want %v", err, tc.want)
			}
			if err := s.write(tc.ctx, func(tx *sql.Tx) error {
				_, err := tx.ExecContext(bg, `INSERT INTO scratch (v) VALUES ('in a transaction')`)
				return err
			}); !errors.Is(err, tc.want) {
				t.Errorf("transaction: %v, want %v", err, tc.want)
			}
			if _, err := s.r.QueryContext(tc.ctx, `SELECT v FROM scratch`); !errors.Is(err, tc.want) {
				t.Errorf("query: %v, want %v", err, tc.want)
			}
		})
	}
	var rows int
	if err := s.r.QueryRowContext(bg, `SELECT count(*) FROM scratch`).Scan(&rows); err != nil || rows != 0 {
		t.Errorf("rows written: %d (%v), want 0", rows, err)
	}
}
