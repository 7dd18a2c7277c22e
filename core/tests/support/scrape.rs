//! A server's `/metrics`, read as a Prometheus scraper reads them.

use std::collections::HashMap;
use std::net::SocketAddr;

/// The samples of `GET /metrics` (with `token` as its bearer), by metric
/// name and labels (`name{a="1",b="2"}`, labels sorted), or the HTTP status
/// when it is not 200.
pub async fn scrape(address: SocketAddr, token: Option<&str>) -> Result<HashMap<String, f64>, u16> {
    let (status, response) = super::raw_http::get(address, "/metrics", token).await;
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
