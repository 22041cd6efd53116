package llmconfigsfn_test

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/google/uuid"

	"agentchat/internal/gns3/gns3test"
	"agentchat/internal/httpapi/llmconfigs"
	"agentchat/internal/lambdaapp/lambdatest"
	"agentchat/internal/lambdaapp/llmconfigsfn"
)

var endpoint string

func TestMain(m *testing.M) { os.Exit(lambdatest.WithDynalite(m, &endpoint)) }

const apiKey = "sk-lambda-SECRET-0123456789-wxyz"

type cfg struct {
	ConfigID  string         `json:"config_id"`
	Name      string         `json:"name"`
	Config    map[string]any `json:"config"`
	IsDefault bool           `json:"is_default"`
	Version   int64          `json:"version"`
	APIKeySet bool           `json:"api_key_set"`
	Source    string         `json:"source"`
}

type list struct {
	Configs       []cfg `json:"configs"`
	DefaultConfig *cfg  `json:"default_config"`
	Total         int   `json:"total"`
}

func key(t *testing.T) string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)
}

// TestLifecycle runs every function on one DynamoDB table, as in AWS:
// a user's configurations (addressed by their GNS3 user_id), a group's
// (with the admin token), inheritance and the secret's absence from every
// answer and log.
func TestLifecycle(t *testing.T) {
	gns := gns3test.NewServer(t, nil)
	alice := gns.AddUser(gns3test.User{Username: "alice", Privileges: []string{"Group.Audit"}})
	staff := gns.AddGroup("staff", "alice")
	vars := map[string]string{"TABLE_NAME": "t-" + uuid.NewString(), "ENCRYPTION_KEY": key(t), "GNS3_URL": gns.URL}
	fx := map[string]*lambdatest.Fixture{}
	for _, f := range llmconfigsfn.Funcs() {
		fx[f.Name] = lambdatest.New(t, endpoint, f, vars)
	}
	var bodies []string
	call := func(name, route, target string, h map[string]string, body string, want int) []byte {
		t.Helper()
		resp := fx[name].API(route, target, h, body)
		bodies = append(bodies, string(resp.Body))
		if resp.Status != want {
			t.Fatalf("%s %s: %d %s, want %d", route, target, resp.Status, resp.Body, want)
		}
		return resp.Body
	}
	decode := func(b []byte, v any) {
		t.Helper()
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
	}
	a := fx[llmconfigsfn.Create].Auth("alice")
	admin := map[string]string{"Authorization": "Bearer " + lambdatest.AdminToken, "Content-Type": "application/json"}
	user := "/v3/access/users/" + alice.UserID + "/llm-model-configs"
	group := "/v3/access/groups/" + staff + "/llm-model-configs"
	P := func(method, path string) string { return method + " " + path }

	var c cfg
	decode(call(llmconfigsfn.Create, P("POST", llmconfigs.PathUser), user, a,
		`{"name":"gpt","model_type":"text","provider":"openai","model":"gpt-4o","context_limit":128,"api_key":"`+apiKey+`"}`, 201), &c)
	if !c.APIKeySet || c.Config["base_url"] != "https://api.openai.com/v1" {
		t.Fatalf("created %+v", c)
	}
	var u cfg
	decode(call(llmconfigsfn.Update, P("PUT", llmconfigs.PathUserConfig), user+"/"+c.ConfigID, a, `{"copilot_mode":"lab_automation_assistant"}`, 200), &u)
	if u.Version != 2 || !u.APIKeySet || u.Config["copilot_mode"] != "lab_automation_assistant" {
		t.Fatalf("updated %+v", u)
	}
	call(llmconfigsfn.Update, P("PUT", llmconfigs.PathUserConfig), user+"/"+c.ConfigID, a, `{"name":"x","expected_version":1}`, 409)
	call(llmconfigsfn.DefaultGet, P("GET", llmconfigs.PathUserDefault), user+"/default", a, "", 404)

	// The group's configuration, inherited as the default.
	var g cfg
	decode(call(llmconfigsfn.GroupCreate, P("POST", llmconfigs.PathGroup), group, admin,
		`{"name":"team","config":{"provider":"anthropic","model":"claude-sonnet-4-5","context_limit":200}}`, 201), &g)
	call(llmconfigsfn.GroupCreate, P("POST", llmconfigs.PathGroup), group, a, `{"name":"x"}`, 403)
	call(llmconfigsfn.GroupSetDefault, P("PUT", llmconfigs.PathGroupSetDefault), group+"/default/"+g.ConfigID, admin, `{}`, 200)
	var gd cfg
	decode(call(llmconfigsfn.GroupDefaultGet, P("GET", llmconfigs.PathGroupDefault), group+"/default", admin, "", 200), &gd)
	if gd.ConfigID != g.ConfigID || !gd.IsDefault {
		t.Fatalf("group default %+v", gd)
	}
	var d cfg
	decode(call(llmconfigsfn.DefaultGet, P("GET", llmconfigs.PathUserDefault), user+"/default", a, "", 200), &d)
	if d.ConfigID != g.ConfigID || d.Source != "group" {
		t.Fatalf("effective default %+v", d)
	}
	var l list
	decode(call(llmconfigsfn.List, P("GET", llmconfigs.PathUser), user, a, "", 200), &l)
	if l.Total != 2 || l.DefaultConfig == nil || l.DefaultConfig.ConfigID != g.ConfigID {
		t.Fatalf("list %+v", l)
	}
	var gl list
	decode(call(llmconfigsfn.GroupList, P("GET", llmconfigs.PathGroup), group, admin, "", 200), &gl)
	if gl.Total != 1 {
		t.Fatalf("group list %+v", gl)
	}

	// Her own default wins.
	call(llmconfigsfn.SetDefault, P("PUT", llmconfigs.PathUserSetDefault), user+"/default/"+c.ConfigID, a, `{}`, 200)
	var own list
	decode(call(llmconfigsfn.Own, P("GET", llmconfigs.PathUserOwn), user+"/own", a, "", 200), &own)
	if own.Total != 1 || own.DefaultConfig == nil || own.DefaultConfig.ConfigID != c.ConfigID {
		t.Fatalf("own %+v", own)
	}
	call(llmconfigsfn.Own, P("GET", llmconfigs.PathUserOwn), "/v3/access/users/bob/llm-model-configs/own", a, "", 403)

	call(llmconfigsfn.GroupUpdate, P("PUT", llmconfigs.PathGroupConfig), group+"/"+g.ConfigID, admin, `{"copilot_mode":"teaching_assistant"}`, 200)
	call(llmconfigsfn.GroupDelete, P("DELETE", llmconfigs.PathGroupConfig), group+"/"+g.ConfigID, admin, "", 204)
	call(llmconfigsfn.Delete, P("DELETE", llmconfigs.PathUserConfig), user+"/"+c.ConfigID, a, "", 204)
	decode(call(llmconfigsfn.List, P("GET", llmconfigs.PathUser), user, a, "", 200), &l)
	if l.Total != 0 {
		t.Fatalf("after deletes %+v", l)
	}
	for _, b := range bodies {
		if strings.Contains(b, apiKey) {
			t.Fatalf("an answer holds the API key: %s", b)
		}
	}
}

// TestNoEncryptionKey: without ENCRYPTION_KEY a key cannot be stored
// (503), the rest works.
func TestNoEncryptionKey(t *testing.T) {
	var create *lambdatest.Fixture
	for _, f := range llmconfigsfn.Funcs() {
		if f.Name == llmconfigsfn.Create {
			create = lambdatest.New(t, endpoint, f, nil)
		}
	}
	route := "POST " + llmconfigs.PathUser
	resp := create.API(route, "/v3/access/users/me/llm-model-configs", create.Auth("alice"),
		`{"name":"k","provider":"openai","model":"m","context_limit":8,"api_key":"`+apiKey+`"}`)
	if resp.Status != http.StatusServiceUnavailable || !strings.Contains(string(resp.Body), "ENCRYPTION_KEY") {
		t.Fatalf("%d %s", resp.Status, resp.Body)
	}
	resp = create.API(route, "/v3/access/users/me/llm-model-configs", create.Auth("alice"), `{"name":"k","provider":"openai","model":"m","context_limit":8}`)
	if resp.Status != http.StatusCreated {
		t.Fatalf("%d %s", resp.Status, resp.Body)
	}
}
