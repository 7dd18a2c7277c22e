package acpengine

import "io"

// SetLogOutput makes the package log to w until restore is called (tests
// read what it logs).
func SetLogOutput(w io.Writer) (restore func()) {
	logLock.Lock()
	defer logLock.Unlock()
	previous := logOutput
	logOutput = w
	return func() {
		logLock.Lock()
		defer logLock.Unlock()
		logOutput = previous
	}
}

// WatchesCalls says whether c still has a watch over the ctx of Calls of
// Go (it should not once they all finished).
func WatchesCalls(c *Conn) bool {
	c.watches.mu.Lock()
	defer c.watches.mu.Unlock()
	return c.watches.latest != nil
}
