package deploy_test

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"agentchat/internal/config"
	"agentchat/internal/httpapi"
	"agentchat/internal/lambdaapp"
	"agentchat/internal/lambdaapp/apikeysfn"
	"agentchat/internal/lambdaapp/catalogfn"
	"agentchat/internal/lambdaapp/chatfn"
	"agentchat/internal/lambdaapp/gatewayfn"
	"agentchat/internal/lambdaapp/labchangesfn"
	"agentchat/internal/lambdaapp/lambdatest"
	"agentchat/internal/lambdaapp/llmconfigsfn"
	"agentchat/internal/lambdaapp/removal"
	"agentchat/internal/lambdaapp/sessionsfn"
	"agentchat/internal/lambdaapp/usagefn"
	"agentchat/internal/wire"
)

// surfaces maps the import path of each per-surface package to its
// functions; the worker, which serves no route, is listed without Funcs.
func surfaces() map[string][]lambdaapp.Func {
	const p = "agentchat/internal/lambdaapp/"
	return map[string][]lambdaapp.Func{
		p + "sessionsfn":   sessionsfn.Funcs(),
		p + "removal":      append(removal.Funcs(), lambdaapp.Func{Name: removal.WorkerFunction}),
		p + "chatfn":       chatfn.Funcs(),
		p + "gatewayfn":    gatewayfn.Funcs(),
		p + "catalogfn":    catalogfn.Funcs(),
		p + "apikeysfn":    apikeysfn.Funcs(),
		p + "llmconfigsfn": llmconfigsfn.Funcs(),
		p + "labchangesfn": labchangesfn.Funcs(),
		p + "usagefn":      usagefn.Funcs(),
	}
}

// root returns the module root.
func root(t *testing.T) string {
	t.Helper()
	r, err := lambdatest.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// folders returns the function folders under functions/ (all but local).
func folders(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(root(t), "functions"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() && e.Name() != "local" {
			out = append(out, e.Name())
		}
	}
	return out
}

// logicalID is a folder's LogicalId in template.yaml (sessions-list →
// SessionsList), the name `make build-<LogicalId>` maps back.
func logicalID(folder string) string {
	var b strings.Builder
	for _, w := range strings.Split(folder, "-") {
		if w != "" {
			b.WriteString(strings.ToUpper(w[:1]) + w[1:])
		}
	}
	return b.String()
}

// node wraps a YAML node. CloudFormation's short tags (!Ref, !Sub, !If,
// !GetAtt) are kept as tags on otherwise ordinary nodes.
type node struct{ n *yaml.Node }

func (n node) ok() bool { return n.n != nil }

// get walks mapping keys; a missing key gives a node that is not ok.
func (n node) get(keys ...string) node {
	cur := n.n
	for _, k := range keys {
		if cur == nil || cur.Kind != yaml.MappingNode {
			return node{}
		}
		var next *yaml.Node
		for i := 0; i+1 < len(cur.Content); i += 2 {
			if cur.Content[i].Value == k {
				next = cur.Content[i+1]
			}
		}
		cur = next
	}
	return node{cur}
}

func (n node) str() string {
	if n.n == nil || n.n.Kind != yaml.ScalarNode {
		return ""
	}
	return n.n.Value
}

func (n node) tag() string {
	if n.n == nil {
		return ""
	}
	return n.n.Tag
}

func (n node) items() []node {
	if n.n == nil || n.n.Kind != yaml.SequenceNode {
		return nil
	}
	out := make([]node, len(n.n.Content))
	for i, c := range n.n.Content {
		out[i] = node{c}
	}
	return out
}

// entries returns the key/value pairs of a mapping, in order.
func (n node) entries() [][2]node {
	if n.n == nil || n.n.Kind != yaml.MappingNode {
		return nil
	}
	var out [][2]node
	for i := 0; i+1 < len(n.n.Content); i += 2 {
		out = append(out, [2]node{{n.n.Content[i]}, {n.n.Content[i+1]}})
	}
	return out
}

func loadTemplate(t *testing.T) node {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root(t), "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("template.yaml: %v", err)
	}
	if len(doc.Content) != 1 {
		t.Fatal("template.yaml: not one document")
	}
	return node{doc.Content[0]}
}

// templateFunctions returns the AWS::Serverless::Function resources.
func templateFunctions(tpl node) map[string]node {
	out := map[string]node{}
	for _, e := range tpl.get("Resources").entries() {
		if e[1].get("Type").str() == "AWS::Serverless::Function" {
			out[e[0].str()] = e[1]
		}
	}
	return out
}

// normalize maps a served path to the path API Gateway routes: /v1/{$}
// (exactly "/v1/") is reached through the HTTP API route /v1.
func normalize(route string) string {
	route = strings.TrimSuffix(route, "{$}")
	if len(route) > 1 && strings.HasSuffix(route, "/") && !strings.HasSuffix(route, " /") {
		route = strings.TrimSuffix(route, "/")
	}
	return route
}

