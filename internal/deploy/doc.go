// Package deploy holds no code: its tests check agentchat's AWS
// deployment as a whole. template.yaml against functions/ and the routes of
// the handler packages; each functions/<name>/main.go (tiny, wiring only,
// and linking only what its endpoint needs); the bootstraps built by
// scripts/build-lambdas.sh (size budget); and one end-to-end run of a
// built bootstrap under a fake Lambda Runtime API, with DynamoDB on
// dynalite, secrets from a fake SSM and a scripted LLM. Its benchmarks
// measure cold starts and the DynamoDB work before the first token.
package deploy
