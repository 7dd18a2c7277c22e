//! The generated protocol types (`acp_engine::schema`) against real wire JSON.
//!
//! Every sample is deserialized and serialized back, and must come out exactly as it went
//! in: as is, with an unknown property added at the top level and inside nested objects,
//! and with `_meta`. Run with and without `--features unstable`.

use acp_engine::schema::*;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};

/// `from_value` then `to_value` must give back `wire` exactly.
fn round_trip<T: DeserializeOwned + Serialize + std::fmt::Debug>(wire: &Value) -> T {
    let typed: T = serde_json::from_value(wire.clone()).unwrap_or_else(|e| {
        panic!(
            "{} does not deserialize: {e}\n{wire:#}",
            std::any::type_name::<T>()
        )
    });
    let back = serde_json::to_value(&typed).unwrap();
    assert_eq!(&back, wire, "{} does not round-trip", std::any::type_name::<T>());
    // Also through text, the way messages really travel.
    let text = serde_json::to_string(&typed).unwrap();
    let again: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        &again,
        wire,
        "{} does not round-trip as text",
        std::any::type_name::<T>()
    );
    typed
}

/// Round-trips `wire`, then `wire` with `"x-future": 1` added to the object at each JSON
/// pointer in `unknown_at` (`""` is the top level), one at a time and all together.
fn check<T: DeserializeOwned + Serialize + std::fmt::Debug>(wire: Value, unknown_at: &[&str]) -> T {
    let typed = round_trip::<T>(&wire);
    let mut all = wire.clone();
    for pointer in unknown_at {
        let mut one = wire.clone();
        add_unknown(&mut one, pointer);
        add_unknown(&mut all, pointer);
        round_trip::<T>(&one);
    }
    round_trip::<T>(&all);
    typed
}

fn add_unknown(value: &mut Value, pointer: &str) {
    let target = value
        .pointer_mut(pointer)
        .and_then(Value::as_object_mut)
        .unwrap_or_else(|| panic!("no object at {pointer:?}"));
    target.insert("x-future".into(), json!({"nested": [1, 2.5, "three", null]}));
}

fn meta() -> Value {
    json!({"traceId": "abc", "n": 1})
}

// ---------------------------------------------------------------------------------------
// initialize

#[test]
fn initialize_request_and_response() {
    let request = check::<InitializeRequest>(
        json!({
            "protocolVersion": 1,
            "clientCapabilities": {
                "fs": {"readTextFile": true, "writeTextFile": false, "_meta": meta()},
                "terminal": true,
                "auth": {"terminal": true},
                "elicitation": {"form": {}, "url": {}},
                "session": {"configOptions": {"boolean": {}}}
            },
            "clientInfo": {"name": "zed", "title": "Zed", "version": "0.200.0"},
            "_meta": meta()
        }),
        &[
            "",
            "/clientCapabilities",
            "/clientCapabilities/fs",
            "/clientInfo",
            "/clientCapabilities/elicitation/form",
        ],
    );
    assert_eq!(request.protocol_version, 1);
    let caps = request.client_capabilities.as_ref().unwrap();
    assert_eq!(caps.fs.as_ref().unwrap().read_text_file, Some(true));
    assert_eq!(caps.terminal, Some(true));
    assert_eq!(request.client_info.as_ref().unwrap().name, "zed");
    assert_eq!(request.meta.as_ref().unwrap()["traceId"], "abc");

    let response = check::<InitializeResponse>(
        json!({
            "protocolVersion": 1,
            "agentCapabilities": {
                "loadSession": true,
                "promptCapabilities": {"image": true, "audio": false, "embeddedContext": true},
                "mcpCapabilities": {"http": true, "sse": false},
                "sessionCapabilities": {"list": {}, "resume": {}, "close": {}},
                "auth": {"logout": {}}
            },
            "authMethods": [
                {"id": "oauth", "name": "Log in", "description": "Opens a browser"},
                {"type": "terminal", "id": "tty", "name": "Terminal login", "args": ["login"], "env": {"A": "1"}}
            ],
            "agentInfo": {"name": "my-agent", "version": "1.0.0"}
        }),
        &[
            "",
            "/agentCapabilities",
            "/agentCapabilities/promptCapabilities",
            "/agentCapabilities/sessionCapabilities/list",
            "/authMethods/0",
            "/authMethods/1",
            "/agentInfo",
        ],
    );
    let agent_caps = response.agent_capabilities.as_ref().unwrap();
    assert_eq!(agent_caps.load_session, Some(true));
    assert_eq!(agent_caps.prompt_capabilities.as_ref().unwrap().image, Some(true));
    assert!(matches!(
        response.auth_methods.as_deref(),
        Some([AuthMethod::Agent(_), AuthMethod::Terminal(_)])
    ));

    // The smallest valid messages: every capability is optional.
    let minimal = round_trip::<InitializeRequest>(&json!({"protocolVersion": 1}));
    assert!(minimal.client_capabilities.is_none());
    assert_eq!(
        serde_json::to_value(InitializeRequest::new(1)).unwrap(),
        json!({"protocolVersion": 1})
    );
}

// ---------------------------------------------------------------------------------------
// sessions

