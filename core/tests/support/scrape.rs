//! A server's `/metrics`, read as a Prometheus scraper reads them.

use std::collections::HashMap;
use std::net::SocketAddr;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::PATIENCE;

/// The samples of `GET /metrics` (with `token` as its bearer), by metric
/// name and labels (`name{a="1",b="2"}`, labels sorted), or the HTTP status
/// when it is not 200.
pub async fn scrape(address: SocketAddr, token: Option<&str>) -> Result<HashMap<String, f64>, u16> {
    let mut socket = tokio::net::TcpStream::connect(address).await.unwrap();
    let auth = token
        .map(|token| format!("Authorization: Bearer {token}\r\n"))
        .unwrap_or_default();
    let request = format!("GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n{auth}\r\n");
    socket.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    tokio::time::timeout(PATIENCE, socket.read_to_string(&mut response))
        .await
        .expect("no hang")
        .unwrap();
    let status: u16 = response[9..12].parse().unwrap();
    if status != 200 {
        return Err(status);
    }
    let (head, body) = response.split_once("\r\n\r\n").unwrap();
    assert!(
        head.to_ascii_lowercase()
            .contains("content-type: text/plain; version=0.0.4"),
        "{head}"
    );
    let lines = body.lines().map(|line| Ok(line.to_owned()));
    let scrape = prometheus_parse::Scrape::parse(lines).expect("the Prometheus text format");
    let mut samples = HashMap::new();
    for sample in scrape.samples {
        let mut labels: Vec<String> = sample
            .labels
            .iter()
            .map(|(k, v)| format!("{k}=\"{v}\""))
            .collect();
        labels.sort();
        let name = if labels.is_empty() {
            sample.metric
        } else {
            format!("{}{{{}}}", sample.metric, labels.join(","))
        };
        let value = match sample.value {
            prometheus_parse::Value::Counter(v)
            | prometheus_parse::Value::Gauge(v)
            | prometheus_parse::Value::Untyped(v) => v,
            other => panic!("unexpected {other:?}"),
        };
        samples.insert(name, value);
    }
    Ok(samples)
}
