//! A proxy for an ACP proxy chain, on this process's stdio: it passes
//! every message on unchanged, except that with `--prefix TEXT` it puts a
//! text block of its own before every prompt, and says on stderr (and with
//! `--log FILE` in FILE) what crossed it, as `[proxy NAME]` (`--name`,
//! default the prefix, else "proxy").
//!
//! Run it in a chain: `acp-engine conduct "target/debug/examples/proxy
//! --prefix hi" target/debug/examples/agent`.

use std::io::Write;
use std::sync::Mutex;

use acp_engine::conductor::proxy::{run_proxy, AgentMessage, Predecessor, Proxy, Successor};
use acp_engine::schema::method;
use acp_engine::{to_raw, BoxFuture, IncomingRequest, RawJson, RequestError, Transport};
use serde_json::{json, Value};

struct Prefixer {
    name: String,
    prefix: Option<String>,
    log: Option<Mutex<std::fs::File>>,
}

impl Prefixer {
    fn say(&self, line: String) {
        let line = format!("[proxy {}] {line}", self.name);
        eprintln!("{line}");
        if let Some(log) = &self.log {
            let _ = writeln!(log.lock().unwrap(), "{line}");
        }
    }
}

impl Proxy for Prefixer {
    fn client_request(
        &self,
        request: IncomingRequest,
        successor: Successor,
    ) -> BoxFuture<Result<RawJson, RequestError>> {
        self.say(format!("-> {}", request.method));
        let prefix = self.prefix.clone();
        Box::pin(async move {
            let params = if let (Some(prefix), method::SESSION_PROMPT) = (prefix, request.method.as_str()) {
                let mut params: Value = request.params()?;
                if let Some(prompt) = params.get_mut("prompt").and_then(Value::as_array_mut) {
                    prompt.insert(0, json!({"type": "text", "text": prefix}));
                }
                Some(to_raw(&params)?)
            } else {
                request.params
            };
            successor.request(&request.method, params).await
        })
    }

    fn agent_request(
        &self,
        request: AgentMessage,
        predecessor: Predecessor,
    ) -> BoxFuture<Result<RawJson, RequestError>> {
        self.say(format!("<- {}", request.method));
        Box::pin(async move { predecessor.request(&request.method, request.params).await })
    }
}

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let mut prefix = None;
    let mut name = None;
    let mut log = None;
    while let Some(arg) = args.next() {
        match (arg.as_str(), args.next()) {
            ("--prefix", Some(value)) => prefix = Some(value),
            ("--name", Some(value)) => name = Some(value),
            ("--log", Some(path)) => {
                let file = std::fs::OpenOptions::new().create(true).append(true).open(&path);
                log = Some(Mutex::new(file.unwrap_or_else(|error| panic!("{path}: {error}"))));
            }
            _ => {
                eprintln!("usage: proxy [--prefix TEXT] [--name NAME] [--log FILE]");
                std::process::exit(2);
            }
        }
    }
    let name = name
        .or_else(|| prefix.clone())
        .unwrap_or_else(|| "proxy".to_owned());
    run_proxy(Prefixer { name, prefix, log }, Transport::stdio()).await;
}
