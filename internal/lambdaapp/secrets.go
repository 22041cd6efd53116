package lambdaapp

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
)

// ParamSuffix is appended to a secret variable's name to name the SSM
// parameter holding it instead: JWT_SECRET_PARAM=/agentchat/prod/jwt-secret.
const ParamSuffix = "_PARAM"

// SecretVars are the variables that may be given as the name of an SSM
// Parameter Store SecureString parameter (VAR_PARAM) instead of a value.
// ENCRYPTION_KEY_PREVIOUS (the comma-separated keys of a rotation) is one
// parameter holding the whole list.
func SecretVars() []string {
	return []string{"JWT_SECRET", "ENCRYPTION_KEY", "ENCRYPTION_KEY_PREVIOUS", "OPENAI_API_KEY", "ADMIN_TOKEN", "SEERR_API_KEY"}
}

// ParameterStore reads SSM parameters (*ssm.Client satisfies it).
type ParameterStore interface {
	GetParameters(ctx context.Context, in *ssm.GetParametersInput, optFns ...func(*ssm.Options)) (*ssm.GetParametersOutput, error)
}

// NewParameterStore returns an SSM client from the default AWS
// configuration (region and credentials of the function's environment;
// AWS_ENDPOINT_URL_SSM overrides the endpoint).
func NewParameterStore(ctx context.Context) (ParameterStore, error) {
	cfg, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("load AWS config: %w", err)
	}
	return ssm.NewFromConfig(cfg), nil
}

// maxGetParameters is the most names one GetParameters call accepts.
const maxGetParameters = 10

// ResolveSecrets returns getenv with the secrets given as SSM parameter
// names resolved: for each of SecretVars, VAR_PARAM names a SecureString
// parameter (a name, optionally with a :version or :label selector, or an
// ARN) whose decrypted value becomes VAR. All parameters are read with one
// GetParameters call at cold start, so that no secret is ever a plaintext
// value of the function's configuration or of the CloudFormation stack.
// newStore builds the client when a parameter is named (nil:
// NewParameterStore); without VAR_PARAM variables getenv is returned as is
// and no client is built. Setting both VAR and VAR_PARAM is an error, as is
// a parameter that does not exist; errors name parameters, never values.
func ResolveSecrets(ctx context.Context, getenv func(string) string, newStore func(context.Context) (ParameterStore, error)) (func(string) string, error) {
	byVar := map[string]string{}
	var names []string
	var problems []string
	for _, v := range SecretVars() {
		name := strings.TrimSpace(getenv(v + ParamSuffix))
		if name == "" {
			continue
		}
		if getenv(v) != "" {
			problems = append(problems, fmt.Sprintf("%s and %s are both set; set only one", v, v+ParamSuffix))
			continue
		}
		byVar[v] = name
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	if len(problems) > 0 {
		return nil, errors.New(strings.Join(problems, "; "))
	}
	if len(names) == 0 {
		return getenv, nil
	}
	if newStore == nil {
		newStore = NewParameterStore
	}
	ps, err := newStore(ctx)
	if err != nil {
		return nil, fmt.Errorf("read secrets from SSM: %w", err)
	}
	values, err := getParameters(ctx, ps, names)
	if err != nil {
		return nil, err
	}
	secrets := make(map[string]string, len(byVar))
	for v, name := range byVar {
		secrets[v] = values[name]
	}
	return func(key string) string {
		if s, ok := secrets[key]; ok {
			return s
		}
		return getenv(key)
	}, nil
}

// getParameters reads names (at most maxGetParameters) with decryption and
// returns the values by requested name.
func getParameters(ctx context.Context, ps ParameterStore, names []string) (map[string]string, error) {
	if len(names) > maxGetParameters {
		return nil, fmt.Errorf("read secrets from SSM: %d parameters named, at most %d supported", len(names), maxGetParameters)
	}
	out, err := ps.GetParameters(ctx, &ssm.GetParametersInput{Names: names, WithDecryption: aws.Bool(true)})
	if err != nil {
		return nil, fmt.Errorf("read SSM parameters %s: %w", strings.Join(names, ", "), err)
	}
	if len(out.InvalidParameters) > 0 {
		return nil, fmt.Errorf("SSM parameters not found (or not readable): %s", strings.Join(out.InvalidParameters, ", "))
	}
	values := make(map[string]string, len(names))
	for _, p := range out.Parameters {
		v := aws.ToString(p.Value)
		for _, key := range []string{aws.ToString(p.Name), aws.ToString(p.Name) + aws.ToString(p.Selector), aws.ToString(p.ARN)} {
			if key != "" && slices.Contains(names, key) {
				values[key] = v
			}
		}
	}
	var missing []string
	for _, n := range names {
		if _, ok := values[n]; !ok {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("SSM did not return parameters %s", strings.Join(missing, ", "))
	}
	return values, nil
}
