package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	openai "github.com/sashabaranov/go-openai"
)

// This file sends a streamed chat completion request as go-openai's
// CreateChatCompletionStream does (client.go, chat_stream.go), with the
// same checks, headers and errors, the body being encoded by
// marshalChatRequest instead of json.Marshal.

// chatCompletionsPath is appended to the base URL, as go-openai does.
const chatCompletionsPath = "/chat/completions"

// streamHeader is the header of every streamed request of a client: the
// headers go-openai sends (Authorization only with a key).
func streamHeader(apiKey string) http.Header {
	h := http.Header{
		"Content-Type":  {"application/json"},
		"Accept":        {"text/event-stream"},
		"Cache-Control": {"no-cache"},
		"Connection":    {"keep-alive"},
	}
	if apiKey != "" {
		h.Set("Authorization", "Bearer "+apiKey)
	}
	return h
}

// completionOnlyModel reports the models go-openai refuses on
// /chat/completions (its disabledModelsForEndpoints; the names of its
// deprecated constants, kept equal by TestCompletionOnlyModels).
func completionOnlyModel(model string) bool {
	switch model {
	case "code-davinci-002", "code-cushman-001", "code-davinci-001",
		"text-davinci-003", "text-davinci-002", "text-curie-001", "text-babbage-001", "text-ada-001",
		"text-davinci-001", "davinci-instruct-beta", "davinci", "curie-instruct-beta", "curie", "ada", "babbage":
		return true
	}
	return false
}

// streamBody checks r and encodes it as the body of a streamed call, in
// go-openai's order and with its errors (which classify knows): the model,
// the reasoning model rules, then the encoding.
func streamBody(r *openai.ChatCompletionRequest, schemas *validJSON) ([]byte, error) {
	if completionOnlyModel(r.Model) {
		return nil, openai.ErrChatCompletionInvalidModel
	}
	r.Stream = true
	if err := openai.NewReasoningValidator().Validate(*r); err != nil {
		return nil, err
	}
	return marshalChatRequest(r, schemas)
}

// openStream posts body to the chat completions URL through the client's
// doer. A failure status is read into go-openai's error for it.
func (c *client) openStream(ctx context.Context, body []byte) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.chatURL, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("build the stream request: %w", err)
	}
	req.Header = c.header.Clone()
	resp, err := c.doer.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode < http.StatusOK || resp.StatusCode >= http.StatusBadRequest {
		defer resp.Body.Close()
		return nil, errorResponse(resp)
	}
	return resp, nil
}

// maxErrorBody bounds the error body read (go-openai reads it whole).
const maxErrorBody = 1 << 20

// errorResponse is the error go-openai returns for a failure status
// (handleErrorResp): the body's *openai.APIError with the status, or an
// *openai.RequestError holding the body. They are returned as they are,
// for classify.
func errorResponse(resp *http.Response) error {
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	if err != nil {
		return fmt.Errorf("error, reading response body: %w", err)
	}
	var errRes openai.ErrorResponse
	err = json.Unmarshal(body, &errRes)
	if err != nil || errRes.Error == nil {
		reqErr := &openai.RequestError{
			HTTPStatus:     resp.Status,
			HTTPStatusCode: resp.StatusCode,
			Err:            err,
			Body:           body,
		}
		if errRes.Error != nil {
			reqErr.Err = errRes.Error
		}
		return reqErr
	}
	errRes.Error.HTTPStatus = resp.Status
	errRes.Error.HTTPStatusCode = resp.StatusCode
	return errRes.Error
}
