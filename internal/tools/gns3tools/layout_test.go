package gns3tools

import (
	"slices"
	"testing"

	"agentchat/internal/gns3"
)

func TestLayoutKeepsNodesApart(t *testing.T) {
	tests := []struct {
		name     string
		existing []gns3.Node
		fixed    []point
		count    int
	}{
		{"empty project", nil, nil, 20},
		{"seeded lab", []gns3.Node{
			{X: -300, Y: -100, Width: 65, Height: 59},
			{X: -300, Y: 100, Width: 65, Height: 59},
			{X: 0, Y: 0, Width: 72, Height: 32},
			{X: 300, Y: 0, Width: 66, Height: 45},
			{X: 100, Y: 300, Width: 159, Height: 71}, // a cloud
		}, nil, 20},
		{"fixed new nodes", []gns3.Node{{X: 0, Y: 0, Width: 66, Height: 45}}, []point{{200, 0}, {400, 0}, {0, 140}}, 10},
		{"crowded row", func() []gns3.Node {
			var ns []gns3.Node
			for i := range 12 {
				ns = append(ns, gns3.Node{X: i * 90, Y: 0, Width: 66, Height: 45})
			}
			return ns
		}(), nil, 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := layout(tt.existing, tt.fixed, tt.count)
			if len(got) != tt.count {
				t.Fatalf("layout gave %d positions, want %d", len(got), tt.count)
			}
			if again := layout(tt.existing, tt.fixed, tt.count); !slices.Equal(got, again) {
				t.Errorf("layout is not deterministic: %v then %v", got, again)
			}
			var rects []rect
			for _, n := range tt.existing {
				rects = append(rects, rect{n.X, n.Y, n.Width, n.Height})
			}
			for _, p := range tt.fixed {
				rects = append(rects, rect{p.x, p.y, footprintW, footprintH})
			}
			fixedCount := len(rects)
			for _, p := range got {
				rects = append(rects, rect{p.x, p.y, footprintW, footprintH})
			}
			for i := fixedCount; i < len(rects); i++ {
				for j := 0; j < i; j++ {
					if intersects(rects[i], rects[j]) {
						t.Errorf("new node at %v overlaps %v", rects[i], rects[j])
					}
				}
			}
		})
	}
}

// intersects is a plain rectangle intersection, without the layout gap.
func intersects(a, b rect) bool {
	return a.x < b.x+b.w && b.x < a.x+a.w && a.y < b.y+b.h && b.y < a.y+a.h
}
