//! A remote transport's two halves, which end with the reason the
//! connection failed (set by the background task that runs it) rather
//! than a bare end of stream or "broken pipe", whichever half sees it first.

use std::io;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf, ReadHalf, WriteHalf};

use super::Lines;
use crate::transport::Transport;

/// Why a remote connection failed, once it has.
pub(crate) type Failure = Arc<OnceLock<String>>;

/// `lines` as a transport whose end carries `failure` when it is set.
pub(crate) fn transport(lines: Lines, failure: Failure) -> Transport {
    let (reader, writer) = tokio::io::split(lines);
    Transport::new(
        FailingReader {
            reader,
            failure: failure.clone(),
        },
        FailingWriter { writer, failure },
    )
}

fn failed(failure: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::ConnectionAborted,
        crate::transport::TransportFailure(failure.to_owned()),
    )
}

struct FailingReader {
    reader: ReadHalf<Lines>,
    failure: Failure,
}

impl AsyncRead for FailingReader {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.reader).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = &polled {
            if buf.filled().len() == before {
                if let Some(failure) = self.failure.get() {
                    return Poll::Ready(Err(failed(failure)));
                }
            }
        }
        polled
    }
}

struct FailingWriter {
    writer: WriteHalf<Lines>,
    failure: Failure,
}

impl FailingWriter {
    fn explain<T>(&self, polled: Poll<io::Result<T>>) -> Poll<io::Result<T>> {
        match (polled, self.failure.get()) {
            (Poll::Ready(Err(_)), Some(failure)) => Poll::Ready(Err(failed(failure))),
            (polled, _) => polled,
        }
    }
}

impl AsyncWrite for FailingWriter {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.writer).poll_write(cx, buf);
        self.explain(polled)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let polled = Pin::new(&mut self.writer).poll_flush(cx);
        self.explain(polled)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let polled = Pin::new(&mut self.writer).poll_shutdown(cx);
        self.explain(polled)
    }
}
