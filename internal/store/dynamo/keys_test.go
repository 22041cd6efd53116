package dynamo

import (
	"errors"
	"testing"
	"time"

	"agentchat/internal/store"
)

func TestParseMsgSK(t *testing.T) {
	for _, tc := range []struct {
		sk   string
		seq  int64
		part int
		ok   bool
	}{
		{msgSK(1), 1, 0, true},
		{msgSK(9999999999), 9999999999, 0, true},
		{partSK(42, 3), 42, 3, true},
		{"MSG#000000004", 0, 0, false},
		{"MSG#00000000x1", 0, 0, false},
		{"MSG#0000000001#X0001", 0, 0, false},
		{"MSG#0000000001#P0000", 0, 0, false},
		{"MSG#0000000001#Pxx", 0, 0, false},
		{metaSK, 0, 0, false},
		{"", 0, 0, false},
	} {
		seq, part, ok := parseMsgSK(tc.sk)
		if seq != tc.seq || part != tc.part || ok != tc.ok {
			t.Errorf("parseMsgSK(%q) = %d, %d, %v; want %d, %d, %v", tc.sk, seq, part, ok, tc.seq, tc.part, tc.ok)
		}
	}
	// A message's parts sort right after it and before the next message.
	if !(msgSK(5) < partSK(5, 1) && partSK(5, 1) < partSK(5, 12) && partSK(5, 12) < msgSK(6)) {
		t.Error("part keys do not sort between their message and the next")
	}
}

func TestCommitState(t *testing.T) {
	c := commitState{seq: 10, gaps: [][2]int64{{3, 4}, {8, 9}, {12, 15}}}
	for _, tc := range []struct {
		x, below int64
		visible  bool
	}{
		{11, 10, false}, {10, 7, true}, {9, 7, false}, {8, 7, false}, {7, 6, true},
		{5, 2, true}, {3, 2, false}, {2, 1, true}, {1, 0, true}, {0, 0, false}, {16, 10, false},
	} {
		if got := c.below(tc.x); got != tc.below {
			t.Errorf("below(%d) = %d, want %d", tc.x, got, tc.below)
		}
		if got := c.visible(tc.x); got != tc.visible {
			t.Errorf("visible(%d) = %v, want %v", tc.x, got, tc.visible)
		}
	}
	if got := (commitState{}).below(1); got != 0 {
		t.Errorf("empty below(1) = %d", got)
	}
}

func TestTimeKeysSortAsTimes(t *testing.T) {
	times := []time.Time{
		time.Date(1999, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(2025, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600)),
		time.Date(2025, 1, 2, 3, 4, 5, 1, time.UTC),
		time.Date(2025, 1, 2, 3, 4, 5, 100, time.UTC),
		time.Date(2025, 1, 2, 3, 4, 6, 0, time.UTC),
	}
	for i := 1; i < len(times); i++ {
		a, b := fmtTime(times[i-1]), fmtTime(times[i])
		if len(a) != len(b) || !(a < b) || !times[i-1].Before(times[i]) {
			t.Errorf("%s and %s: not fixed width or out of order", a, b)
		}
		back, err := parseTime(b)
		if err != nil || !back.Equal(times[i]) || back.Location() != time.UTC {
			t.Errorf("parseTime(%s) = %v, %v", b, back, err)
		}
	}
}

func TestEscapeAndToolKey(t *testing.T) {
	for in, want := range map[string]string{"a": "a", "a#b": "a%23b", "50%": "50%25", "%23": "%2523", "": ""} {
		if got := esc(in); got != want {
			t.Errorf("esc(%q) = %q, want %q", in, got, want)
		}
	}
	if toolKey("") == "" || toolKey("x") != "x" {
		t.Errorf("toolKey: %q, %q", toolKey(""), toolKey("x"))
	}
}

func TestDecodeCursor(t *testing.T) {
	valid := cursor{PK: sessionPK("p", "t"), SK: metaSK, GSI1PK: projectGSI1PK("p"),
		GSI1SK: sessionGSI1SK("alice", false, time.Unix(0, 0), "t")}
	if _, err := decodeCursor(encodeCursor(valid), "p", "alice"); err != nil {
		t.Fatalf("valid cursor: %v", err)
	}
	bad := map[string]string{
		"not base64":    "***",
		"not json":      "bm90IGpzb24",
		"other user":    encodeCursor(valid),
		"other project": encodeCursor(cursor{PK: sessionPK("q", "t"), SK: metaSK, GSI1PK: projectGSI1PK("q"), GSI1SK: valid.GSI1SK}),
		"not meta":      encodeCursor(cursor{PK: valid.PK, SK: msgSK(1), GSI1PK: valid.GSI1PK, GSI1SK: valid.GSI1SK}),
		"empty":         encodeCursor(cursor{}),
	}
	for name, c := range bad {
		user := "alice"
		if name == "other user" {
			user = "bob"
		}
		if _, err := decodeCursor(c, "p", user); !errors.Is(err, store.ErrInvalidCursor) {
			t.Errorf("%s: %v, want ErrInvalidCursor", name, err)
		}
	}
}