// served returns the "METHOD /path" routes f serves (copilot aliases
// included), from the routes its Builder makes.
func served(t *testing.T, f lambdaapp.Func) []string {
	t.Helper()
	env := map[string]string{"JWT_SECRET": lambdatest.Secret, "TABLE_NAME": "t-template", removal.WorkerEnv: "worker", "AWS_REGION": lambdatest.Region}
	getenv := func(k string) string { return env[k] }
	cfg, err := config.Load(getenv, config.LambdaDefaults())
	if err != nil {
		t.Fatal(err)
	}
	app := &lambdaapp.App{Base: &wire.Base{Config: cfg, Logger: slog.New(slog.DiscardHandler)}, Getenv: getenv}
	routes, err := f.Build(context.Background(), app)
	if err != nil {
		t.Fatalf("%s: build routes: %v", f.Name, err)
	}
	selected, err := httpapi.Select(routes, f.Patterns...)
	if err != nil {
		t.Fatalf("%s: a pattern has no route in the handler package: %v", f.Name, err)
	}
	var out []string
	for _, rt := range selected {
		for _, p := range rt.Paths() {
			if r := normalize(rt.Method + " " + p); !slices.Contains(out, r) {
				out = append(out, r)
			}
		}
	}
	sort.Strings(out)
	return out
}

// declared returns the routes template.yaml sends to function fn: its
// HttpApi events, or the Metadata.Routes of a function URL.
func declared(t *testing.T, id string, fn node) []string {
	t.Helper()
	var out []string
	for _, e := range fn.get("Properties", "Events").entries() {
		ev := e[1]
		if ev.get("Type").str() != "HttpApi" {
			t.Errorf("%s: event %s is %s, not HttpApi", id, e[0].str(), ev.get("Type").str())
			continue
		}
		if api := ev.get("Properties", "ApiId"); api.tag() != "!Ref" || api.str() != "HttpApi" {
			t.Errorf("%s: event %s is not on the HttpApi (ApiId %s %s)", id, e[0].str(), api.tag(), api.str())
		}
		out = append(out, normalize(ev.get("Properties", "Method").str()+" "+ev.get("Properties", "Path").str()))
	}
	for _, r := range fn.get("Metadata", "Routes").items() {
		out = append(out, normalize(r.str()))
	}
	sort.Strings(out)
	return out
}

func TestTemplateMatchesFunctions(t *testing.T) {
	tpl := loadTemplate(t)
	fns := templateFunctions(tpl)
	dirs := folders(t)

	byName := map[string]lambdaapp.Func{}
	for _, funcs := range surfaces() {
		for _, f := range funcs {
			byName[f.Name] = f
		}
	}
	for _, d := range dirs {
		if _, ok := fns[logicalID(d)]; !ok {
			t.Errorf("functions/%s has no function %s in template.yaml", d, logicalID(d))
		}
		if _, ok := byName[d]; !ok {
			t.Errorf("functions/%s is not a Func of any internal/lambdaapp package", d)
		}
	}
	for id := range fns {
		if !slices.ContainsFunc(dirs, func(d string) bool { return logicalID(d) == id }) {
			t.Errorf("template function %s has no folder in functions/ (LogicalId = folder name in CamelCase)", id)
		}
	}

	owner := map[string]string{} // HTTP API route key → function
	for id, fn := range fns {
		for _, e := range fn.get("Properties", "Events").entries() {
			key := e[1].get("Properties", "Method").str() + " " + e[1].get("Properties", "Path").str()
			if other, dup := owner[key]; dup {
				t.Errorf("HTTP API route %q is routed to both %s and %s", key, other, id)
			}
			owner[key] = id
		}
	}

	globals := tpl.get("Globals", "Function")
	for key, want := range map[string]string{"Runtime": "provided.al2023", "Handler": "bootstrap", "CodeUri": "."} {
		if got := globals.get(key).str(); got != want {
			t.Errorf("Globals.Function.%s = %q, want %q", key, got, want)
		}
	}
	if a := globals.get("Architectures").items(); len(a) != 1 || a[0].str() != "arm64" {
		t.Errorf("Globals.Function.Architectures: want [arm64]")
	}

	for _, d := range dirs {
		id := logicalID(d)
		fn, ok := fns[id]
		f, known := byName[d]
		if !ok || !known {
			continue
		}
		t.Run(d, func(t *testing.T) {
			if fn.get("Metadata", "BuildMethod").str() != "makefile" {
				t.Errorf("%s: Metadata.BuildMethod is not makefile", id)
			}
			for _, key := range []string{"Runtime", "Handler", "CodeUri", "Architectures"} {
				if fn.get("Properties", key).ok() {
					t.Errorf("%s: overrides Globals.Function.%s", id, key)
				}
			}
			url := fn.get("Properties", "FunctionUrlConfig")
			switch {
			case f.Build == nil: // the worker: invoked asynchronously only
				if url.ok() || fn.get("Properties", "Events").ok() {
					t.Errorf("%s: the worker must have no events and no function URL", id)
				}
				return
			case f.Kind == lambdaapp.Stream:
				if url.get("AuthType").str() != "NONE" || url.get("InvokeMode").str() != "RESPONSE_STREAM" || !url.get("Cors", "AllowOrigins").ok() {
					t.Errorf("%s: a streaming function needs FunctionUrlConfig with AuthType NONE, InvokeMode RESPONSE_STREAM and Cors", id)
				}
				if fn.get("Properties", "Events").ok() {
					t.Errorf("%s: a streaming function must not sit behind the HTTP API (it buffers)", id)
				}
			default:
				if url.ok() {
					t.Errorf("%s: an API function has a function URL", id)
				}
			}
			want, got := served(t, f), declared(t, id, fn)
			for _, r := range got {
				if !slices.Contains(want, r) {
					t.Errorf("%s: template route %q has no handler in the function's router (it serves %v)", id, r, want)
				}
			}
			for _, r := range want {
				if !slices.Contains(got, r) {
					t.Errorf("%s: the function serves %q but template.yaml does not route it (routes %v)", id, r, got)
				}
			}
		})
	}
}

