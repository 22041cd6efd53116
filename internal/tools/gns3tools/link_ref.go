package gns3tools

import (
	"context"
	"regexp"
	"strings"
	"sync"

	"agentchat/internal/gns3"
	"agentchat/internal/tools/toolkit"
)

// maxLinkRef bounds the link argument of the link tools.
const maxLinkRef = 300

// linkRefHelp tells the model how to name a link.
const linkRefHelp = "The link: its link_id, or its ends as node:port, for example 'R1:Gi0/0,R2:Gi0/1' " +
	"(one end is enough: a port carries one link)."

// endSeparators split a link reference into its two ends.
var endSeparators = regexp.MustCompile(`\s*(?:,|<-+>|-{2,}>?|\s-\s)\s*`)

// foundLink is a link resolved from the model's reference, with its ends
// named "<node> <port>".
type foundLink struct {
	link gns3.Link
	ends string
}

// resolveLink finds the link ref names among the project's links: by
// link_id, or by one or both of its node:port ends.
func (c *call) resolveLink(ctx context.Context, ref string) (*foundLink, error) {
	var (
		nodes   toolkit.Nodes
		links   []gns3.Link
		nErr    error
		lErr    error
		wg      sync.WaitGroup
		trimmed = strings.TrimSpace(ref)
	)
	wg.Go(func() { nodes, nErr = c.nodes(ctx) })
	wg.Go(func() {
		lErr = c.limit(ctx, func() (err error) {
			links, err = c.client.GetLinks(ctx, c.Token, c.ProjectID)
			return err
		})
	})
	wg.Wait()
	if lErr != nil {
		return nil, toolkit.Errorf("cannot read the project's links: %s", toolkit.Describe(lErr))
	}
	if nErr != nil {
		return nil, toolkit.Errorf("cannot read the project's nodes: %s", toolkit.Describe(nErr))
	}
	found := func(l gns3.Link) *foundLink {
		var names []string
		for _, e := range l.Nodes {
			names = append(names, endName(nodes, e))
		}
		return &foundLink{link: l, ends: strings.Join(names, " <-> ")}
	}
	if gns3.ValidID(trimmed) {
		for _, l := range links {
			if strings.EqualFold(l.LinkID, trimmed) {
				return found(l), nil
			}
		}
		return nil, toolkit.Errorf("link %s not found in the project (%d links)", trimmed, len(links))
	}
	parts := endSeparators.Split(trimmed, -1)
	if f := strings.Fields(trimmed); len(parts) == 1 && len(f) == 2 && strings.Contains(f[0], ":") && strings.Contains(f[1], ":") {
		parts = f
	}
	if len(parts) > 2 || trimmed == "" {
		return nil, toolkit.Errorf("link '%s': give a link_id, or one or two ends as node:port ('R1:Gi0/0,R2:Gi0/1')", trimmed)
	}
	var want []gns3.LinkEnd
	var named []string
	for _, p := range parts {
		i := strings.LastIndex(p, ":")
		if i <= 0 || i == len(p)-1 {
			return nil, toolkit.Errorf("link end '%s': write it node:port, for example R1:Gi0/0", p)
		}
		var nodeName, portName string
		e, err := resolveEnd(nodes, p[:i], p[i+1:], &nodeName, &portName)
		if err != nil {
			return nil, err
		}
		want = append(want, e)
		named = append(named, nodeName+" "+portName)
	}
	for _, l := range links {
		if linkHasEnds(l, want) {
			return found(l), nil
		}
	}
	return nil, toolkit.Errorf("no link joins %s", strings.Join(named, " and "))
}

// linkHasEnds reports whether every end of want is an end of l.
func linkHasEnds(l gns3.Link, want []gns3.LinkEnd) bool {
	for _, w := range want {
		hit := false
		for _, e := range l.Nodes {
			hit = hit || (e.NodeID == w.NodeID && e.AdapterNumber == w.AdapterNumber && e.PortNumber == w.PortNumber)
		}
		if !hit {
			return false
		}
	}
	return true
}
