package localserver

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The local server of `make run` (functions/local) links no AWS SDK: its
// package initialisation and code were about 5.5 MiB of the server's peak
// memory. functions/local/withdynamo, which serves STORE=dynamodb, does
// link the DynamoDB store; functions/local refuses STORE=dynamodb with a
// message that names it.
func TestLocalServerLinksNoAWSSDK(t *testing.T) {
	if testing.Short() {
		t.Skip("go list")
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		pkg  string
		want bool
	}{
		{"./functions/local", false},
		{"./functions/local/withdynamo", true},
	} {
		cmd := exec.Command(goCmd, "list", "-deps", tc.pkg)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", tc.pkg, err)
		}
		deps := string(out)
		aws := strings.Contains(deps, "github.com/aws/aws-sdk-go-v2/service/dynamodb\n")
		store := strings.Contains(deps, "agentchat/internal/store/dynamo\n")
		if aws != tc.want || store != tc.want {
			t.Errorf("%s links the DynamoDB SDK %v and store %v, want %v", tc.pkg, aws, store, tc.want)
		}
	}
}
