//go:build !unix

package magen_test

// setUmask reports that this system has no umask.
func setUmask(int) (old int, ok bool) { return 0, false }