#[test]
fn new_session_with_stdio_http_and_sse_mcp_servers() {
    let request = check::<NewSessionRequest>(
        json!({
            "cwd": "/home/me/project",
            "mcpServers": [
                {
                    "name": "files",
                    "command": "/usr/bin/mcp-files",
                    "args": ["--root", "/"],
                    "env": [{"name": "TOKEN", "value": "t"}]
                },
                {"type": "http", "name": "web", "url": "https://mcp.example/", "headers": [{"name": "Authorization", "value": "Bearer x"}]},
                {"type": "sse", "name": "events", "url": "https://sse.example/", "headers": []}
            ],
            "_meta": meta()
        }),
        &[
            "",
            "/mcpServers/0",
            "/mcpServers/0/env/0",
            "/mcpServers/1",
            "/mcpServers/1/headers/0",
            "/mcpServers/2",
        ],
    );
    match &request.mcp_servers[..] {
        [McpServer::Stdio(stdio), McpServer::Http(http), McpServer::Sse(sse)] => {
            assert_eq!(stdio.command, "/usr/bin/mcp-files");
            assert_eq!(stdio.env[0].name, "TOKEN");
            assert_eq!(http.url, "https://mcp.example/");
            assert_eq!(sse.name, "events");
        }
        other => panic!("unexpected servers {other:?}"),
    }

    // Built in Rust, the tags are written.
    let http = McpServer::Http(McpServerHttp::new("web", "https://mcp.example/", vec![]));
    assert_eq!(
        serde_json::to_value(&http).unwrap(),
        json!({"type": "http", "name": "web", "url": "https://mcp.example/", "headers": []})
    );
    let stdio = McpServer::from(McpServerStdio::new("files", "mcp-files", vec![], vec![]));
    assert_eq!(
        serde_json::to_value(&stdio).unwrap(),
        json!({"name": "files", "command": "mcp-files", "args": [], "env": []})
    );

    // Dispatch is on the tag: a broken http server is an error about http, not a stdio server.
    let err = serde_json::from_value::<McpServer>(json!({"type": "http", "name": "web", "headers": []}))
        .unwrap_err()
        .to_string();
    assert!(err.contains("url"), "{err}");

    check::<NewSessionResponse>(
        json!({
            "sessionId": "sess-1",
            "modes": {
                "currentModeId": "ask",
                "availableModes": [{"id": "ask", "name": "Ask"}, {"id": "code", "name": "Code", "description": "Writes code"}]
            },
            "configOptions": [
                {
                    "id": "model",
                    "name": "Model",
                    "category": "model",
                    "type": "select",
                    "currentValue": "fast",
                    "options": [{"value": "fast", "name": "Fast"}, {"value": "smart", "name": "Smart"}]
                }
            ]
        }),
        &[
            "",
            "/modes",
            "/modes/availableModes/1",
            "/configOptions/0",
            "/configOptions/0/options/0",
        ],
    );
}

#[test]
fn load_list_delete_resume_close_and_modes() {
    check::<LoadSessionRequest>(
        json!({"sessionId": "s", "cwd": "/p", "mcpServers": [], "_meta": meta()}),
        &[""],
    );
    check::<LoadSessionResponse>(
        json!({"modes": {"currentModeId": "a", "availableModes": []}}),
        &["", "/modes"],
    );
    check::<LoadSessionResponse>(json!({}), &[""]);
    check::<ListSessionsRequest>(json!({"cwd": "/p", "cursor": "c1"}), &[""]);
    let list = check::<ListSessionsResponse>(
        json!({
            "sessions": [{"sessionId": "s", "cwd": "/p", "title": "Fix bug", "updatedAt": "2025-01-01T00:00:00Z"}],
            "nextCursor": "c2"
        }),
        &["", "/sessions/0"],
    );
    assert_eq!(list.sessions[0].session_id, "s");
    check::<DeleteSessionRequest>(json!({"sessionId": "s"}), &[""]);
    check::<DeleteSessionResponse>(json!({}), &[""]);
    check::<ResumeSessionRequest>(json!({"sessionId": "s", "cwd": "/p", "mcpServers": []}), &[""]);
    check::<ResumeSessionResponse>(json!({"configOptions": []}), &[""]);
    check::<CloseSessionRequest>(json!({"sessionId": "s"}), &[""]);
    check::<CloseSessionResponse>(json!({"_meta": meta()}), &[""]);
    check::<SetSessionModeRequest>(json!({"sessionId": "s", "modeId": "code"}), &[""]);
    check::<SetSessionModeResponse>(json!({}), &[""]);
    check::<AuthenticateRequest>(json!({"methodId": "oauth"}), &[""]);
    check::<AuthenticateResponse>(json!({}), &[""]);
    check::<LogoutRequest>(json!({}), &[""]);
    check::<LogoutResponse>(json!({}), &[""]);
    check::<CancelNotification>(json!({"sessionId": "s", "_meta": meta()}), &[""]);
    check::<CancelRequestNotification>(json!({"requestId": 7}), &[""]);
    check::<CancelRequestNotification>(json!({"requestId": "req-7"}), &[""]);
}

#[test]
fn set_session_config_option_value_and_boolean() {
    let by_value = check::<SetSessionConfigOptionRequest>(
        json!({"sessionId": "s", "configId": "model", "value": "smart", "_meta": meta()}),
        &[""],
    );
    assert!(matches!(&by_value.kind, SetSessionConfigOptionRequestKind::ValueId(v) if v.value == "smart"));
    let boolean = check::<SetSessionConfigOptionRequest>(
        json!({"sessionId": "s", "configId": "think", "type": "boolean", "value": true}),
        &[""],
    );
    assert!(matches!(&boolean.kind, SetSessionConfigOptionRequestKind::Boolean(v) if v.value));
    // Unknown fields belong to the request itself, not to the variant.
    let with_unknown: SetSessionConfigOptionRequest =
        serde_json::from_value(json!({"sessionId": "s", "configId": "m", "value": "v", "x-future": 1}))
            .unwrap();
    assert_eq!(with_unknown.extra["x-future"], 1);

    let built = SetSessionConfigOptionRequest::new(
        "s",
        "think",
        SetSessionConfigOptionRequestKind::Boolean(SetSessionConfigOptionRequestBoolean::new(false)),
    );
    assert_eq!(
        serde_json::to_value(&built).unwrap(),
        json!({"sessionId": "s", "configId": "think", "type": "boolean", "value": false})
    );
    check::<SetSessionConfigOptionResponse>(
        json!({"configOptions": [{"id": "think", "name": "Think", "type": "boolean", "currentValue": true}]}),
        &["", "/configOptions/0"],
    );
}

#[test]
fn session_config_option_select_grouped_and_boolean() {
    let grouped = check::<SessionConfigOption>(
        json!({
            "id": "model",
            "name": "Model",
            "description": "Which model answers",
            "category": "some_future_category",
            "type": "select",
            "currentValue": "a",
            "options": [
                {"group": "g1", "name": "Group 1", "options": [{"value": "a", "name": "A"}]}
            ],
            "_meta": meta()
        }),
        &["", "/options/0", "/options/0/options/0"],
    );
    assert_eq!(
        grouped.category,
        Some(SessionConfigOptionCategory::Unknown(
            "some_future_category".into()
        ))
    );
    match &grouped.kind {
        SessionConfigOptionKind::Select(select) => {
            assert_eq!(select.current_value, "a");
            assert!(
                matches!(&select.options, SessionConfigSelectOptions::Grouped(g) if g[0].options.len() == 1)
            );
        }
        other => panic!("{other:?}"),
    }
    let boolean = check::<SessionConfigOption>(
        json!({"id": "t", "name": "Thinking", "category": "thought_level", "type": "boolean", "currentValue": false}),
        &[""],
    );
    assert_eq!(boolean.category, Some(SessionConfigOptionCategory::ThoughtLevel));
    assert!(boolean.extra.is_empty());

    let err =
        serde_json::from_value::<SessionConfigOption>(json!({"id": "t", "name": "T", "type": "slider"}))
            .unwrap_err()
            .to_string();
    assert!(err.contains("slider") && err.contains("select"), "{err}");
}

