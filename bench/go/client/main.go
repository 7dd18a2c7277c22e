// The benchmark client (bench/README.md) in Go on the acpengine package:
//
//	go-bench-client --scenario <stream|rpc|perm|concurrent|large|setup> --n <N> -- <agent command...>
//
// Spawns the agent, sends initialize and session/new, then (unless the
// scenario is `setup`) one session/prompt "<scenario> <N>", counting what it
// serves. A response is delivered only after the notifications received
// before it were handled, so the count is final when the prompt returns.
// Prints one JSON line; exits 0 iff count == N and the turn ended end_turn.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	acp "github.com/acp-engine/acp-engine/go"
)

const largeSize = 16 * 1024 * 1024

type benchClient struct {
	count     atomic.Int64
	large     bool
	largeRead string
	arrivals  arrivals
}

// arrivals: when each request arrived (rpc, perm); p50 and p99 of the gaps
// are the round trips as bench/floor measures them.
type arrivals struct {
	timed bool
	mu    sync.Mutex
	at    []time.Time
}

func (a *arrivals) arrived() {
	if !a.timed {
		return
	}
	a.mu.Lock()
	a.at = append(a.at, time.Now())
	a.mu.Unlock()
}

// addTo adds p50_us and p99_us to the result line (nothing when not timed).
func (a *arrivals) addTo(line map[string]any) {
	if len(a.at) < 2 {
		return
	}
	trips := make([]float64, len(a.at)-1)
	for i := range trips {
		trips[i] = float64(a.at[i+1].Sub(a.at[i]).Nanoseconds()) / 1e3
	}
	sort.Float64s(trips)
	line["p50_us"] = trips[len(trips)/2]
	line["p99_us"] = trips[len(trips)*99/100]
}

func (c *benchClient) SessionUpdate(ctx context.Context, params *acp.SessionNotification) error {
	c.count.Add(1)
	return nil
}

func (c *benchClient) RequestPermission(ctx context.Context, params *acp.RequestPermissionRequest) (*acp.RequestPermissionResponse, error) {
	c.arrivals.arrived()
	c.count.Add(1)
	return &acp.RequestPermissionResponse{Outcome: acp.RequestPermissionOutcome{Selected: &acp.SelectedPermissionOutcome{OptionId: "allow"}}}, nil
}

func (c *benchClient) ReadTextFile(ctx context.Context, params *acp.ReadTextFileRequest) (*acp.ReadTextFileResponse, error) {
	if c.large {
		return &acp.ReadTextFileResponse{Content: c.largeRead}, nil
	}
	c.arrivals.arrived()
	c.count.Add(1)
	return &acp.ReadTextFileResponse{Content: "hello"}, nil
}

func (c *benchClient) WriteTextFile(ctx context.Context, params *acp.WriteTextFileRequest) (*acp.WriteTextFileResponse, error) {
	if len(params.Content) == largeSize {
		c.count.Add(1)
	}
	return &acp.WriteTextFileResponse{}, nil
}

func fail(what string, err error) {
	fmt.Fprintf(os.Stderr, "go-bench-client: %s: %v\n", what, err)
	os.Exit(1)
}

func main() {
	start := time.Now()
	scenario := flag.String("scenario", "", "stream, rpc, perm, concurrent, large or setup")
	n := flag.Int("n", -1, "how many")
	flag.Parse()
	agentCommand := flag.Args()
	if *scenario == "" || *n < 0 || len(agentCommand) == 0 {
		fmt.Fprintln(os.Stderr, "usage: go-bench-client --scenario <scenario> --n <N> -- <agent command...>")
		os.Exit(2)
	}
	client := &benchClient{large: *scenario == "large"}
	client.arrivals.timed = *scenario == "rpc" || *scenario == "perm"
	if client.large {
		client.largeRead = strings.Repeat("x", largeSize)
	}
	ctx := context.Background()
	agent, err := acp.SpawnAgent(func(*acp.ClientSideConnection) acp.Client { return client }, agentCommand[0], agentCommand[1:]...)
	if err != nil {
		fail("spawn", err)
	}
	yes := true
	if _, err := agent.Initialize(ctx, &acp.InitializeRequest{ProtocolVersion: 1, ClientCapabilities: &acp.ClientCapabilities{
		Fs: &acp.FileSystemCapabilities{ReadTextFile: &yes, WriteTextFile: &yes},
	}}); err != nil {
		fail(acp.MethodInitialize, err)
	}
	session, err := agent.NewSession(ctx, &acp.NewSessionRequest{Cwd: "/tmp"})
	if err != nil {
		fail(acp.MethodSessionNew, err)
	}
	setup := time.Since(start).Seconds()
	run, ok := setup, true
	count := int64(*n)
	if *scenario != "setup" {
		began := time.Now()
		turn, err := agent.Prompt(ctx, &acp.PromptRequest{SessionId: session.SessionId, Prompt: []acp.ContentBlock{
			{Text: &acp.TextContent{Text: fmt.Sprintf("%s %d", *scenario, *n)}},
		}})
		if err != nil {
			fail(acp.MethodSessionPrompt, err)
		}
		run = time.Since(began).Seconds()
		count = client.count.Load()
		ok = turn.StopReason == acp.StopReasonEndTurn && count == int64(*n)
	}
	_ = agent.Close()
	result := map[string]any{
		"client": "acp-engine-go", "scenario": *scenario, "n": *n, "setup_s": setup, "run_s": run, "count": count, "ok": ok,
	}
	client.arrivals.addTo(result)
	line, _ := json.Marshal(result)
	fmt.Println(string(line))
	if !ok {
		os.Exit(1)
	}
}
