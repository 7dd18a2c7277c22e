//! A WebSocket client's connection: dialled once, or, with a reconnect
//! timeout, asked to be resumable (docs/websocket-resume.md) and dialled
//! again after a break, with backoff, until the timeout is spent.

use std::io;
use std::time::Duration;

use tokio_tungstenite::tungstenite::Error as WsError;
use tokio_tungstenite::WebSocketStream;
use tokio_util::sync::CancellationToken;

use super::cookies::CookieJar;
use super::endpoint::Endpoint;
use super::failing::Failure;
use super::net::Stream;
use super::resumable::{self, Next};
use super::websocket::{bridge, open, to_io, Ending};
use super::{backoff, ConnectOptions, FarEnd};
use crate::tables::defaults::MAX_REPLAY_BYTES;

/// Connect `inner` (the far end of a transport's lines) to the WebSocket
/// at `endpoint`. With a reconnect timeout the connection is asked to be
/// resumable, and one the server made so outlives a broken socket.
/// Returns the `Set-Cookie` values of the handshake's answer.
pub(crate) async fn attach(
    endpoint: Endpoint,
    options: ConnectOptions,
    inner: &mut FarEnd,
    failure: Failure,
) -> io::Result<Vec<String>> {
    let Some(budget) = options.reconnect_timeout else {
        let (socket, headers) = open(&endpoint, &options, &[], &CookieJar::default())
            .await
            .map_err(to_io)?;
        bridge(
            socket,
            inner.take(),
            options.output_stall_timeout,
            pinging(&options),
        );
        return Ok(set_cookies(&headers));
    };
    let asking = [(resumable::LAST_EVENT_ID, "0".to_owned())];
    let mut cookies = CookieJar::default();
    let (socket, headers) = open(&endpoint, &options, &asking, &cookies)
        .await
        .map_err(to_io)?;
    // A balancer's affinity cookie brings a resume back to this backend.
    cookies.keep(&headers);
    let set = set_cookies(&headers);
    let id = headers
        .get(resumable::CONNECTION_ID)
        .and_then(|id| id.to_str().ok())
        .map(str::to_owned);
    let Some(id) = id else {
        // A server that cannot resume (the official SDK's).
        bridge(
            socket,
            inner.take(),
            options.output_stall_timeout,
            pinging(&options),
        );
        return Ok(set);
    };
    let (stall, ending) = (options.output_stall_timeout, pinging(&options));
    let redial = Redial {
        endpoint,
        options,
        id,
        budget,
        failure,
        cookies,
    };
    resumable::run(socket, inner.take(), MAX_REPLAY_BYTES, stall, ending, redial);
    Ok(set)
}

/// The `Set-Cookie` values of a response's `headers`, as sent.
fn set_cookies(headers: &hyper::HeaderMap) -> Vec<String> {
    headers
        .get_all(hyper::header::SET_COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok().map(str::to_owned))
        .collect()
}

/// A client socket's ending: its peer, or silence (it is pinged).
fn pinging(options: &ConnectOptions) -> Ending {
    Ending {
        keep_alive: options.keep_alive_interval,
        ..Ending::default()
    }
}

/// A client's way back to its resumable connection: dial again, with
/// backoff, until the reconnect timeout is spent.
struct Redial {
    endpoint: Endpoint,
    options: ConnectOptions,
    id: String,
    budget: Duration,
    failure: Failure,
    cookies: CookieJar,
}

impl Redial {
    /// A new socket, and how many of our messages the server received.
    async fn dial(&self, received: u64) -> Result<(WebSocketStream<Stream>, u64), WsError> {
        let resuming = [
            (resumable::CONNECTION_ID, self.id.clone()),
            (resumable::LAST_EVENT_ID, received.to_string()),
        ];
        let (socket, headers) = open(&self.endpoint, &self.options, &resuming, &self.cookies).await?;
        let theirs = headers
            .get(resumable::RECEIVED)
            .and_then(|n| n.to_str().ok())
            .and_then(|n| n.trim().parse::<u64>().ok())
            .ok_or_else(|| io::Error::other("the resumed WebSocket's answer has no Acp-Received"))?;
        Ok((socket, theirs))
    }

    fn give_up(&self, why: String) -> Next<Stream> {
        let _ = self.failure.set(why.clone());
        Next::GiveUp(why)
    }
}

impl resumable::Sockets<Stream> for Redial {
    type Request = ();

    async fn request(&mut self) {
        std::future::pending().await
    }

    async fn next(&mut self, _: Option<()>, received: u64, journal: &resumable::Journal) -> Next<Stream> {
        // Not there yet (refused, reset, a proxy's 502 to 504): try again.
        // The server answering that it no longer has the connection: stop.
        let worth_another = |error: &WsError| match error {
            WsError::Http(response) => matches!(response.status().as_u16(), 502..=504),
            _ => true,
        };
        let never = CancellationToken::new();
        let dialled = backoff::keep_trying(self.budget, &never, || self.dial(received), worth_another).await;
        match dialled {
            Ok((socket, theirs)) => match journal.missing(theirs) {
                Ok(lacking) => Next::Socket(Box::new(socket), lacking),
                Err(why) => self.give_up(format!("the WebSocket could not be resumed: {why}")),
            },
            Err(None) => self.give_up("the WebSocket broke and the connection was closed".to_owned()),
            Err(Some(error)) if !worth_another(&error) => {
                self.give_up(format!("the WebSocket could not be resumed: {}", to_io(error)))
            }
            Err(Some(error)) => self.give_up(format!(
                "the WebSocket broke and was not resumed within {} ms: {}",
                self.budget.as_millis(),
                to_io(error)
            )),
        }
    }
}
