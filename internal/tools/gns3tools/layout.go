package gns3tools

import "agentchat/internal/gns3"

// Placement of new nodes. GNS3 places a node by the top left corner of its
// symbol; the size of a node is known only once it exists, so a new node
// is given a footprint larger than the usual symbols (routers, switches,
// PCs, clouds), and nodes are kept a gap apart, leaving room for labels.
const (
	footprintW  = 160
	footprintH  = 100
	layoutGap   = 40
	layoutStepX = footprintW + layoutGap
	layoutStepY = footprintH + layoutGap
	minColumns  = 6
)

// rect is an area of the scene.
type rect struct{ x, y, w, h int }

// overlaps reports whether r and o, each grown by half the gap on every
// side, intersect.
func (r rect) overlaps(o rect) bool {
	const m = layoutGap / 2
	return r.x-m < o.x+o.w+m && o.x-m < r.x+r.w+m && r.y-m < o.y+o.h+m && o.y-m < r.y+r.h+m
}

// nodeRect is the area a node covers (at least the new-node footprint, so
// that a node whose size is not reported is still kept clear of).
func nodeRect(n gns3.Node) rect {
	return rect{n.X, n.Y, max(n.Width, footprintW), max(n.Height, footprintH)}
}

// point is a scene position.
type point struct{ x, y int }

// layout returns count positions, clear of the existing nodes, of the new
// nodes placed by the model (fixed) and of one another. It scans a grid
// row by row, from the top left of the existing nodes (the scene centre
// when there are none), as wide as they are and at least minColumns, so
// the same lab always gets the same positions.
func layout(existing []gns3.Node, fixed []point, count int) []point {
	var taken []rect
	for _, n := range existing {
		taken = append(taken, nodeRect(n))
	}
	for _, p := range fixed {
		taken = append(taken, rect{p.x, p.y, footprintW, footprintH})
	}
	x0, y0, cols, rows := 0, 0, minColumns, count
	if len(taken) > 0 {
		minX, minY, maxX, maxY := taken[0].x, taken[0].y, taken[0].x+taken[0].w, taken[0].y+taken[0].h
		for _, r := range taken[1:] {
			minX, minY = min(minX, r.x), min(minY, r.y)
			maxX, maxY = max(maxX, r.x+r.w), max(maxY, r.y+r.h)
		}
		x0, y0 = minX, minY
		cols = max(minColumns, (maxX-minX)/layoutStepX+1)
		// The rows below every node are free: the scan always ends.
		rows = (maxY-minY)/layoutStepY + 2 + count
	}
	out := make([]point, 0, count)
	for row := 0; row < rows && len(out) < count; row++ {
		for col := 0; col < cols && len(out) < count; col++ {
			c := rect{x0 + col*layoutStepX, y0 + row*layoutStepY, footprintW, footprintH}
			if isClear(c, taken) {
				taken = append(taken, c)
				out = append(out, point{c.x, c.y})
			}
		}
	}
	return out
}

func isClear(c rect, taken []rect) bool {
	for _, t := range taken {
		if c.overlaps(t) {
			return false
		}
	}
	return true
}
