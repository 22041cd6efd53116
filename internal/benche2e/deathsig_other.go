//go:build !linux

package benche2e

import "os/exec"

// setDeathSignal does nothing where the kernel has no parent-death
// signal; Stop still ends the children.
func setDeathSignal(*exec.Cmd) {}
