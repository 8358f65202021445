//go:build unix

package main

import (
	"os/exec"
	"syscall"
)

// ownGroup makes cmd lead a process group of its own, so that killGroup
// stops the browser's helper processes (renderers, GPU, zygote) with it:
// killing only the leader leaves them writing into the profile.
func ownGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

func killGroup(cmd *exec.Cmd) {
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	_ = cmd.Wait()
}
