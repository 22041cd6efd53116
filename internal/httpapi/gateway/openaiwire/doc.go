// Package openaiwire is the wire format of the agent gateway (/v1, package
// gateway) and its pure converters, with no I/O and no handler: the
// request bodies (OpenAI's Chat Completions request, agentchat's /v1/chat
// request) and their validation and conversion to the agent run they ask
// for (Convert: a RunRequest, or a 400 openaierr.Error naming the param);
// the answers (chat.completion, its chunks, the usage, the model list,
// the /v1/chat token and sync bodies) and the converters that build them
// from a run (UsageOfRun, ClientCalls and the finish reason, AnswerOf,
// Steps and Activity for the text of agent events); and ChunkEncoder, the
// reflection-free encoder of a stream's chunks.
//
// "Wire" is the format on the wire here, not the dependency wiring of
// internal/wire. The handlers, streaming, key limits and routes stay in
// package gateway, which imports this one.
package openaiwire