// policy is one entry of a function's Policies: a policy template with its
// parameters, and the condition of the !If around it ("" for none).
type policy struct {
	name   string
	params node
	cond   string
}

// functionPolicies returns the Policies of fn, reporting entries that are
// not (optionally conditional) policy templates.
func functionPolicies(t *testing.T, id string, fn node) []policy {
	t.Helper()
	var out []policy
	for _, p := range fn.get("Properties", "Policies").items() {
		cond := ""
		if p.tag() == "!If" {
			items := p.items()
			if len(items) != 3 || !isNoValue(items[2]) {
				t.Errorf("%s: a conditional policy must be !If [condition, policy, !Ref AWS::NoValue]", id)
				continue
			}
			cond, p = items[0].str(), items[1]
		}
		if p.tag() == "" && p.str() != "" {
			t.Errorf("%s: policy %q: use a scoped policy template, not a managed policy", id, p.str())
			continue
		}
		e := p.entries()
		if len(e) != 1 {
			t.Errorf("%s: a policy entry that is not one policy template", id)
			continue
		}
		out = append(out, policy{name: e[0][0].str(), params: e[0][1], cond: cond})
	}
	return out
}

func isNoValue(n node) bool { return n.tag() == "!Ref" && n.str() == "AWS::NoValue" }

// roleGrant is one statement of an AWS::IAM::Policy on a function's role.
type roleGrant struct {
	policy, action string
	resource       node
}

// roleGrants returns, by function LogicalId, the statements of the
// AWS::IAM::Policy resources attached to the roles SAM generates for the
// functions (<LogicalId>Role).
func roleGrants(t *testing.T, tpl node, fns map[string]node) map[string][]roleGrant {
	t.Helper()
	out := map[string][]roleGrant{}
	for _, e := range tpl.get("Resources").entries() {
		if e[1].get("Type").str() != "AWS::IAM::Policy" {
			continue
		}
		name := e[0].str()
		var attached []string
		for _, r := range e[1].get("Properties", "Roles").items() {
			fn, ok := strings.CutSuffix(r.str(), "Role")
			if r.tag() != "!Ref" || !ok || !fns[fn].ok() {
				t.Errorf("%s: attached to %s %s, not to the generated role of a function (!Ref <LogicalId>Role)", name, r.tag(), r.str())
				continue
			}
			attached = append(attached, fn)
		}
		for _, st := range e[1].get("Properties", "PolicyDocument", "Statement").items() {
			if st.get("Effect").str() != "Allow" {
				t.Errorf("%s: statement with Effect %q", name, st.get("Effect").str())
			}
			for _, fn := range attached {
				out[fn] = append(out[fn], roleGrant{policy: name, action: st.get("Action").str(), resource: st.get("Resource")})
			}
		}
	}
	return out
}

// envParam is an environment variable naming an SSM parameter.
type envParam struct {
	variable, param, cond string
}

