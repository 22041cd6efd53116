package toolkittest

import (
	"testing"

	"agentchat/internal/agent"
)

// Caller calls the tools of a toolset as the user whose GNS3 token is
// Token, records what they say (Rec) and decodes their answers into an A,
// checked by Decode for the Statuses and then by Check when not nil.
type Caller[A any] struct {
	// T is the test.
	T testing.TB
	// Rec records every answer and error.
	Rec *Recorder
	// Token is the user's GNS3 token.
	Token string
	// Tools returns the tools to call (read at every call).
	Tools func() []agent.Tool
	// Statuses are the item statuses the tools may answer.
	Statuses []string
	// Check, when not nil, checks every decoded answer further.
	Check func(A)
}

// Tool returns the tool name of Tools.
func (c *Caller[A]) Tool(name string) agent.Tool {
	c.T.Helper()
	return FindTool(c.T, c.Tools(), name)
}

// Call runs the tool name with args as the user and decodes its answer.
func (c *Caller[A]) Call(name, args string) A {
	c.T.Helper()
	return c.Decode(c.Rec.Run(UserContext(c.Token), c.Tool(name), args))
}

// Decode decodes and checks the answer out of a tool whose error is err.
func (c *Caller[A]) Decode(out string, err error) A {
	c.T.Helper()
	a := Decode[A](c.T, out, err, c.Statuses...)
	if c.Check != nil {
		c.Check(a)
	}
	return a
}
