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
