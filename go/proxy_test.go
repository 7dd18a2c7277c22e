package acpengine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	acp "github.com/acp-engine/acp-engine/go"
)

// loggingProxy passes everything on and says what crossed it on stderr.
type loggingProxy struct{ acp.PassThrough }

func (loggingProxy) ClientRequest(ctx context.Context, method string, params json.RawMessage, successor *acp.Conn) (any, error) {
	fmt.Fprintf(os.Stderr, "[go-test-proxy] -> %s\n", method)
	return acp.Forward(ctx, successor, method, params)
}

func (loggingProxy) AgentRequest(ctx context.Context, method string, params json.RawMessage, predecessor *acp.Conn) (any, error) {
	fmt.Fprintf(os.Stderr, "[go-test-proxy] <- %s\n", method)
	return acp.Forward(ctx, predecessor, method, params)
}

func runTestProxy() int {
	if err := acp.RunProxy(loggingProxy{}, nil); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// Our conductor runs this test binary as a proxy (ACP_GO_TEST_ROLE=proxy)
// in front of the Rust example agent, driven by the Rust example client
// through a whole session: prompt, permission, files, terminal, and a
// cancelled turn, whose cancellation crosses the proxy. The official Rust
// conductor runs the example proxy in interop/conductor.sh.
func TestAProxyPassesAWholeSessionThroughOurConductor(t *testing.T) {
	target, err := filepath.Abs(filepath.Join("..", "target", "debug"))
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(target, "examples", "client"), filepath.Join(target, "acp-engine"), "conduct",
		self, filepath.Join(target, "examples", "agent"))
	cmd.Env = append(os.Environ(), "ACP_GO_TEST_ROLE=proxy")
	out, err := cmd.CombinedOutput()
	text := string(out)
	if err != nil {
		t.Fatalf("%v:\n%s", err, text)
	}
	for _, want := range []string{"interop ok", "[go-test-proxy] -> session/prompt", "[go-test-proxy] <- session/request_permission",
		"[go-test-proxy] <- fs/read_text_file", "stop reason: cancelled"} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in:\n%s", want, text)
		}
	}
}
