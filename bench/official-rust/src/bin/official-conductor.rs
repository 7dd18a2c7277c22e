//! The official Rust SDK's conductor (`agent-client-protocol-conductor`, as
//! its own binary runs it), for the proxy-chain interop tests
//! (interop/conductor.sh): our proxies under their conductor.
use agent_client_protocol_conductor::ConductorArgs;
use clap::Parser;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    ConductorArgs::parse().main().await
}
