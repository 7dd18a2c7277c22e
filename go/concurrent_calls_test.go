package acpengine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"strings"
	"sync"
	"testing"
	"time"

	acp "github.com/acp-engine/acp-engine/go"
)

// slowEchoHandler answers with the params, after a delay the params name.
type slowEchoHandler struct{}

func (slowEchoHandler) HandleRequest(ctx context.Context, method string, params json.RawMessage) (any, error) {
	var p struct {
		DelayUs int `json:"delayUs"`
	}
	_ = json.Unmarshal(params, &p)
	select {
	case <-time.After(time.Duration(p.DelayUs) * time.Microsecond):
		return params, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (slowEchoHandler) HandleNotification(ctx context.Context, method string, params json.RawMessage) error {
	return nil
}

// Concurrent Calls (sent by the connection's sender, answered by the
// dispatch thread) with timeouts that fire before, while and after they
// are sent and answered: each gets its own answer or its ctx's error,
// large answers too, and a Call after the close fails at once.
func TestConcurrentCallsRacingTheirCancellation(t *testing.T) {
	aToB, bToA := pipe(t), pipe(t)
	a, err := acp.NewConnection(echoHandler{}, acp.FDStream(bToA[0], aToB[1]), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := acp.NewConnection(slowEchoHandler{}, acp.FDStream(aToB[0], bToA[1]), nil)
	if err != nil {
		t.Fatal(err)
	}
	large := strings.Repeat("y", 100*1024) // decoded by the Call, not the callback
	const goroutines = 2000
	failures := make(chan error, goroutines)
	var wg sync.WaitGroup
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			random := rand.New(rand.NewSource(int64(g)))
			ctx, cancel := context.WithTimeout(context.Background(), time.Duration(random.Intn(3000))*time.Microsecond)
			defer cancel()
			sent := map[string]any{"g": g, "delayUs": random.Intn(2000)}
			if g%50 == 0 {
				sent["large"] = large
			}
			var got map[string]any
			err := a.Call(ctx, "_test/echo", sent, &got)
			switch {
			case err == nil:
				if got["g"] != float64(g) || (g%50 == 0 && got["large"] != large) {
					failures <- fmt.Errorf("call %d answered %v", g, got["g"])
				}
			case errors.Is(err, context.DeadlineExceeded):
			default:
				failures <- fmt.Errorf("call %d: %v", g, err)
			}
		}(g)
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-time.After(time.Minute):
		t.Fatal("the calls did not complete in a minute")
	}
	close(failures)
	for err := range failures {
		t.Error(err)
	}
	if err := a.Close(); err != nil {
		t.Error(err)
	}
	<-b.Done()
	if err := a.Call(context.Background(), "_test/echo", nil, nil); !acp.IsConnectionClosed(err) {
		t.Errorf("a call after the close: %v", err)
	}
}