// secretParams returns the VAR_PARAM variables of fn (the globals, then
// its own), skipping those its own environment blanks ("").
func secretParams(t *testing.T, tpl node, id string, fn node) []envParam {
	t.Helper()
	env := map[string]node{}
	for _, e := range tpl.get("Globals", "Function", "Environment", "Variables").entries() {
		env[e[0].str()] = e[1]
	}
	for _, e := range fn.get("Properties", "Environment", "Variables").entries() {
		env[e[0].str()] = e[1]
	}
	var out []envParam
	for name, v := range env {
		if !strings.HasSuffix(name, lambdaapp.ParamSuffix) {
			if slices.Contains(lambdaapp.SecretVars(), name) {
				t.Errorf("%s: secret %s given as a plain environment value", id, name)
			}
			continue
		}
		if v.tag() == "!!str" && v.str() == "" {
			continue // blanked: the function reads no such secret
		}
		param, cond := parameterOf(v)
		if param == "" {
			t.Errorf("%s: %s does not name a parameter under /${SecretsPrefix}/", id, name)
			continue
		}
		out = append(out, envParam{variable: name, param: param, cond: cond})
	}
	return out
}

// TestTemplateSecretsAndPolicies checks least privilege: each function may
// read exactly the SSM parameters it is told to read at cold start, under
// the same condition (an optional secret's policy is as conditional as
// its variable); bare functions have no policy; only the removal functions
// may invoke a function (the delete function the worker, the worker
// itself), and no function has a fixed name.
func TestTemplateSecretsAndPolicies(t *testing.T) {
	tpl := loadTemplate(t)
	fns := templateFunctions(tpl)
	byID := map[string]lambdaapp.Func{}
	for _, funcs := range surfaces() {
		for _, f := range funcs {
			byID[logicalID(f.Name)] = f
		}
	}
	grants := roleGrants(t, tpl, fns)
	workerID, deleteID := logicalID(removal.WorkerFunction), logicalID(removal.DeleteFunction)
	// A function that runs agents writes: the user's turn slots, the
	// key's rate counters, the usage ledger, the audit of lab changes.
	runsAgents := map[string]bool{}
	for _, f := range append(gatewayfn.Funcs(), chatfn.Funcs()...) {
		runsAgents[logicalID(f.Name)] = true
	}
	for id, fn := range fns {
		if fn.get("Properties", "FunctionName").ok() {
			t.Errorf("%s: a fixed FunctionName (with the stack name, over Lambda's 64 characters for long stack names); let CloudFormation name it", id)
		}
		pols := functionPolicies(t, id, fn)
		readable := map[string]string{} // parameter → condition
		invokes := false
		tablePolicy := ""
		for _, p := range pols {
			switch p.name {
			case "SSMParameterReadPolicy":
				param, ok := strings.CutPrefix(p.params.get("ParameterName").str(), "${SecretsPrefix}/")
				if p.params.get("ParameterName").tag() != "!Sub" || !ok {
					t.Errorf("%s: SSMParameterReadPolicy on %q, want !Sub ${SecretsPrefix}/<name>", id, p.params.get("ParameterName").str())
				}
				readable[param] = p.cond
			case "LambdaInvokePolicy":
				invokes = true
				if id == deleteID {
					if f := p.params.get("FunctionName"); f.tag() != "!Ref" || f.str() != workerID || p.cond != "" {
						t.Errorf("%s: may invoke %s %s, want !Ref %s", id, f.tag(), f.str(), workerID)
					}
				}
			case "DynamoDBReadPolicy", "DynamoDBCrudPolicy":
				if tbl := p.params.get("TableName"); tbl.tag() != "!Ref" || tbl.str() != "Table" {
					t.Errorf("%s: %s on %s, want !Ref Table", id, p.name, tbl.str())
				}
				tablePolicy = p.name
			}
		}
		for _, g := range grants[id] {
			if g.action != "lambda:InvokeFunction" {
				t.Errorf("%s: %s grants %q; only a self-invocation is expected there", id, g.policy, g.action)
				continue
			}
			invokes = true
			if g.resource.tag() != "!GetAtt" || g.resource.str() != id+".Arn" {
				t.Errorf("%s: %s lets it invoke %s %s, want only itself (!GetAtt %s.Arn)", id, g.policy, g.resource.tag(), g.resource.str(), id)
			}
		}
		if invokes != (id == workerID || id == deleteID) {
			t.Errorf("%s: lambda:InvokeFunction granted %v; only the removal functions may invoke", id, invokes)
		}
		if f, ok := byID[id]; ok && f.Bare {
			if len(pols) > 0 || len(grants[id]) > 0 {
				t.Errorf("%s: a bare function reads no secret and opens no table; it needs no policy", id)
			}
			if ps := secretParams(t, tpl, id, fn); len(ps) > 0 {
				t.Errorf("%s: a bare function reads no secret, but its environment names %+v (blank them with \"\")", id, ps)
			}
			continue
		}
		if id == workerID {
			if tablePolicy != "DynamoDBCrudPolicy" {
				t.Errorf("%s: the worker deletes: it needs DynamoDBCrudPolicy", id)
			}
			if !slices.ContainsFunc(grants[id], func(g roleGrant) bool { return g.resource.str() == id+".Arn" }) {
				t.Errorf("%s: the worker must be allowed to invoke itself (an AWS::IAM::Policy on %sRole)", id, id)
			}
			if len(readable) > 0 {
				t.Errorf("%s: the worker reads no secret, but may read %v", id, readable)
			}
			continue
		}
		if runsAgents[id] && tablePolicy != "DynamoDBCrudPolicy" {
			t.Errorf("%s: it runs agents, which write (turn slots, rate counters, the usage ledger): it needs DynamoDBCrudPolicy, has %q", id, tablePolicy)
		}
		if id == deleteID {
			if w := fn.get("Properties", "Environment", "Variables", removal.WorkerEnv); w.tag() != "!Ref" || w.str() != workerID {
				t.Errorf("%s: %s must be !Ref %s (the worker's generated name)", id, removal.WorkerEnv, workerID)
			}
		}
		used := map[string]bool{}
		for _, ep := range secretParams(t, tpl, id, fn) {
			used[ep.param] = true
			cond, ok := readable[ep.param]
			switch {
			case !ok:
				t.Errorf("%s: reads %s (%s) at cold start but has no SSMParameterReadPolicy for it", id, ep.param, ep.variable)
			case cond != ep.cond:
				t.Errorf("%s: reads %s under condition %q but its policy has condition %q (same !If on both)", id, ep.param, ep.cond, cond)
			}
		}
		for param := range readable {
			if !used[param] {
				t.Errorf("%s: may read %s, which no variable of its environment names", id, param)
			}
		}
	}
}

