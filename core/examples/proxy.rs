//! A proxy for an ACP proxy chain, on this process's stdio: it passes
//! every message on unchanged, except that it puts a text block of its own
//! before every prompt (`--prefix TEXT`, default "Be brief.") and says on
//! stderr what crossed it.
//!
//! Run it in a chain: `acp-engine conduct "cargo run --example proxy --
//! --prefix hi" "cargo run --example agent"`.

use acp_engine::conductor::proxy::{run_proxy, AgentMessage, Predecessor, Proxy, Successor};
use acp_engine::schema::method;
use acp_engine::{to_raw, BoxFuture, IncomingRequest, RawJson, RequestError, Transport};
use serde_json::{json, Value};

struct Prefixer {
    prefix: String,
}

impl Proxy for Prefixer {
    fn client_request(&self, request: IncomingRequest, successor: Successor) -> BoxFuture<Result<RawJson, RequestError>> {
        let prefix = self.prefix.clone();
        Box::pin(async move {
            eprintln!("[proxy {prefix}] -> {}", request.method);
            let params = if request.method == method::SESSION_PROMPT {
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

    fn agent_request(&self, request: AgentMessage, predecessor: Predecessor) -> BoxFuture<Result<RawJson, RequestError>> {
        eprintln!("[proxy {}] <- {}", self.prefix, request.method);
        Box::pin(async move { predecessor.request(&request.method, request.params).await })
    }
}

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let mut prefix = "Be brief.".to_owned();
    while let Some(arg) = args.next() {
        match (arg.as_str(), args.next()) {
            ("--prefix", Some(value)) => prefix = value,
            _ => {
                eprintln!("usage: proxy [--prefix TEXT]");
                std::process::exit(2);
            }
        }
    }
    run_proxy(Prefixer { prefix }, Transport::stdio()).await;
}