// ---------------------------------------------------------------------------------------
// prompt turn

#[test]
fn prompt_request_with_every_content_block() {
    let request = check::<PromptRequest>(
        json!({
            "sessionId": "sess-1",
            "prompt": [
                {"type": "text", "text": "Explain this", "annotations": {"audience": ["user"], "priority": 0.5}},
                {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png", "uri": "file:///a.png"},
                {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"},
                {"type": "resource_link", "uri": "file:///src/main.rs", "name": "main.rs", "mimeType": "text/x-rust", "size": 1234},
                {"type": "resource", "resource": {"uri": "file:///notes.md", "text": "# Notes", "mimeType": "text/markdown"}},
                {"type": "resource", "resource": {"uri": "file:///blob.bin", "blob": "AAEC"}}
            ],
            "_meta": meta()
        }),
        &[
            "",
            "/prompt/0",
            "/prompt/0/annotations",
            "/prompt/1",
            "/prompt/2",
            "/prompt/3",
            "/prompt/4",
            "/prompt/4/resource",
            "/prompt/5/resource",
        ],
    );
    assert!(matches!(&request.prompt[0], ContentBlock::Text(t) if t.text == "Explain this"));
    assert!(matches!(&request.prompt[1], ContentBlock::Image(i) if i.mime_type == "image/png"));
    assert!(matches!(&request.prompt[3], ContentBlock::ResourceLink(l) if l.size == Some(1234)));
    match &request.prompt[4] {
        ContentBlock::Resource(r) => {
            assert!(
                matches!(&r.resource, EmbeddedResourceResource::TextResourceContents(t) if t.text == "# Notes")
            )
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        &request.prompt[5],
        ContentBlock::Resource(r) if matches!(&r.resource, EmbeddedResourceResource::BlobResourceContents(_))
    ));

    let built = PromptRequest::new("sess-1", vec![ContentBlock::from(TextContent::new("hi"))]);
    assert_eq!(
        serde_json::to_value(&built).unwrap(),
        json!({"sessionId": "sess-1", "prompt": [{"type": "text", "text": "hi"}]})
    );
}

#[test]
fn prompt_response_and_stop_reasons() {
    for reason in [
        "end_turn",
        "max_tokens",
        "max_turn_requests",
        "refusal",
        "cancelled",
    ] {
        let response = check::<PromptResponse>(json!({"stopReason": reason}), &[""]);
        assert!(!response.stop_reason.is_unknown());
        assert_eq!(response.stop_reason.as_str(), reason);
    }
    let response = check::<PromptResponse>(json!({"stopReason": "end_turn", "_meta": meta()}), &[""]);
    assert_eq!(response.stop_reason, StopReason::EndTurn);

    // A stop reason from a newer protocol version survives untouched.
    let future = round_trip::<PromptResponse>(&json!({"stopReason": "out_of_credits"}));
    assert_eq!(future.stop_reason, StopReason::Unknown("out_of_credits".into()));
    assert!(future.stop_reason.is_unknown());
    assert_eq!(future.stop_reason.to_string(), "out_of_credits");
    assert_eq!("refusal".parse::<StopReason>().unwrap(), StopReason::Refusal);
    assert_eq!(StopReason::from("cancelled"), StopReason::Cancelled);
    assert_eq!(
        serde_json::to_value(StopReason::MaxTokens).unwrap(),
        json!("max_tokens")
    );
    assert!(StopReason::KNOWN.contains(&"end_turn"));
    assert!(serde_json::from_value::<StopReason>(json!(3)).is_err());
}

fn update(update: Value) -> Value {
    json!({"sessionId": "sess-1", "update": update, "_meta": meta()})
}

#[test]
fn every_session_update() {
    let chunk = |kind: &str| {
        update(
            json!({"sessionUpdate": kind, "content": {"type": "text", "text": "hello"}, "messageId": "m1"}),
        )
    };
    for kind in ["user_message_chunk", "agent_message_chunk", "agent_thought_chunk"] {
        let n = check::<SessionNotification>(chunk(kind), &["", "/update", "/update/content"]);
        let content = match (kind, &n.update) {
            ("user_message_chunk", SessionUpdate::UserMessageChunk(c))
            | ("agent_message_chunk", SessionUpdate::AgentMessageChunk(c))
            | ("agent_thought_chunk", SessionUpdate::AgentThoughtChunk(c)) => c,
            other => panic!("{other:?}"),
        };
        assert!(matches!(&content.content, ContentBlock::Text(t) if t.text == "hello"));
        assert_eq!(content.message_id.as_ref().map(|id| id.as_str()), Some("m1"));
    }

    let tool_call = check::<SessionNotification>(
        update(json!({
            "sessionUpdate": "tool_call",
            "toolCallId": "call-1",
            "title": "Reading main.rs",
            "kind": "read",
            "status": "pending",
            "content": [
                {"type": "content", "content": {"type": "text", "text": "fn main() {}"}},
                {"type": "diff", "path": "/src/main.rs", "oldText": "a", "newText": "b"},
                {"type": "terminal", "terminalId": "term-1"}
            ],
            "locations": [{"path": "/src/main.rs", "line": 3}],
            "rawInput": {"path": "/src/main.rs"},
            "rawOutput": ["anything", 1, null]
        })),
        &[
            "",
            "/update",
            "/update/content/0",
            "/update/content/0/content",
            "/update/content/1",
            "/update/content/2",
            "/update/locations/0",
        ],
    );
    match &tool_call.update {
        SessionUpdate::ToolCall(call) => {
            assert_eq!(call.tool_call_id, "call-1");
            assert_eq!(call.kind, Some(ToolKind::Read));
            assert_eq!(call.status, Some(ToolCallStatus::Pending));
            let content = call.content.as_deref().unwrap();
            assert!(matches!(&content[1], ToolCallContent::Diff(d) if d.new_text == "b"));
            assert!(matches!(&content[2], ToolCallContent::Terminal(t) if t.terminal_id == "term-1"));
        }
        other => panic!("{other:?}"),
    }

    check::<SessionNotification>(
        update(json!({
            "sessionUpdate": "tool_call_update",
            "toolCallId": "call-1",
            "status": "completed",
            "kind": "a_kind_from_the_future",
            "content": [{"type": "content", "content": {"type": "text", "text": "done"}}]
        })),
        &["", "/update", "/update/content/0"],
    );
    check::<SessionNotification>(
        update(json!({
            "sessionUpdate": "plan",
            "entries": [
                {"content": "Read the code", "priority": "high", "status": "completed"},
                {"content": "Fix the bug", "priority": "medium", "status": "in_progress"}
            ]
        })),
        &["", "/update", "/update/entries/0"],
    );
    check::<SessionNotification>(
        update(json!({
            "sessionUpdate": "available_commands_update",
            "availableCommands": [
                {"name": "plan", "description": "Make a plan", "input": {"hint": "what to plan"}},
                {"name": "test", "description": "Run tests"}
            ]
        })),
        &[
            "",
            "/update",
            "/update/availableCommands/0",
            "/update/availableCommands/0/input",
        ],
    );
    check::<SessionNotification>(
        update(json!({"sessionUpdate": "current_mode_update", "currentModeId": "code"})),
        &["", "/update"],
    );
    check::<SessionNotification>(
        update(json!({
            "sessionUpdate": "config_option_update",
            "configOptions": [{"id": "t", "name": "T", "type": "boolean", "currentValue": true}]
        })),
        &["", "/update", "/update/configOptions/0"],
    );
    check::<SessionNotification>(
        update(
            json!({"sessionUpdate": "session_info_update", "title": "Fixing a bug", "updatedAt": "2025-06-01T10:00:00Z"}),
        ),
        &["", "/update"],
    );
    check::<SessionNotification>(
        update(
            json!({"sessionUpdate": "usage_update", "used": 1200, "size": 200000, "cost": {"amount": 0.42, "currency": "USD"}}),
        ),
        &["", "/update", "/update/cost"],
    );

    // Built in Rust: the tag sits next to the payload's fields.
    let built = SessionNotification::new(
        "sess-1",
        SessionUpdate::AgentMessageChunk(ContentChunk::new(TextContent::new("hi").into())),
    );
    assert_eq!(
        serde_json::to_value(&built).unwrap(),
        json!({"sessionId": "sess-1", "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi"}}})
    );

    // A kind from a newer schema is kept whole and survives a round trip.
    let future = json!({"sessionUpdate": "hologram_update", "frames": [1, 2], "_meta": {"v": 2}});
    let update = serde_json::from_value::<SessionUpdate>(future.clone()).unwrap();
    assert!(matches!(&update, SessionUpdate::Unknown(map) if map["frames"] == json!([1, 2])));
    assert_eq!(serde_json::to_value(&update).unwrap(), future);
    let block = serde_json::from_value::<ContentBlock>(json!({"type": "smell", "intensity": 3})).unwrap();
    assert!(matches!(block, ContentBlock::Unknown(_)));
    // A tag that is not a string is still an error.
    let err = serde_json::from_value::<SessionUpdate>(json!({"sessionUpdate": 7}))
        .unwrap_err()
        .to_string();
    assert!(err.contains("sessionUpdate"), "{err}");
    let err = serde_json::from_value::<SessionUpdate>(json!({"content": {"type": "text", "text": "x"}}))
        .unwrap_err()
        .to_string();
    assert!(err.contains("missing field `sessionUpdate`"), "{err}");
}

