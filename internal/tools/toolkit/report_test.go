package toolkit

import (
	"encoding/json"
	"testing"
)

type item struct {
	Name string `json:"name"`
	Outcome
	Note string `json:"note,omitempty"`
}

func TestFinish(t *testing.T) {
	items := []item{{Name: "a"}, {Name: "b"}, {Name: "c"}, {Name: "d"}, {Name: "e"}, {Name: "f"}}
	items[0].Succeed()
	items[1].Fail("boom")
	items[2].Partial("1 of 2 commands failed")
	items[3].Status = StatusFailed // no reason
	items[4].Error = "half done"   // no status
	r := Finish(items)
	if r.Success || r.Total != 6 || r.Successful != 1 || r.Failed != 5 {
		t.Errorf("counts %+v", r)
	}
	want := []Outcome{
		{StatusSuccess, ""}, {StatusFailed, "boom"}, {StatusPartial, "1 of 2 commands failed"},
		{StatusFailed, "failed"}, {StatusFailed, "half done"}, {StatusFailed, "not run"},
	}
	for i, w := range want {
		if r.Results[i].Outcome != w {
			t.Errorf("item %d: %+v, want %+v", i, r.Results[i].Outcome, w)
		}
	}
	if _, _, first := r.summary(); first != "boom" {
		t.Errorf("first error %q", first)
	}
	out, err := Encode(Finish([]item{{Name: "<a&b>", Outcome: Outcome{Status: StatusSuccess}}}))
	if err != nil || out != `{"success":true,"total":1,"successful":1,"failed":0,"results":[{"name":"<a&b>","status":"success"}]}` {
		t.Errorf("encoded %s, %v", out, err)
	}
	if out, _ := Encode(Finish[item](nil)); out != `{"success":true,"total":0,"successful":0,"failed":0,"results":[]}` {
		t.Errorf("no items: %s", out)
	}
}

func TestFailAll(t *testing.T) {
	items := []item{{Name: "a"}, {Name: "b"}}
	items[0].Fail("own reason")
	r := FailAll(items, "cannot read the project's nodes")
	if r.Failed != 2 || r.Results[0].Error != "own reason" || r.Results[1].Error != "cannot read the project's nodes" {
		t.Errorf("%+v", r)
	}
	var back Report[item]
	b, _ := json.Marshal(r)
	if err := json.Unmarshal(b, &back); err != nil || back.Results[1].Status != StatusFailed {
		t.Errorf("round trip %s: %v", b, err)
	}
}
