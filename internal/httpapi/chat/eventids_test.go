package chat_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"agentchat/internal/llm/llmtest"
)

// TestEventIDs: every event of a /stream turn but heartbeats carries
// `id: <turn id>:<n>`, one turn id, n from 1 without gaps; heartbeats
// carry none; the data lines are those a client reading only `data:` lines
// (the GNS3 web UI) always got; each turn has its own id.
func TestEventIDs(t *testing.T) {
	e := newEnv(t, 20*time.Millisecond)
	turnIDs := map[string]bool{}
	for range 2 {
		e.llm.Enqueue(llmtest.Reply{Chunks: []string{"Hel", "lo"}, Delay: 100 * time.Millisecond}, llmtest.Reply{Text: "Title"})
		b, _ := json.Marshal(map[string]any{"message": "hi"})
		req, _ := http.NewRequest(http.MethodPost, e.Server.URL+path("/stream"), bytes.NewReader(b))
		req.Header.Set("Authorization", "Bearer "+e.Token("alice"))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(resp.Body)
		var (
			id, turn string
			n        int64
			beats    int
			types    []string
		)
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "id: "):
				id = strings.TrimPrefix(line, "id: ")
			case strings.HasPrefix(line, "data: "):
				var ev struct{ Type string }
				if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &ev); err != nil {
					t.Fatalf("data line %q: %v", line, err)
				}
				if ev.Type == "heartbeat" {
					if id != "" {
						t.Fatalf("a heartbeat with id %q", id)
					}
					beats++
					continue
				}
				i := strings.LastIndexByte(id, ':')
				if i <= 0 {
					t.Fatalf("%s event without an id (id line %q)", ev.Type, id)
				}
				if turn == "" {
					turn = id[:i]
				}
				seq, err := strconv.ParseInt(id[i+1:], 10, 64)
				if id[:i] != turn || err != nil || seq != n+1 {
					t.Fatalf("%s event id %q after %s:%d", ev.Type, id, turn, n)
				}
				n = seq
				types = append(types, ev.Type)
			case line == "":
				id = ""
			}
		}
		resp.Body.Close()
		if len(types) == 0 || types[len(types)-1] != "done" || beats == 0 {
			t.Fatalf("events %v, %d heartbeats", types, beats)
		}
		if turnIDs[turn] {
			t.Fatalf("two turns with id %s", turn)
		}
		turnIDs[turn] = true
	}
}