#[cfg(feature = "unstable")]
#[test]
fn unstable_session_updates() {
    check::<SessionNotification>(
        update(json!({"sessionUpdate": "notice", "severity": "warning", "title": "Low on context"})),
        &["", "/update"],
    );
    check::<PromptResponse>(
        json!({"stopReason": "end_turn", "usage": {"totalTokens": 3, "inputTokens": 2, "outputTokens": 1}}),
        &["", "/usage"],
    );
    check::<NewSessionRequest>(
        json!({"cwd": "/", "mcpServers": [{"type": "acp", "name": "inner", "serverId": "srv-1"}]}),
        &["", "/mcpServers/0"],
    );
}

/// Stable since the merged schema (promoted from the npm bundle's unstable or added by
/// the crate): plan operations, subagents and session messages, the client's system
/// prompt, and the capabilities that announce them. Each must be its own variant, not
/// the `Unknown` fallback.
#[test]
fn plan_operations_subagents_and_system_prompt() {
    let n = check::<SessionNotification>(
        update(json!({
            "sessionUpdate": "plan_update",
            "plan": {"type": "markdown", "planId": "p1", "content": "# Plan", "path": "PLAN.md"}
        })),
        &["", "/update", "/update/plan"],
    );
    assert!(matches!(&n.update, SessionUpdate::PlanUpdate(u)
        if matches!(&u.plan, PlanUpdateContent::Markdown(m) if m.content == "# Plan")));
    let n = check::<SessionNotification>(
        update(json!({
            "sessionUpdate": "plan_update",
            "plan": {"type": "items", "planId": "p2", "entries": [
                {"content": "read", "priority": "high", "status": "completed"}
            ]}
        })),
        &["", "/update", "/update/plan", "/update/plan/entries/0"],
    );
    assert!(matches!(&n.update, SessionUpdate::PlanUpdate(u)
        if matches!(&u.plan, PlanUpdateContent::Items(i) if i.entries.len() == 1)));
    let n = check::<SessionNotification>(
        update(json!({"sessionUpdate": "plan_removed", "planId": "p1"})),
        &["", "/update"],
    );
    assert!(matches!(&n.update, SessionUpdate::PlanRemoved(r) if r.plan_id.as_str() == "p1"));

    let n = check::<SessionNotification>(
        update(json!({
            "sessionUpdate": "subagent_update",
            "sessionId": "child-1",
            "title": "Explore the tests",
            "state": {"state": "running"},
            "cwd": "/work"
        })),
        &["", "/update", "/update/state"],
    );
    assert!(matches!(&n.update, SessionUpdate::SubagentUpdate(u)
        if u.session_id.as_str() == "child-1" && u.state.is_some()));
    let n = check::<SessionNotification>(
        update(json!({
            "sessionUpdate": "session_message",
            "messageId": "m1",
            "senderSessionId": "child-1",
            "content": [{"type": "text", "text": "done"}]
        })),
        &["", "/update", "/update/content/0"],
    );
    assert!(matches!(&n.update, SessionUpdate::SessionMessage(m) if m.message_id.as_str() == "m1"));
    let n = check::<SessionNotification>(
        update(json!({
            "sessionUpdate": "session_message_chunk",
            "messageId": "m2",
            "content": {"type": "text", "text": "par"}
        })),
        &["", "/update", "/update/content"],
    );
    assert!(matches!(&n.update, SessionUpdate::SessionMessageChunk(_)));
    let n = check::<SessionNotification>(
        update(json!({
            "sessionUpdate": "tool_call",
            "toolCallId": "call-9",
            "title": "Subagent",
            "content": [{"type": "session", "sessionId": "child-1"}]
        })),
        &["", "/update", "/update/content/0"],
    );
    let SessionUpdate::ToolCall(call) = &n.update else {
        panic!("{n:?}")
    };
    assert!(
        matches!(call.content.as_deref(), Some([ToolCallContent::Session(_)])),
        "{call:?}"
    );

    let request = check::<NewSessionRequest>(
        json!({
            "cwd": "/work",
            "mcpServers": [],
            "systemPrompt": {"mode": "append", "content": [{"type": "text", "text": "Be brief."}]}
        }),
        &["", "/systemPrompt", "/systemPrompt/content/0"],
    );
    assert!(matches!(
        request.system_prompt,
        Some(SystemPrompt {
            mode: SystemPromptMode::Append,
            ..
        })
    ));
    check::<InitializeRequest>(
        json!({
            "protocolVersion": 1,
            "clientCapabilities": {"subagents": {}, "plan": {}}
        }),
        &[
            "",
            "/clientCapabilities",
            "/clientCapabilities/subagents",
            "/clientCapabilities/plan",
        ],
    );
}

