package seerrtools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// parseSeasons reads the seasons argument: absent or "all" → all; an array
// of season numbers otherwise, sorted and without repeats.
func parseSeasons(raw json.RawMessage) (all bool, seasons []int, err error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return true, nil, nil
	}
	var str string
	if json.Unmarshal(raw, &str) == nil {
		if strings.EqualFold(strings.TrimSpace(str), "all") {
			return true, nil, nil
		}
		return false, nil, fmt.Errorf("invalid arguments: seasons must be an array of season numbers or \"all\", got %q", str)
	}
	var list []int
	if err := json.Unmarshal(raw, &list); err != nil {
		return false, nil, errors.New("invalid arguments: seasons must be an array of season numbers (integers) or \"all\"")
	}
	if len(list) == 0 {
		return false, nil, errors.New("invalid arguments: seasons is empty; give season numbers or \"all\"")
	}
	for _, n := range list {
		if n < 0 {
			return false, nil, fmt.Errorf("invalid arguments: season number %d is negative", n)
		}
	}
	slices.Sort(list)
	return false, slices.Compact(list), nil
}

// seasonsText is "season 2" or "seasons 1, 3".
func seasonsText(ns []int) string {
	if len(ns) == 1 {
		return "season " + strconv.Itoa(ns[0])
	}
	return "seasons " + joinInts(ns)
}

// joinInts is ns separated by commas.
func joinInts(ns []int) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, ", ")
}

// sortedKeys are the keys of m in increasing order.
func sortedKeys(m map[int]bool) []int {
	return slices.Sorted(maps.Keys(m))
}
