//go:build !linux

// Package fsnotice: inotify is Linux's; elsewhere nothing is local to a
// watcher and there is no mount table to poll.
package fsnotice

import "errors"

// Local reports false: no watcher here trusts its silence.
func Local(string) bool { return false }

// Mounts is not had here.
type Mounts struct{}

// OpenMounts fails here.
func OpenMounts() (*Mounts, error) { return nil, errors.New("no mount table to poll on this system") }

func (m *Mounts) Fd() int       { return -1 }
func (m *Mounts) Changed() bool { return true }
func (m *Mounts) Close()        {}