// parameterOf returns the parameter name under the secrets prefix of an
// environment value, and its condition: !Sub /${SecretsPrefix}/x, or
// !If [cond, !Sub ..., !Ref AWS::NoValue].
func parameterOf(v node) (param, cond string) {
	if v.tag() == "!If" {
		items := v.items()
		if len(items) != 3 || !isNoValue(items[2]) {
			return "", ""
		}
		cond, v = items[0].str(), items[1]
	}
	if v.tag() != "!Sub" {
		return "", ""
	}
	name, ok := strings.CutPrefix(v.str(), "/${SecretsPrefix}/")
	if !ok {
		return "", ""
	}
	return name, cond
}

func TestTemplateTableAndOutputs(t *testing.T) {
	tpl := loadTemplate(t)
	tbl := tpl.get("Resources", "Table")
	checks := map[string]string{
		"Type":                   "AWS::DynamoDB::Table",
		"DeletionPolicy":         "Retain",
		"UpdateReplacePolicy":    "Retain",
		"Properties/BillingMode": "PAY_PER_REQUEST",
		"Properties/PointInTimeRecoverySpecification/PointInTimeRecoveryEnabled": "true",
		"Properties/TimeToLiveSpecification/Enabled":                             "true",
		"Properties/TimeToLiveSpecification/AttributeName":                       "ttl",
	}
	for path, want := range checks {
		if got := tbl.get(strings.Split(path, "/")...).str(); got != want {
			t.Errorf("Table %s = %q, want %q", path, got, want)
		}
	}
	keys := func(n node) string {
		var parts []string
		for _, k := range n.items() {
			parts = append(parts, k.get("AttributeName").str()+" "+k.get("KeyType").str())
		}
		return strings.Join(parts, ", ")
	}
	if got := keys(tbl.get("Properties", "KeySchema")); got != "PK HASH, SK RANGE" {
		t.Errorf("table keys %q", got)
	}
	gsis := tbl.get("Properties", "GlobalSecondaryIndexes").items()
	if len(gsis) != 1 || gsis[0].get("IndexName").str() != "GSI1" || keys(gsis[0].get("KeySchema")) != "GSI1PK HASH, GSI1SK RANGE" ||
		gsis[0].get("Projection", "ProjectionType").str() != "ALL" {
		t.Errorf("GSI1 is not GSI1PK/GSI1SK with projection ALL")
	}

	outputs := tpl.get("Outputs")
	if !strings.Contains(outputs.get("ApiUrl", "Value").str(), "${HttpApi}.execute-api.") {
		t.Error("no ApiUrl output for the HTTP API")
	}
	for id, fn := range templateFunctions(tpl) {
		if !fn.get("Properties", "FunctionUrlConfig").ok() {
			continue
		}
		found := false
		for _, e := range outputs.entries() {
			v := e[1].get("Value")
			if (v.tag() == "!GetAtt" && v.str() == id+"Url.FunctionUrl") || (v.tag() == "!Sub" && strings.Contains(v.str(), "${"+id+"Url.FunctionUrl}")) {
				found = true
			}
		}
		if !found {
			t.Errorf("no output gives the function URL of %s (!GetAtt %sUrl.FunctionUrl)", id, id)
		}
	}
}

