//! A remote agent dialled for a host (`HostDial`), against a plain
//! WebSocket server: the handshake's cookies are told, and the transport's
//! messages reach a socket the host reads and writes itself.

use std::io::{BufRead, BufReader, Write};
use std::sync::mpsc;
use std::time::Duration;

use acp_engine::host::{self, DialOutcome, HostDial};
use acp_engine::remote::ConnectOptions;
use futures_util::{SinkExt, StreamExt};
use tokio_tungstenite::tungstenite::handshake::server::{Request, Response};
use tokio_tungstenite::tungstenite::Message;

/// A WebSocket server that sets two cookies and answers each text frame
/// with `{"echo": <frame>}`; its port.
fn echo_server() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    listener.set_nonblocking(true).unwrap();
    host::runtime().spawn(async move {
        let listener = tokio::net::TcpListener::from_std(listener).unwrap();
        let (stream, _) = listener.accept().await.unwrap();
        // tungstenite's callback type fixes the large error variant.
        #[allow(clippy::result_large_err)]
        let cookies = |_: &Request, mut response: Response| {
            let headers = response.headers_mut();
            headers.append("set-cookie", "affinity=abc123; Path=/".parse().unwrap());
            headers.append("set-cookie", "zone=b".parse().unwrap());
            Ok(response)
        };
        let mut socket = tokio_tungstenite::accept_hdr_async(stream, cookies)
            .await
            .unwrap();
        while let Some(Ok(Message::Text(text))) = socket.next().await {
            let echo = format!("{{\"echo\":{}}}", text.as_str());
            socket.send(Message::Text(echo.into())).await.unwrap();
        }
    });
    port
}

fn dial(url: &str) -> HostDial {
    let (done, finished) = mpsc::channel();
    let dial = HostDial::start(url, ConnectOptions::default(), &host::runtime(), move || {
        let _ = done.send(());
    });
    finished
        .recv_timeout(Duration::from_secs(10))
        .expect("the dial ends");
    dial
}

#[test]
fn a_dial_tells_the_handshake_cookies_and_hands_its_messages_to_a_socket() {
    let dial = dial(&format!("ws://127.0.0.1:{}/acp", echo_server()));
    match dial.outcome() {
        Some(DialOutcome::Connected(cookies)) => assert_eq!(cookies, ["affinity=abc123; Path=/", "zone=b"]),
        _ => panic!("the dial connects"),
    }
    let transport = dial.take_transport().expect("the transport, once");
    assert!(dial.take_transport().is_none());
    assert!(matches!(dial.outcome(), Some(DialOutcome::Taken)));

    let socket = {
        let _runtime = host::runtime().enter();
        transport.into_socket().unwrap()
    };
    socket.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut writer = socket.try_clone().unwrap();
    let mut lines = BufReader::new(socket);
    for n in 0..3 {
        writeln!(writer, "{{\"n\":{n}}}").unwrap();
        let mut line = String::new();
        lines.read_line(&mut line).unwrap();
        assert_eq!(line, format!("{{\"echo\":{{\"n\":{n}}}}}\n"));
    }
    // Our end closed: the server's socket ends, and so does what we read.
    writer.shutdown(std::net::Shutdown::Write).unwrap();
    let mut rest = String::new();
    assert_eq!(lines.read_line(&mut rest).unwrap(), 0, "{rest}");
}

#[test]
fn a_dial_nobody_answers_fails_with_the_reason() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let dial = dial(&format!("ws://127.0.0.1:{port}/acp"));
    match dial.outcome() {
        Some(DialOutcome::Failed(why)) => assert!(
            why.starts_with(&format!("cannot connect to ws://127.0.0.1:{port}/acp: ")),
            "{why}"
        ),
        _ => panic!("a refused dial fails"),
    }
    assert!(dial.take_transport().is_none());
}

#[test]
fn a_transport_dialled_at_once_tells_the_handshake_cookies_once_connected() {
    let (told, cookies) = mpsc::channel();
    let url = format!("ws://127.0.0.1:{}/acp", echo_server());
    let transport = {
        let _runtime = host::runtime().enter();
        acp_engine::remote::dial_for_cookies(&url, &ConnectOptions::default(), move |set_cookies| {
            let _ = told.send(set_cookies);
        })
    };
    let told = cookies
        .recv_timeout(Duration::from_secs(10))
        .expect("the cookies are told");
    assert_eq!(told, ["affinity=abc123; Path=/", "zone=b"]);
    drop(transport);
}

#[test]
fn a_transport_whose_dial_fails_tells_no_cookies() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let (told, cookies) = mpsc::channel();
    let transport = {
        let _runtime = host::runtime().enter();
        acp_engine::remote::dial_for_cookies(
            &format!("ws://127.0.0.1:{port}/acp"),
            &ConnectOptions::default(),
            move |set_cookies| {
                let _ = told.send(set_cookies);
            },
        )
    };
    // The callback is dropped uncalled: the channel ends without a message.
    assert_eq!(
        cookies.recv_timeout(Duration::from_secs(10)),
        Err(mpsc::RecvTimeoutError::Disconnected)
    );
    drop(transport);
}
