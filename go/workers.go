package acpengine

import "sync/atomic"

// workers run the peer's requests, each on a goroutine of its own. A
// goroutine that finished one waits for the next (up to maxIdleWorkers of
// them wait): a new goroutine starts with a small stack, and a handler's
// path (decoding, the handler, the answer through cgo) grows it every time.
type workers struct {
	jobs chan func()
	idle atomic.Int32
}

const maxIdleWorkers = 16

// run starts job on an idle worker, or on a new goroutine.
func (w *workers) run(job func()) {
	select {
	case w.jobs <- job:
	default:
		go w.work(job)
	}
}

func (w *workers) work(job func()) {
	for {
		job()
		if w.idle.Add(1) > maxIdleWorkers {
			w.idle.Add(-1)
			return
		}
		next, open := <-w.jobs
		w.idle.Add(-1)
		if !open {
			return
		}
		job = next
	}
}

// stop ends the idle workers (no job may be run afterwards).
func (w *workers) stop() { close(w.jobs) }