// TestMains checks that every functions/<name>/main.go only wires: at most
// 30 lines, one import of an internal/lambdaapp package, and main calling
// that package's Main with the folder's name, a function of that package.
func TestMains(t *testing.T) {
	funcs := surfaces()
	for _, d := range folders(t) {
		path := filepath.Join(root(t), "functions", d, "main.go")
		src, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("functions/%s: %v", d, err)
			continue
		}
		if n := strings.Count(string(src), "\n"); n > 30 {
			t.Errorf("functions/%s/main.go has %d lines; a main only wires (≤ 30)", d, n)
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, src, parser.ParseComments)
		if err != nil {
			t.Errorf("functions/%s: %v", d, err)
			continue
		}
		if f.Doc == nil || !strings.HasPrefix(f.Doc.Text(), "Command "+d+" ") {
			t.Errorf("functions/%s/main.go: the package comment must start with %q", d, "Command "+d+" ")
		}
		if err := checkMain(f, d, funcs); err != nil {
			t.Errorf("functions/%s/main.go: %v", d, err)
		}
	}
}

// entryPoints are the functions the mains hand to lambdaapp.Main, by the
// expression that names them.
func entryPoints() map[string]func() lambdaapp.Func {
	return map[string]func() lambdaapp.Func{
		"apikeysfn.APIKeysCreate":                apikeysfn.APIKeysCreate,
		"apikeysfn.APIKeysDeleteAll":             apikeysfn.APIKeysDeleteAll,
		"apikeysfn.APIKeysDelete":                apikeysfn.APIKeysDelete,
		"apikeysfn.APIKeysList":                  apikeysfn.APIKeysList,
		"apikeysfn.APIKeysUpdate":                apikeysfn.APIKeysUpdate,
		"usagefn.UsageGet":                       usagefn.UsageGet,
		"usagefn.BudgetGet":                      usagefn.BudgetGet,
		"usagefn.BudgetSet":                      usagefn.BudgetSet,
		"sessionsfn.ChatAbort":                   sessionsfn.ChatAbort,
		"labchangesfn.ChatAudit":                 labchangesfn.ChatAudit,
		"chatfn.ChatStream":                      chatfn.ChatStream,
		"labchangesfn.ChatUndo":                  labchangesfn.ChatUndo,
		"llmconfigsfn.LLMConfigsCreate":          llmconfigsfn.LLMConfigsCreate,
		"llmconfigsfn.LLMConfigsDefaultGet":      llmconfigsfn.LLMConfigsDefaultGet,
		"llmconfigsfn.LLMConfigsDelete":          llmconfigsfn.LLMConfigsDelete,
		"llmconfigsfn.LLMConfigsGroupCreate":     llmconfigsfn.LLMConfigsGroupCreate,
		"llmconfigsfn.LLMConfigsGroupDefaultGet": llmconfigsfn.LLMConfigsGroupDefaultGet,
		"llmconfigsfn.LLMConfigsGroupDelete":     llmconfigsfn.LLMConfigsGroupDelete,
		"llmconfigsfn.LLMConfigsGroupList":       llmconfigsfn.LLMConfigsGroupList,
		"llmconfigsfn.LLMConfigsGroupSetDefault": llmconfigsfn.LLMConfigsGroupSetDefault,
		"llmconfigsfn.LLMConfigsGroupUpdate":     llmconfigsfn.LLMConfigsGroupUpdate,
		"llmconfigsfn.LLMConfigsList":            llmconfigsfn.LLMConfigsList,
		"llmconfigsfn.LLMConfigsOwn":             llmconfigsfn.LLMConfigsOwn,
		"llmconfigsfn.LLMConfigsSetDefault":      llmconfigsfn.LLMConfigsSetDefault,
		"llmconfigsfn.LLMConfigsUpdate":          llmconfigsfn.LLMConfigsUpdate,
		"gatewayfn.OpenAI":                       gatewayfn.OpenAI,
		"removal.ProjectChatDelete":              removal.ProjectChatDelete,
		"sessionsfn.SessionsDelete":              sessionsfn.SessionsDelete,
		"sessionsfn.SessionsHistory":             sessionsfn.SessionsHistory,
		"sessionsfn.SessionsList":                sessionsfn.SessionsList,
		"sessionsfn.SessionsPin":                 sessionsfn.SessionsPin,
		"sessionsfn.SessionsRename":              sessionsfn.SessionsRename,
		"sessionsfn.SessionsUnpin":               sessionsfn.SessionsUnpin,
		"catalogfn.V1Agents":                     catalogfn.V1Agents,
		"gatewayfn.V1ChatSync":                   gatewayfn.V1ChatSync,
		"gatewayfn.V1Chat":                       gatewayfn.V1Chat,
		"catalogfn.V1Root":                       catalogfn.V1Root,
	}
}

