package gns3tools

import (
	"context"
	"errors"
	"fmt"
	"time"

	"agentchat/internal/gns3"
	"agentchat/internal/tools/toolkit"
)

// waitStatus polls the node every PollInterval, from now on, until its
// status is target, and returns the last status seen. It gives up when
// timeout has passed (an error naming the status the node is stuck in),
// when the caller's ctx is done (at once), or when GNS3 refuses the poll
// for good (the node is gone, the user lacks the permission). A poll that
// fails for a passing reason (a slow or unreachable controller) is tried
// again at the next period.
func (c *call) waitStatus(ctx context.Context, n *gns3.Node, target string, timeout time.Duration) (string, error) {
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(c.poll)
	defer tick.Stop()
	last := n.Status
	var lastErr error
	for {
		var got *gns3.Node
		err := c.limit(wctx, func() (err error) {
			got, err = c.client.GetNode(wctx, c.Token, c.ProjectID, n.NodeID)
			return err
		})
		switch {
		case err == nil:
			last, lastErr = got.Status, nil
			if last == target {
				return last, nil
			}
		case ctx.Err() != nil:
			return last, stoppedWaiting(ctx, n, target, last)
		case wctx.Err() != nil: // this poll was cut by the end of the wait
			return last, waitTimedOut(n, target, timeout, last, lastErr)
		case permanent(err):
			return last, err
		default:
			lastErr = err
		}
		select {
		case <-ctx.Done():
			return last, stoppedWaiting(ctx, n, target, last)
		case <-wctx.Done():
			return last, waitTimedOut(n, target, timeout, last, lastErr)
		case <-tick.C:
		}
	}
}

// permanent reports whether a poll error will not go away by waiting.
func permanent(err error) bool {
	var se *gns3.StatusError
	return errors.As(err, &se) && se.StatusCode >= 400 && se.StatusCode < 500 && se.StatusCode != 408 && se.StatusCode != 429
}

func waitTimedOut(n *gns3.Node, target string, timeout time.Duration, last string, lastErr error) error {
	msg := fmt.Sprintf("%s did not become %s within %s; status: %s", n.Name, target, timeout, statusText(last))
	if lastErr != nil {
		msg += "; last poll: " + toolkit.Describe(lastErr)
	}
	return toolkit.Errorf("%s", msg)
}

func stoppedWaiting(ctx context.Context, n *gns3.Node, target, last string) error {
	why := "cancelled"
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		why = "the tool ran out of time"
	}
	return toolkit.Errorf("stopped waiting for %s to become %s (%s); status: %s", n.Name, target, why, statusText(last))
}

func statusText(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