// ---------------------------------------------------------------------------------------
// client methods

/// The definitions new in schema 2.4.0 (stable): notices, context compaction, the tool
/// call's `name`, and the client's session capabilities that announce them.
#[test]
fn notices_compaction_and_tool_call_names() {
    let notice = check::<SessionNotification>(
        update(
            json!({"sessionUpdate": "notice", "severity": "warning", "title": "Rate limited",
                      "description": "retrying in 5 s", "_meta": meta()}),
        ),
        &["", "/update"],
    );
    match &notice.update {
        SessionUpdate::Notice(n) => {
            assert_eq!(n.severity, NoticeSeverity::Warning);
            assert_eq!(n.title, "Rate limited");
        }
        other => panic!("{other:?}"),
    }
    // A severity from a newer protocol is kept as it is.
    let future = check::<Notice>(json!({"severity": "_fatal", "title": "t"}), &[""]);
    assert_eq!(future.severity, NoticeSeverity::Unknown("_fatal".into()));

    let started = check::<SessionNotification>(
        update(json!({"sessionUpdate": "compaction_update", "compactionId": "c-1", "status": "in_progress"})),
        &["/update"],
    );
    assert!(matches!(&started.update, SessionUpdate::CompactionUpdate(c)
        if c.compaction_id.as_ref() == "c-1" && c.status == CompactionStatus::InProgress));
    // Patch semantics: a summary, an error, and null (clears) all round-trip.
    check::<CompactionUpdate>(
        json!({"compactionId": "c-1", "status": "failed", "error": "out of tokens",
               "summary": [{"type": "text", "text": "so far"}]}),
        &["", "/summary/0"],
    );
    let chunk = check::<SessionNotification>(
        update(
            json!({"sessionUpdate": "compaction_summary_chunk", "compactionId": "c-1",
                      "content": {"type": "text", "text": "The user asked for a greeting."}}),
        ),
        &["/update", "/update/content"],
    );
    assert!(
        matches!(&chunk.update, SessionUpdate::CompactionSummaryChunk(c) if c.compaction_id.as_ref() == "c-1")
    );

    let call = check::<SessionNotification>(
        update(
            json!({"sessionUpdate": "tool_call", "toolCallId": "call-1", "title": "Read a.rs",
                      "name": "read_file", "kind": "read", "status": "pending"}),
        ),
        &["/update"],
    );
    assert!(matches!(&call.update, SessionUpdate::ToolCall(t) if t.name.as_deref() == Some("read_file")));

    let capabilities = check::<ClientCapabilities>(
        json!({"session": {"notices": {}, "compaction": {"_meta": meta()}}}),
        &["", "/session", "/session/notices"],
    );
    let session = capabilities.session.unwrap();
    assert!(session.notices.is_some() && session.compaction.is_some());
}