// checkMain checks that a main is the one call lambdaapp.Main(pkg.Fn) with
// pkg a per-surface package and pkg.Fn the function named name, or for
// the removal worker removal.MainWorker().
func checkMain(f *ast.File, name string, funcs map[string][]lambdaapp.Func) error {
	var imports []string
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		imports = append(imports, p)
	}
	call, err := mainCall(f)
	if err != nil {
		return err
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return errors.New("main must call a function of a package")
	}
	callee := fmt.Sprint(sel.X) + "." + sel.Sel.Name
	if name == removal.WorkerFunction {
		if callee != "removal.MainWorker" || len(call.Args) != 0 || !slices.Equal(imports, []string{"agentchat/internal/lambdaapp/removal"}) {
			return errors.New("main must be the single call removal.MainWorker()")
		}
		return nil
	}
	if callee != "lambdaapp.Main" || len(call.Args) != 1 || len(imports) != 2 || imports[0] != "agentchat/internal/lambdaapp" {
		return errors.New("main must be the single call lambdaapp.Main(<pkg>.<Function>), importing internal/lambdaapp and the function's package")
	}
	if _, ok := funcs[imports[1]]; !ok {
		return fmt.Errorf("imports %s, not a per-surface internal/lambdaapp package", imports[1])
	}
	arg, ok := call.Args[0].(*ast.SelectorExpr)
	if !ok {
		return errors.New("lambdaapp.Main takes <pkg>.<Function>")
	}
	expr := fmt.Sprint(arg.X) + "." + arg.Sel.Name
	fn, ok := entryPoints()[expr]
	if !ok {
		return fmt.Errorf("%s is not in entryPoints", expr)
	}
	if got := fn().Name; got != name {
		return fmt.Errorf("%s is the function %q", expr, got)
	}
	if !slices.ContainsFunc(funcs[imports[1]], func(fn lambdaapp.Func) bool { return fn.Name == name }) {
		return fmt.Errorf("%s.Funcs() does not list %q", imports[1], name)
	}
	return nil
}

// mainCall returns the single call that func main makes.
func mainCall(f *ast.File) (*ast.CallExpr, error) {
	for _, decl := range f.Decls {
		fd, ok := decl.(*ast.FuncDecl)
		if !ok || fd.Name.Name != "main" {
			continue
		}
		if len(fd.Body.List) == 1 {
			if es, ok := fd.Body.List[0].(*ast.ExprStmt); ok {
				if call, ok := es.X.(*ast.CallExpr); ok {
					return call, nil
				}
			}
		}
		return nil, errors.New("main must be a single call")
	}
	return nil, errors.New("no func main")
}

// headerList splits a comma-separated header list, lower-cased.
func headerList(v string) []string {
	var out []string
	for _, h := range strings.Split(v, ",") {
		if h = strings.ToLower(strings.TrimSpace(h)); h != "" {
			out = append(out, h)
		}
	}
	return out
}

// lower returns the scalar items of n, lower-cased.
func lower(n node) []string {
	var out []string
	for _, i := range n.items() {
		out = append(out, strings.ToLower(i.str()))
	}
	return out
}

// routerCORS returns the response headers the router exposes to browsers
// and the request headers its preflight allows when the browser names
// none, lower-cased, together with those clients need whatever the router
// says.
func routerCORS(t *testing.T) (expose, allow []string) {
	t.Helper()
	h := httpapi.NewRouter(httpapi.Deps{Logger: slog.New(slog.DiscardHandler)})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/nowhere", nil))
	expose = headerList(rec.Header().Get("Access-Control-Expose-Headers"))
	req := httptest.NewRequest(http.MethodOptions, "/nowhere", nil)
	req.Header.Set("Origin", "https://app.example")
	req.Header.Set("Access-Control-Request-Method", http.MethodPost)
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	allow = headerList(rec.Header().Get("Access-Control-Allow-Headers"))
	for _, x := range []string{"x-request-id", "x-next-cursor", "x-session-id", "x-agent-id", "x-should-retry", "retry-after"} {
		if !slices.Contains(expose, x) {
			expose = append(expose, x)
		}
	}
	for _, x := range []string{"authorization", "content-type"} {
		if !slices.Contains(allow, x) {
			allow = append(allow, x)
		}
	}
	return expose, allow
}

