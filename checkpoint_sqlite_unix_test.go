//go:build unix

package magen_test

import "syscall"

// setUmask sets the process's umask and returns the old one.
func setUmask(mask int) (old int, ok bool) { return syscall.Umask(mask), true }
