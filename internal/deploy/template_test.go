package deploy_test

import (
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"log/slog"
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
	"agentchat/internal/lambdaapp/chatfn"
	"agentchat/internal/lambdaapp/gatewayfn"
	"agentchat/internal/lambdaapp/lambdatest"
	"agentchat/internal/lambdaapp/removal"
	"agentchat/internal/lambdaapp/sessionsfn"
	"agentchat/internal/wire"
)

// surfaces maps the import path of each per-surface package to its
// functions; the worker, which serves no route, is listed without Funcs.
func surfaces() map[string][]lambdaapp.Func {
	const p = "agentchat/internal/lambdaapp/"
	return map[string][]lambdaapp.Func{
		p + "sessionsfn": sessionsfn.Funcs(),
		p + "removal":    append(removal.Funcs(), lambdaapp.Func{Name: removal.WorkerFunction}),
		p + "chatfn":     chatfn.Funcs(),
		p + "gatewayfn":  gatewayfn.Funcs(),
		p + "apikeysfn":  apikeysfn.Funcs(),
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
	for _, p := range f.Patterns {
		if !slices.ContainsFunc(routes, func(rt httpapi.Route) bool { return rt.Pattern() == p }) {
			t.Fatalf("%s: pattern %q has no route in the handler package", f.Name, p)
		}
	}
	var out []string
	for _, rt := range httpapi.Select(routes, f.Patterns...) {
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

// TestTemplateSecretsAndPolicies checks that each function may read the
// SSM parameters it is told to read at cold start, and that only the
// removal functions may invoke a function.
func TestTemplateSecretsAndPolicies(t *testing.T) {
	tpl := loadTemplate(t)
	globalEnv := tpl.get("Globals", "Function", "Environment", "Variables")
	for id, fn := range templateFunctions(tpl) {
		readable := map[string]bool{}
		invokes := false
		tablePolicy := ""
		for _, p := range fn.get("Properties", "Policies").items() {
			if name := p.get("SSMParameterReadPolicy", "ParameterName"); name.ok() {
				readable[strings.TrimPrefix(name.str(), "${SecretsPrefix}/")] = true
			}
			if p.get("LambdaInvokePolicy").ok() {
				invokes = true
			}
			for _, pol := range []string{"DynamoDBReadPolicy", "DynamoDBCrudPolicy"} {
				if tbl := p.get(pol, "TableName"); tbl.ok() {
					if tbl.tag() != "!Ref" || tbl.str() != "Table" {
						t.Errorf("%s: %s on %s, want !Ref Table", id, pol, tbl.str())
					}
					tablePolicy = pol
				}
			}
			if p.tag() == "" && p.str() != "" {
				t.Errorf("%s: policy %q: use a scoped policy template, not a managed policy", id, p.str())
			}
		}
		worker := id == logicalID(removal.WorkerFunction)
		if invokes != (worker || id == logicalID(removal.DeleteFunction)) {
			t.Errorf("%s: lambda:InvokeFunction granted %v; only the removal functions may invoke", id, invokes)
		}
		if worker {
			if tablePolicy != "DynamoDBCrudPolicy" {
				t.Errorf("%s: the worker deletes: it needs DynamoDBCrudPolicy", id)
			}
			continue // the worker reads no secret
		}
		env := map[string]node{}
		for _, e := range globalEnv.entries() {
			env[e[0].str()] = e[1]
		}
		for _, e := range fn.get("Properties", "Environment", "Variables").entries() {
			env[e[0].str()] = e[1]
		}
		for name, v := range env {
			if !strings.HasSuffix(name, lambdaapp.ParamSuffix) {
				if slices.Contains(lambdaapp.SecretVars(), name) {
					t.Errorf("%s: secret %s given as a plain environment value", id, name)
				}
				continue
			}
			param := parameterOf(v)
			if param == "" {
				t.Errorf("%s: %s does not name a parameter under /${SecretsPrefix}/", id, name)
				continue
			}
			if !readable[param] {
				t.Errorf("%s: reads %s (%s) at cold start but has no SSMParameterReadPolicy for it", id, param, name)
			}
		}
	}
}

// parameterOf returns the parameter name under the secrets prefix of an
// environment value: !Sub /${SecretsPrefix}/x, or !If [cond, !Sub ..., !Ref AWS::NoValue].
func parameterOf(v node) string {
	if v.tag() == "!If" {
		items := v.items()
		if len(items) != 3 || items[2].tag() != "!Ref" || items[2].str() != "AWS::NoValue" {
			return ""
		}
		v = items[1]
	}
	if v.tag() != "!Sub" {
		return ""
	}
	name, ok := strings.CutPrefix(v.str(), "/${SecretsPrefix}/")
	if !ok {
		return ""
	}
	return name
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

func checkMain(f *ast.File, name string, funcs map[string][]lambdaapp.Func) error {
	if len(f.Imports) != 1 {
		return fmt.Errorf("%d imports, want the one internal/lambdaapp package of the function", len(f.Imports))
	}
	imp, _ := strconv.Unquote(f.Imports[0].Path.Value)
	pkgFuncs, ok := funcs[imp]
	if !ok {
		return fmt.Errorf("imports %s, not a per-surface internal/lambdaapp package", imp)
	}
	if !slices.ContainsFunc(pkgFuncs, func(fn lambdaapp.Func) bool { return fn.Name == name }) {
		return fmt.Errorf("%s has no function %q", imp, name)
	}
	for _, decl := range f.Decls {
		fd, ok := decl.(*ast.FuncDecl)
		if !ok || fd.Name.Name != "main" || len(fd.Body.List) != 1 {
			continue
		}
		call, ok := fd.Body.List[0].(*ast.ExprStmt).X.(*ast.CallExpr)
		if !ok || len(call.Args) != 1 {
			break
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		lit, isLit := call.Args[0].(*ast.BasicLit)
		if ok && sel.Sel.Name == "Main" && isLit && lit.Value == strconv.Quote(name) {
			return nil
		}
	}
	return fmt.Errorf("main must be the single call <pkg>.Main(%q)", name)
}