// TestTemplateCORS checks the CORS configurations that answer browsers in
// place of the functions (the HTTP API's, and each function URL's): any
// origin, the methods routed there, every request header the router's
// preflight allows (listed: a wildcard would not cover Authorization) and
// every response header it exposes.
func TestTemplateCORS(t *testing.T) {
	tpl := loadTemplate(t)
	expose, allow := routerCORS(t)
	check := func(name string, cors node, methods []string) {
		if !cors.ok() {
			t.Errorf("%s: no CORS configuration", name)
			return
		}
		if o := lower(cors.get("AllowOrigins")); !slices.Equal(o, []string{"*"}) {
			t.Errorf("%s: AllowOrigins %v, want [*]", name, o)
		}
		got := lower(cors.get("AllowMethods"))
		for _, m := range methods {
			if !slices.Contains(got, strings.ToLower(m)) && !slices.Contains(got, "*") {
				t.Errorf("%s: AllowMethods %v lacks %s", name, got, m)
			}
		}
		got = lower(cors.get("AllowHeaders"))
		for _, h := range allow {
			if !slices.Contains(got, h) {
				t.Errorf("%s: AllowHeaders lacks %s", name, h)
			}
		}
		got = lower(cors.get("ExposeHeaders"))
		for _, h := range expose {
			if !slices.Contains(got, h) {
				t.Errorf("%s: ExposeHeaders lacks %s", name, h)
			}
		}
	}
	var apiMethods []string
	for id, fn := range templateFunctions(tpl) {
		for _, e := range fn.get("Properties", "Events").entries() {
			if m := e[1].get("Properties", "Method").str(); !slices.Contains(apiMethods, m) {
				apiMethods = append(apiMethods, m)
			}
		}
		url := fn.get("Properties", "FunctionUrlConfig")
		if !url.ok() {
			continue
		}
		var methods []string
		for _, r := range fn.get("Metadata", "Routes").items() {
			m, _, _ := strings.Cut(r.str(), " ")
			methods = append(methods, m)
		}
		check(id+" FunctionUrlConfig.Cors", url.get("Cors"), methods)
	}
	check("HttpApi CorsConfiguration", tpl.get("Resources", "HttpApi", "Properties", "CorsConfiguration"), apiMethods)
}

// TestTemplateHTTPAPIPaths checks the HTTP API route paths: API Gateway
// refuses paths ending in '/' (and SAM would drop such a route silently),
// so the gateway's GET /v1/ is routed as GET /v1.
func TestTemplateHTTPAPIPaths(t *testing.T) {
	tpl := loadTemplate(t)
	for id, fn := range templateFunctions(tpl) {
		for _, e := range fn.get("Properties", "Events").entries() {
			p := e[1].get("Properties", "Path").str()
			if !strings.HasPrefix(p, "/") || (p != "/" && strings.HasSuffix(p, "/")) {
				t.Errorf("%s: HTTP API route path %q (must start and not end with '/')", id, p)
			}
		}
	}
	root := templateFunctions(tpl)[logicalID(catalogfn.RootFunction)]
	if !slices.Contains(declared(t, logicalID(catalogfn.RootFunction), root), "GET "+catalogfn.PathRootBare) {
		t.Errorf("GET %s is not routed to %s", catalogfn.PathRootBare, catalogfn.RootFunction)
	}
}

// TestTemplateLabVPC: the functions that run the agents (and so reach the
// GNS3 controller and the device consoles) and chat-undo (which changes
// the lab: it restores a snapshot) join the lab's VPC when LabSubnetIds is
// set; no other function does.
func TestTemplateLabVPC(t *testing.T) {
	tpl := loadTemplate(t)
	agentFns := map[string]bool{}
	for _, f := range append(chatfn.Funcs(), gatewayfn.Funcs()...) {
		agentFns[logicalID(f.Name)] = true
	}
	agentFns[logicalID(labchangesfn.UndoFunction)] = true
	if cond := tpl.get("Conditions", "HasLabVpc"); !cond.ok() {
		t.Fatal("no HasLabVpc condition")
	}
	for _, p := range []string{"LabSubnetIds", "LabSecurityGroupIds"} {
		if typ := tpl.get("Parameters", p, "Type").str(); typ != "CommaDelimitedList" {
			t.Errorf("parameter %s: type %q", p, typ)
		}
	}
	for id, fn := range templateFunctions(tpl) {
		vpc := fn.get("Properties", "VpcConfig")
		if !agentFns[id] {
			if vpc.ok() {
				t.Errorf("%s joins the lab VPC but runs no agent", id)
			}
			continue
		}
		items := vpc.items()
		if vpc.tag() != "!If" || len(items) != 3 || items[0].str() != "HasLabVpc" || !isNoValue(items[2]) ||
			items[1].get("SubnetIds").str() != "LabSubnetIds" || items[1].get("SecurityGroupIds").str() != "LabSecurityGroupIds" {
			t.Errorf("%s: VpcConfig is not !If [HasLabVpc, {SubnetIds, SecurityGroupIds}, NoValue]", id)
		}
	}
}
