//! One HTTP/1.1 exchange by hand, on a connection of its own: what a probe,
//! a scraper or a test of the wire sends.

use std::net::SocketAddr;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::PATIENCE;

/// Send `request` (with `Connection: close`) and read the whole response:
/// its status and its text, head and body.
pub async fn exchange(address: SocketAddr, request: &str) -> (u16, String) {
    let mut socket = tokio::net::TcpStream::connect(address).await.unwrap();
    socket.write_all(request.as_bytes()).await.unwrap();
    let mut response = Vec::new();
    tokio::time::timeout(PATIENCE, socket.read_to_end(&mut response))
        .await
        .expect("no hang")
        .unwrap();
    let response = String::from_utf8_lossy(&response).into_owned();
    (response[9..12].parse().unwrap(), response)
}

/// `GET path`, with `token` as its bearer if given.
pub async fn get(address: SocketAddr, path: &str, token: Option<&str>) -> (u16, String) {
    let auth = token
        .map(|token| format!("Authorization: Bearer {token}\r\n"))
        .unwrap_or_default();
    let request = format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n{auth}\r\n");
    exchange(address, &request).await
}
