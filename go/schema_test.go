package acpengine_test

import (
	"encoding/json"
	"reflect"
	"testing"

	acp "github.com/acp-engine/acp-engine/go"
)

// roundTrip reads text into a value of T and writes it back: the same JSON.
func roundTrip[T any](t *testing.T, text string) T {
	t.Helper()
	var value T
	if err := json.Unmarshal([]byte(text), &value); err != nil {
		t.Fatalf("read %s: %v", text, err)
	}
	out, err := json.Marshal(value)
	if err != nil {
		t.Fatalf("write %s: %v", text, err)
	}
	var want, got any
	_ = json.Unmarshal([]byte(text), &want)
	_ = json.Unmarshal(out, &got)
	if !reflect.DeepEqual(want, got) {
		t.Errorf("round trip of %s gave %s", text, out)
	}
	return value
}

func TestTaggedUnionsRoundTrip(t *testing.T) {
	chunk := roundTrip[acp.SessionUpdate](t, `{"content":{"text":"hi","type":"text"},"sessionUpdate":"agent_message_chunk"}`)
	if chunk.AgentMessageChunk == nil || chunk.AgentMessageChunk.Content.Text == nil || chunk.AgentMessageChunk.Content.Text.Text != "hi" {
		t.Errorf("agent_message_chunk read as %+v", chunk)
	}
	notice := roundTrip[acp.SessionUpdate](t, `{"sessionUpdate":"notice","severity":"warning","title":"Careful"}`)
	if notice.Notice == nil || notice.Notice.Severity != acp.NoticeSeverityWarning {
		t.Errorf("notice read as %+v", notice)
	}
	compaction := roundTrip[acp.SessionUpdate](t, `{"sessionUpdate":"compaction_summary_chunk","compactionId":"c","content":{"type":"text","text":"s"}}`)
	if compaction.CompactionSummaryChunk == nil || compaction.CompactionSummaryChunk.CompactionId != "c" {
		t.Errorf("compaction_summary_chunk read as %+v", compaction)
	}
	// An update kind from a newer schema passes through as it is.
	future := roundTrip[acp.SessionUpdate](t, `{"sessionUpdate":"hologram","depth":3,"nested":{"a":[1,2]}}`)
	if future.Unknown == nil {
		t.Errorf("an unknown update kind read as %+v", future)
	}
	roundTrip[acp.ContentBlock](t, `{"type":"video","uri":"x"}`)
	// A payload-less variant, and a default variant (no tag).
	outcome := roundTrip[acp.RequestPermissionOutcome](t, `{"outcome":"cancelled"}`)
	if !outcome.Cancelled {
		t.Errorf("cancelled read as %+v", outcome)
	}
	server := roundTrip[acp.McpServer](t, `{"name":"fs","command":"mcp-fs","args":[],"env":[]}`)
	if server.Stdio == nil || server.Stdio.Command != "mcp-fs" {
		t.Errorf("a stdio MCP server read as %+v", server)
	}
	http := roundTrip[acp.McpServer](t, `{"type":"http","name":"web","url":"https://x","headers":[]}`)
	if http.Http == nil {
		t.Errorf("an http MCP server read as %+v", http)
	}
}

func TestUnionsByShapeAndEmbeddedUnions(t *testing.T) {
	text := roundTrip[acp.EmbeddedResourceResource](t, `{"uri":"file:///a","text":"x"}`)
	blob := roundTrip[acp.EmbeddedResourceResource](t, `{"uri":"file:///a","blob":"eA=="}`)
	if text.TextResourceContents == nil || blob.BlobResourceContents == nil {
		t.Errorf("resources told apart by shape: %+v %+v", text, blob)
	}
	for _, id := range []string{`null`, `7`, `"seven"`} {
		roundTrip[acp.RequestId](t, id)
	}
	request := roundTrip[acp.SetSessionConfigOptionRequest](t, `{"sessionId":"s","configId":"c","type":"boolean","value":true}`)
	if request.Kind.Boolean == nil || !request.Kind.Boolean.Value || request.SessionId != "s" {
		t.Errorf("an object with a union part read as %+v", request)
	}
	elicitation := roundTrip[acp.CreateElicitationRequest](t, `{"message":"m","mode":"url","elicitationId":"e","url":"https://x","sessionId":"s"}`)
	if elicitation.Mode.Url == nil || elicitation.Mode.Url.Scope.Session == nil {
		t.Errorf("nested union parts read as %+v", elicitation)
	}
}

func TestRequiredArraysAreWrittenEvenWhenNil(t *testing.T) {
	out, err := json.Marshal(acp.NewSessionRequest{Cwd: "/tmp"})
	if err != nil || string(out) != `{"cwd":"/tmp","mcpServers":[]}` {
		t.Errorf("got %s %v", out, err)
	}
}
