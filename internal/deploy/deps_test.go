package deploy_test

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"agentchat/internal/lambdaapp"
	"agentchat/internal/lambdaapp/apikeysfn"
	"agentchat/internal/lambdaapp/catalogfn"
	"agentchat/internal/lambdaapp/labchangesfn"
	"agentchat/internal/lambdaapp/llmconfigsfn"
	"agentchat/internal/lambdaapp/removal"
	"agentchat/internal/lambdaapp/sessionsfn"
	"agentchat/internal/lambdaapp/usagefn"
)

// Packages no Lambda function may link (the local server's store).
var neverLinked = []string{"modernc.org/sqlite", "agentchat/internal/store/sqlite", "agentchat/internal/localserver"}

// Packages of the LLM and agent side, which the functions that run no
// agent must not link (bigger binaries, slower cold starts).
var agentSide = []string{
	"agentchat/internal/llm", "agentchat/internal/agent", "agentchat/internal/agents", "agentchat/internal/wire/agentwire",
	"agentchat/internal/httpapi/gateway", "agentchat/internal/seerr", "agentchat/internal/tools/seerrtools",
	"github.com/sashabaranov/go-openai", "github.com/openai/openai-go/v3",
}

// deps returns the dependencies of every function package, as built for
// Lambda (linux/arm64, -tags lambda.norpc).
func deps(t *testing.T, names []string) map[string][]string {
	t.Helper()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("go is not on PATH: %v", err)
	}
	args := []string{"list", "-tags", "lambda.norpc", "-f", `{{.Name}} {{.ImportPath}} {{join .Deps " "}}`}
	for _, n := range names {
		args = append(args, "./functions/"+n)
	}
	cmd := exec.Command(goCmd, args...)
	cmd.Dir = root(t)
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	res := map[string][]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 || f[0] != "main" {
			t.Fatalf("go list: unexpected line %q", sc.Text())
		}
		name := strings.TrimPrefix(f[1], "agentchat/functions/")
		res[name] = f[2:]
	}
	return res
}

func TestFunctionDependencies(t *testing.T) {
	names := folders(t)
	all := deps(t, names)
	noAgent := []string{removal.DeleteFunction, removal.WorkerFunction}
	for _, funcs := range [][]lambdaapp.Func{sessionsfn.Funcs(), apikeysfn.Funcs(), catalogfn.Funcs(), llmconfigsfn.Funcs(), labchangesfn.Funcs(), usagefn.Funcs()} {
		for _, f := range funcs {
			noAgent = append(noAgent, f.Name)
		}
	}
	for _, name := range names {
		d, ok := all[name]
		if !ok {
			t.Errorf("go list said nothing of functions/%s", name)
			continue
		}
		if !slices.Contains(d, "github.com/aws/aws-lambda-go/lambda") {
			t.Errorf("functions/%s does not link the Lambda runtime client", name)
		}
		for _, p := range neverLinked {
			if slices.Contains(d, p) {
				t.Errorf("functions/%s links %s", name, p)
			}
		}
		if !slices.Contains(noAgent, name) {
			continue
		}
		for _, p := range agentSide {
			if slices.Contains(d, p) {
				t.Errorf("functions/%s runs no agent but links %s", name, p)
			}
		}
	}
}

// The local server of `make run` (functions/local) links no AWS SDK: its
// package initialisation and code were about 5.5 MiB of the server's peak
// memory. functions/local/withdynamo, which serves STORE=dynamodb, does
// link the DynamoDB store.
func TestLocalServerLinksNoAWSSDK(t *testing.T) {
	all := deps(t, []string{"local", "local/withdynamo"})
	for _, tc := range []struct {
		name string
		want bool
	}{
		{"local", false},
		{"local/withdynamo", true},
	} {
		d, ok := all[tc.name]
		if !ok {
			t.Fatalf("go list said nothing of functions/%s", tc.name)
		}
		sdk := slices.Contains(d, "github.com/aws/aws-sdk-go-v2/service/dynamodb")
		store := slices.Contains(d, "agentchat/internal/store/dynamo")
		if sdk != tc.want || store != tc.want {
			t.Errorf("functions/%s links the DynamoDB SDK %v and store %v, want %v", tc.name, sdk, store, tc.want)
		}
	}
}
