package benche2e

import (
	"os/exec"
	"syscall"
)

// setDeathSignal makes the kernel kill the child when the benchmark dies.
func setDeathSignal(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
