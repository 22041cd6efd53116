package manualclock

import (
	"testing"
	"time"
)

func TestClock(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	c := New(t0)
	steps := []struct {
		move func()
		want time.Time
	}{
		{func() {}, t0},
		{func() { c.Add(time.Minute) }, t0.Add(time.Minute)},
		{func() { c.Set(t0.Add(time.Hour)) }, t0.Add(time.Hour)},
		{func() { c.Add(-time.Hour) }, t0},
	}
	for i, s := range steps {
		s.move()
		if got := c.Now(); !got.Equal(s.want) {
			t.Errorf("step %d: %v, want %v", i, got, s.want)
		}
	}
}
