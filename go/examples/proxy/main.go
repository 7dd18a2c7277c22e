// A proxy of an ACP proxy chain (a conductor runs it between the client and
// the agent), on acpengine.RunProxy: the contract of the Rust example
// core/examples/proxy.rs, which interop/conductor.sh runs chains with.
//
//	proxy [--name NAME] [--prefix TEXT] [--log FILE]
//
// It passes every message on unchanged, except that with --prefix it puts a
// text block of its own before every prompt, and it says what crossed it on
// stderr (and in FILE) as "[go-proxy NAME] -> method" (from the client side)
// and "<- method" (from the agent side).
//
//	acp-engine conduct "go run ./examples/proxy --name go" my-agent
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sync"

	acp "github.com/acp-engine/acp-engine/go"
)

type prefixer struct {
	acp.PassThrough
	name, prefix string
	mu           sync.Mutex
	log          io.Writer
}

func (p *prefixer) say(arrow, method string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.log, "[go-proxy %s] %s %s\n", p.name, arrow, method)
}

func (p *prefixer) ClientRequest(ctx context.Context, method string, params json.RawMessage, successor *acp.Conn) (any, error) {
	p.say("->", method)
	if p.prefix != "" && method == acp.MethodSessionPrompt {
		var prompt map[string]any
		if err := json.Unmarshal(params, &prompt); err != nil {
			return nil, acp.InvalidParams()
		}
		blocks, _ := prompt["prompt"].([]any)
		prompt["prompt"] = append([]any{map[string]any{"type": "text", "text": p.prefix}}, blocks...)
		rewritten, err := json.Marshal(prompt)
		if err != nil {
			return nil, err
		}
		params = rewritten
	}
	return acp.Forward(ctx, successor, method, params)
}

func (p *prefixer) AgentRequest(ctx context.Context, method string, params json.RawMessage, predecessor *acp.Conn) (any, error) {
	p.say("<-", method)
	return acp.Forward(ctx, predecessor, method, params)
}

func main() {
	name := flag.String("name", "", "the name it logs as (default: the prefix, else \"proxy\")")
	prefix := flag.String("prefix", "", "a text block to put before every prompt")
	logPath := flag.String("log", "", "a file to log what crossed it in, besides stderr")
	flag.Parse()
	proxy := &prefixer{name: *name, prefix: *prefix, log: os.Stderr}
	if proxy.name == "" {
		proxy.name = *prefix
	}
	if proxy.name == "" {
		proxy.name = "proxy"
	}
	if *logPath != "" {
		file, err := os.OpenFile(*logPath, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		defer file.Close()
		proxy.log = io.MultiWriter(os.Stderr, file)
	}
	if err := acp.RunProxy(proxy, nil); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "[go-proxy %s] closed\n", proxy.name)
}