#[test]
fn request_permission_selected_and_cancelled() {
    let request = check::<RequestPermissionRequest>(
        json!({
            "sessionId": "s",
            "toolCall": {"toolCallId": "call-1", "title": "Write main.rs", "kind": "edit", "status": "pending"},
            "options": [
                {"optionId": "allow", "name": "Allow once", "kind": "allow_once"},
                {"optionId": "always", "name": "Always allow", "kind": "allow_always"},
                {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
                {"optionId": "never", "name": "Never", "kind": "reject_always"}
            ],
            "_meta": meta()
        }),
        &["", "/toolCall", "/options/0", "/options/3"],
    );
    assert_eq!(request.options[1].kind, PermissionOptionKind::AllowAlways);
    assert_eq!(request.tool_call.title.as_deref(), Some("Write main.rs"));

    let selected = check::<RequestPermissionResponse>(
        json!({"outcome": {"outcome": "selected", "optionId": "allow"}, "_meta": meta()}),
        &["", "/outcome"],
    );
    assert!(matches!(&selected.outcome, RequestPermissionOutcome::Selected(s) if s.option_id == "allow"));
    let cancelled = check::<RequestPermissionResponse>(json!({"outcome": {"outcome": "cancelled"}}), &[""]);
    assert_eq!(cancelled.outcome, RequestPermissionOutcome::Cancelled);

    let built = RequestPermissionResponse::new(RequestPermissionOutcome::Selected(
        SelectedPermissionOutcome::new("allow"),
    ));
    assert_eq!(
        serde_json::to_value(&built).unwrap(),
        json!({"outcome": {"outcome": "selected", "optionId": "allow"}})
    );
    assert_eq!(
        serde_json::to_value(RequestPermissionResponse::new(
            RequestPermissionOutcome::Cancelled
        ))
        .unwrap(),
        json!({"outcome": {"outcome": "cancelled"}})
    );
}

#[test]
fn read_and_write_text_files() {
    let read = check::<ReadTextFileRequest>(
        json!({"sessionId": "s", "path": "/src/main.rs", "line": 10, "limit": 50, "_meta": meta()}),
        &[""],
    );
    assert_eq!((read.line, read.limit), (Some(10), Some(50)));
    check::<ReadTextFileResponse>(json!({"content": "fn main() {}\n"}), &[""]);
    check::<WriteTextFileRequest>(
        json!({"sessionId": "s", "path": "/a.txt", "content": "hello"}),
        &[""],
    );
    check::<WriteTextFileResponse>(json!({}), &[""]);
    check::<WriteTextFileResponse>(json!({"_meta": meta()}), &[""]);
}

#[test]
fn terminals() {
    let create = check::<CreateTerminalRequest>(
        json!({
            "sessionId": "s",
            "command": "cargo",
            "args": ["test", "--all"],
            "env": [{"name": "RUST_LOG", "value": "debug"}],
            "cwd": "/project",
            "outputByteLimit": 1048576,
            "_meta": meta()
        }),
        &["", "/env/0"],
    );
    assert_eq!(create.output_byte_limit, Some(1_048_576));
    check::<CreateTerminalResponse>(json!({"terminalId": "term-1"}), &[""]);
    check::<TerminalOutputRequest>(json!({"sessionId": "s", "terminalId": "term-1"}), &[""]);
    let output = check::<TerminalOutputResponse>(
        json!({"output": "running 3 tests\n", "truncated": false, "exitStatus": {"exitCode": 0}}),
        &[""],
    );
    assert!(!output.truncated);
    check::<TerminalOutputResponse>(
        json!({"output": "", "truncated": true, "exitStatus": {"exitCode": 101}}),
        &["", "/exitStatus"],
    );
    check::<WaitForTerminalExitRequest>(json!({"sessionId": "s", "terminalId": "term-1"}), &[""]);
    let exit = check::<WaitForTerminalExitResponse>(json!({"exitCode": 1}), &[""]);
    assert_eq!(exit.exit_code, Some(1));
    check::<WaitForTerminalExitResponse>(json!({"signal": "SIGKILL"}), &[""]);
    check::<KillTerminalRequest>(json!({"sessionId": "s", "terminalId": "term-1"}), &[""]);
    check::<KillTerminalResponse>(json!({}), &[""]);
    check::<ReleaseTerminalRequest>(json!({"sessionId": "s", "terminalId": "term-1"}), &[""]);
    check::<ReleaseTerminalResponse>(json!({}), &[""]);
}

// `{"signal": null}` reads as absent, so it is written back without the property.
fn round_trip_drops_null(wire: Value, expected: Value) {
    let typed: TerminalOutputResponse = serde_json::from_value(wire).unwrap();
    assert_eq!(serde_json::to_value(typed).unwrap(), expected);
}

#[test]
fn null_optional_properties_read_as_absent() {
    round_trip_drops_null(
        json!({"output": "", "truncated": false, "exitStatus": null}),
        json!({"output": "", "truncated": false}),
    );
}

// ---------------------------------------------------------------------------------------
// auth methods

#[test]
fn auth_method_with_and_without_type() {
    let agent = check::<AuthMethod>(json!({"id": "oauth", "name": "OAuth", "_meta": meta()}), &[""]);
    assert!(matches!(&agent, AuthMethod::Agent(a) if a.id == "oauth"));
    let terminal = check::<AuthMethod>(
        json!({"type": "terminal", "id": "tty", "name": "Terminal", "args": ["--login"], "env": {"HOME": "/h"}}),
        &[""],
    );
    match &terminal {
        AuthMethod::Terminal(t) => {
            assert_eq!(t.args.as_deref(), Some(&["--login".to_string()][..]));
            assert_eq!(t.env.as_ref().unwrap()["HOME"], "/h");
        }
        other => panic!("{other:?}"),
    }
    // An auth method type from a newer protocol falls back to the tag-less variant and keeps its type.
    let future = check::<AuthMethod>(json!({"type": "passkey", "id": "pk", "name": "Passkey"}), &[""]);
    assert!(matches!(&future, AuthMethod::Agent(a) if a.extra["type"] == "passkey"));
    // The tag decides: a terminal method with a broken (lenient) property is still a terminal
    // method, not the tag-less variant that would happen to parse too.
    let lenient: AuthMethod =
        serde_json::from_value(json!({"type": "terminal", "id": "t", "name": "T", "description": 7}))
            .unwrap();
    assert!(matches!(&lenient, AuthMethod::Terminal(t) if t.description.is_none() && t.extra.is_empty()));
    // x-deserialize-default-on-null: null args and env read as absent; a wrong type fails.
    let nulls: AuthMethod = serde_json::from_value(
        json!({"type": "terminal", "id": "t", "name": "T", "args": null, "env": null}),
    )
    .unwrap();
    assert!(matches!(&nulls, AuthMethod::Terminal(t) if t.args.is_none() && t.env.is_none()));
    assert!(serde_json::from_value::<AuthMethod>(
        json!({"type": "terminal", "id": "t", "name": "T", "args": "x"})
    )
    .is_err());
}

// ---------------------------------------------------------------------------------------
// elicitation

#[test]
fn create_elicitation_form_and_url() {
    let form = check::<CreateElicitationRequest>(
        json!({
            "message": "Pick a database",
            "mode": "form",
            "sessionId": "s",
            "toolCallId": "call-1",
            "requestedSchema": {
                "type": "object",
                "title": "Database",
                "properties": {
                    "name": {"type": "string", "title": "Name", "minLength": 1, "format": "email"},
                    "port": {"type": "integer", "minimum": 1, "maximum": 65535, "default": 5432},
                    "ratio": {"type": "number", "default": 0.5},
                    "tls": {"type": "boolean", "default": true},
                    "engine": {"type": "string", "oneOf": [{"const": "pg", "title": "Postgres"}]},
                    "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}, "minItems": 1},
                    "labels": {"type": "array", "items": {"anyOf": [{"const": "x", "title": "X"}]}},
                    "future": {"type": "color", "palette": "warm"}
                },
                "required": ["name"]
            },
            "_meta": meta()
        }),
        &[
            "",
            "/requestedSchema",
            "/requestedSchema/properties/name",
            "/requestedSchema/properties/tags/items",
        ],
    );
    match &form.mode {
        CreateElicitationRequestMode::Form(f) => {
            assert!(matches!(&f.scope, ElicitationScope::Session(s) if s.session_id == "s"));
            let props = f.requested_schema.properties.as_ref().unwrap();
            assert!(
                matches!(&props["port"], ElicitationPropertySchema::Integer(i) if i.default == Some(5432))
            );
            assert!(matches!(&props["tags"], ElicitationPropertySchema::Array(a)
                if matches!(&a.items, MultiSelectItems::String(s) if s.r#enum == ["a", "b"])));
            assert!(matches!(&props["labels"], ElicitationPropertySchema::Array(a)
                if matches!(&a.items, MultiSelectItems::Titled(_))));
            assert!(
                matches!(&props["future"], ElicitationPropertySchema::Other(o) if o["palette"] == "warm")
            );
        }
        other => panic!("{other:?}"),
    }
    // Unknown top-level properties belong to the request, not to the mode.
    let unknown: CreateElicitationRequest = serde_json::from_value(json!({
        "message": "m", "mode": "url", "elicitationId": "e", "url": "https://x", "requestId": 3, "x-future": true
    }))
    .unwrap();
    assert_eq!(unknown.extra["x-future"], true);
    assert!(matches!(&unknown.mode, CreateElicitationRequestMode::Url(u)
        if u.extra.is_empty() && matches!(&u.scope, ElicitationScope::Request(r) if r.request_id == RequestId::Number(3))));

    check::<CreateElicitationRequest>(
        json!({"message": "Sign in", "mode": "url", "elicitationId": "el-1", "url": "https://auth.example/", "requestId": "r-9"}),
        &[""],
    );
    // A mode from a newer protocol version is kept, with its properties.
    let future = check::<CreateElicitationRequest>(
        json!({"message": "m", "mode": "voice", "sessionId": "s", "language": "en"}),
        &[""],
    );
    assert!(matches!(&future.mode, CreateElicitationRequestMode::Other(m) if m == "voice"));

    let built = CreateElicitationRequest::new(
        "Sign in",
        CreateElicitationRequestMode::Url(ElicitationUrlMode::new(
            "el-1",
            "https://auth.example/",
            ElicitationScope::Session(ElicitationSessionScope::new("s")),
        )),
    );
    assert_eq!(
        serde_json::to_value(&built).unwrap(),
        json!({"message": "Sign in", "mode": "url", "elicitationId": "el-1", "url": "https://auth.example/", "sessionId": "s"})
    );
}

#[test]
fn create_elicitation_response_and_complete() {
    let accept = check::<CreateElicitationResponse>(
        json!({
            "action": "accept",
            "content": {"name": "db", "port": 5432, "ratio": 0.5, "tls": true, "tags": ["a", "b"]},
            "_meta": meta()
        }),
        &[""],
    );
    match &accept.action {
        CreateElicitationResponseAction::Accept(a) => {
            let content = a.content.as_ref().unwrap();
            assert_eq!(content["name"], ElicitationContentValue::String("db".into()));
            assert_eq!(content["port"], ElicitationContentValue::Integer(5432));
            assert_eq!(content["ratio"], ElicitationContentValue::Number(0.5));
            assert_eq!(content["tls"], ElicitationContentValue::Boolean(true));
        }
        other => panic!("{other:?}"),
    }
    let decline = check::<CreateElicitationResponse>(json!({"action": "decline"}), &[""]);
    assert_eq!(decline.action, CreateElicitationResponseAction::Decline);
    check::<CreateElicitationResponse>(json!({"action": "cancel", "_meta": meta()}), &[""]);
    let other = check::<CreateElicitationResponse>(json!({"action": "_defer", "until": "later"}), &[""]);
    assert!(matches!(&other.action, CreateElicitationResponseAction::Other(a) if a == "_defer"));
    assert_eq!(other.extra["until"], "later");

    check::<CompleteElicitationNotification>(json!({"elicitationId": "el-1", "_meta": meta()}), &[""]);
}

// ---------------------------------------------------------------------------------------
// errors, ids, leniency

#[test]
fn missing_required_fields_are_named() {
    let err = serde_json::from_value::<WriteTextFileRequest>(json!({"sessionId": "s", "path": "/a"}))
        .unwrap_err()
        .to_string();
    assert!(err.contains("missing field `content`"), "{err}");
    let err = serde_json::from_value::<InitializeRequest>(json!({"clientCapabilities": {}}))
        .unwrap_err()
        .to_string();
    assert!(err.contains("protocolVersion"), "{err}");
    // Inside a tagged union and inside an object with a union part.
    let err = serde_json::from_value::<SessionNotification>(json!({
        "sessionId": "s", "update": {"sessionUpdate": "agent_message_chunk"}
    }))
    .unwrap_err()
    .to_string();
    assert!(err.contains("missing field `content`"), "{err}");
    let err = serde_json::from_value::<SessionConfigOption>(
        json!({"name": "n", "type": "boolean", "currentValue": true}),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("missing field `id`"), "{err}");
    let err = serde_json::from_value::<CreateElicitationRequest>(json!({"message": "m"}))
        .unwrap_err()
        .to_string();
    assert!(err.contains("missing field `mode`"), "{err}");
    let err = serde_json::from_value::<EmbeddedResourceResource>(json!({"uri": "file:///x"}))
        .unwrap_err()
        .to_string();
    assert!(err.contains("`text`") && err.contains("`blob`"), "{err}");
}

#[test]
fn lenient_properties_follow_the_schema() {
    // x-deserialize-default-on-error: a broken optional value reads as absent ...
    let location: ToolCallLocation =
        serde_json::from_value(json!({"path": "/a", "line": "ten", "_meta": 5})).unwrap();
    assert_eq!(location.line, None);
    assert_eq!(location.meta, None);
    // ... a property without it does not ...
    assert!(serde_json::from_value::<ReadTextFileRequest>(
        json!({"sessionId": "s", "path": "/a", "line": "ten"})
    )
    .is_err());
    // ... and x-deserialize-skip-invalid-items drops broken items.
    let plan: Plan = serde_json::from_value(json!({
        "entries": [{"content": "a", "priority": "high", "status": "pending"}, {"content": 5}]
    }))
    .unwrap();
    assert_eq!(plan.entries.len(), 1);
    // x-deserialize-default-on-null: a required list that is null reads as empty; absent
    // stays an error, and so does a wrong type.
    let session: NewSessionRequest = serde_json::from_value(json!({"cwd": "/", "mcpServers": null})).unwrap();
    assert!(session.mcp_servers.is_empty());
    assert!(serde_json::from_value::<NewSessionRequest>(json!({"cwd": "/"})).is_err());
    assert!(serde_json::from_value::<NewSessionRequest>(json!({"cwd": "/", "mcpServers": {}})).is_err());
}

#[test]
fn ids_errors_and_identifiers() {
    assert_eq!(
        serde_json::from_value::<RequestId>(json!(null)).unwrap(),
        RequestId::Null
    );
    assert_eq!(
        serde_json::from_value::<RequestId>(json!(42)).unwrap(),
        RequestId::Number(42)
    );
    assert_eq!(
        serde_json::from_value::<RequestId>(json!("a")).unwrap(),
        RequestId::Str("a".into())
    );
    assert_eq!(serde_json::to_value(RequestId::Null).unwrap(), json!(null));

    let error = check::<Error>(
        json!({"code": -32602, "message": "Invalid params", "data": {"field": "cwd"}}),
        &[""],
    );
    assert_eq!(error.code, ErrorCode::InvalidParams);
    assert_eq!(error.code.code(), -32602);
    let custom = round_trip::<Error>(&json!({"code": 4711, "message": "custom"}));
    assert_eq!(custom.code, ErrorCode::Other(4711));
    assert_eq!(ErrorCode::from(-32000), ErrorCode::AuthenticationRequired);

    let id = SessionId::from("sess-1");
    assert_eq!(id.to_string(), "sess-1");
    assert_eq!(id.as_ref(), "sess-1");
    assert_eq!(serde_json::to_value(&id).unwrap(), json!("sess-1"));
    assert_eq!(id, SessionId::new(String::from("sess-1")));
    let version: ProtocolVersion = 1;
    assert_eq!(InitializeRequest::new(version).protocol_version, 1u16);
    let ext: ExtRequest = json!({"anything": [1, 2]});
    assert!(ext.is_object());
}

#[test]
fn unit_variants_carry_only_their_tag() {
    // A tag-only variant has nowhere to keep unknown properties; they are dropped.
    let outcome: RequestPermissionOutcome =
        serde_json::from_value(json!({"outcome": "cancelled", "x-future": 1})).unwrap();
    assert_eq!(
        serde_json::to_value(outcome).unwrap(),
        json!({"outcome": "cancelled"})
    );
}

// ---------------------------------------------------------------------------------------
// method tables

#[cfg(not(feature = "unstable"))]
const SCHEMA: &str = "schema.json";
#[cfg(feature = "unstable")]
const SCHEMA: &str = "schema.unstable.json";

/// The methods the schema defines, read from its `x-method` / `x-side` annotations and
/// its JSON-RPC envelopes (which say whether a definition is request params, result or
/// notification params): `(side, method, params, result)`.
fn schema_methods() -> Vec<(String, String, String, Option<String>)> {
    let path = format!("{}/../schema/v1/{SCHEMA}", env!("CARGO_MANIFEST_DIR"));
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let defs = schema["$defs"].as_object().unwrap();
    // Definition name -> "params" / "result" / "notification", from the JSON-RPC envelopes:
    // every object schema (anywhere but inside a definition's own properties) with a
    // `params` or `result` property.
    fn scan(node: &Value, roles: &mut std::collections::HashMap<String, &'static str>) {
        match node {
            Value::Object(map) => {
                if let Some(props) = map.get("properties").and_then(Value::as_object) {
                    let parts = [
                        ("result", "result"),
                        (
                            "params",
                            if props.contains_key("id") {
                                "params"
                            } else {
                                "notification"
                            },
                        ),
                    ];
                    for (key, role) in parts {
                        if let Some(part) = props.get(key) {
                            for r in part.to_string().split("#/$defs/").skip(1) {
                                roles.insert(r.split('"').next().unwrap().to_owned(), role);
                            }
                        }
                    }
                }
                map.iter()
                    .filter(|(k, _)| *k != "$defs")
                    .for_each(|(_, v)| scan(v, roles));
            }
            Value::Array(items) => items.iter().for_each(|v| scan(v, roles)),
            _ => {}
        }
    }
    let mut roles = std::collections::HashMap::new();
    scan(&schema, &mut roles);
    for def in defs.values() {
        if def.get("x-docs-ignore").is_some() {
            scan(def, &mut roles);
        }
    }
    let mut out = Vec::new();
    for (name, def) in defs {
        let Some(method) = def["x-method"].as_str() else {
            continue;
        };
        let side = def["x-side"].as_str().unwrap().to_owned();
        match roles.get(name.as_str()).copied() {
            Some("params") => {
                let result = defs
                    .iter()
                    .find(|(n, d)| d["x-method"] == method && roles.get(n.as_str()) == Some(&"result"))
                    .map(|(n, _)| n.clone());
                out.push((side, method.to_owned(), name.clone(), result));
            }
            Some("notification") => out.push((side, method.to_owned(), name.clone(), None)),
            _ => {}
        }
    }
    out
}

#[test]
fn method_tables_match_the_schema() {
    let expected = schema_methods();
    assert!(expected.len() >= 25, "{expected:?}");
    let tables = [
        ("agent", AGENT_METHODS),
        ("client", CLIENT_METHODS),
        ("protocol", PROTOCOL_METHODS),
        ("proxy", PROXY_METHODS),
    ];
    let mut listed = 0;
    for (side, table) in tables {
        for info in table {
            listed += 1;
            let found = expected.iter().any(|(s, m, p, r)| {
                s == side && m == info.name && p == info.params && r.as_deref() == info.result
            });
            assert!(found, "{side}: {info:?} is not in the schema");
            assert_eq!(info.notification, info.result.is_none(), "{}", info.name);
        }
    }
    assert_eq!(
        listed,
        expected.len(),
        "the tables hold every method of the schema once"
    );

    assert_eq!(method::INITIALIZE, "initialize");
    assert_eq!(method::SESSION_NEW, "session/new");
    assert_eq!(method::SESSION_UPDATE, "session/update");
    assert_eq!(method::CANCEL_REQUEST, "$/cancel_request");
    let prompt = AGENT_METHODS
        .iter()
        .find(|m| m.name == method::SESSION_PROMPT)
        .unwrap();
    assert_eq!(
        (prompt.params, prompt.result, prompt.handler, prompt.unstable),
        ("PromptRequest", Some("PromptResponse"), "prompt", false)
    );
}
