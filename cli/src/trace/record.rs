//! The recorder: splits what each direction carried into lines, has each
//! judged, and writes one JSON line per message. It runs on its own thread
//! (file writes block), in the order the chunks were read.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::Serialize;
use serde_json::value::RawValue;
use tokio::sync::mpsc::{self, error::TryRecvError};

use super::inspect::{Finding, Inspector, Kind, Problem};
use super::pump::Chunk;
use super::Direction;

/// A line longer than this is judged oversized and not kept.
const MAX_LINE: usize = 64 * 1024 * 1024;

/// How much of an invalid line the trace keeps.
const MAX_RAW: usize = 64 * 1024;

/// What the trace holds, for the summary on stderr.
#[derive(Debug, Default)]
pub struct Summary {
    pub messages: u64,
    pub violations: u64,
}

/// One line of the trace.
#[derive(Serialize)]
struct Record<'a> {
    seq: u64,
    /// Wall-clock time the line was read, in milliseconds since the epoch.
    unix_ms: f64,
    /// Time since the trace began, in microseconds.
    elapsed_us: u64,
    dir: Direction,
    /// The line's size on the wire, newline included.
    bytes: usize,
    kind: Kind,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a acp_engine::RequestId>,
    #[serde(skip_serializing_if = "Option::is_none")]
    method: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    session: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    latency_us: Option<u64>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    unstable: bool,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    legacy: bool,
    verdict: &'static str,
    #[serde(skip_serializing_if = "<[Problem]>::is_empty")]
    problems: &'a [Problem],
    /// The message itself, when it is JSON.
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<&'a RawValue>,
    /// The line as text, when it is not JSON (cut at 64 KiB).
    #[serde(skip_serializing_if = "Option::is_none")]
    raw: Option<String>,
}

/// One direction's bytes not yet ending in a newline.
#[derive(Default)]
struct Partial {
    bytes: Vec<u8>,
    /// Past `MAX_LINE`: dropping the rest of this line.
    oversized: bool,
}

struct Writer {
    out: BufWriter<File>,
    inspector: Inspector,
    start: Instant,
    start_unix: Duration,
    summary: Summary,
}

/// Record what arrives on `taps` until every sender is gone.
pub fn spawn(
    taps: mpsc::Receiver<Chunk>,
    file: File,
    start: Instant,
) -> std::thread::JoinHandle<io::Result<Summary>> {
    std::thread::spawn(move || run(taps, file, start))
}

fn run(mut taps: mpsc::Receiver<Chunk>, file: File, start: Instant) -> io::Result<Summary> {
    let mut writer = Writer {
        out: BufWriter::new(file),
        inspector: Inspector::default(),
        start,
        start_unix: SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default(),
        summary: Summary::default(),
    };
    let mut partial: [Partial; 2] = Default::default();
    loop {
        let chunk = match taps.try_recv() {
            Ok(chunk) => chunk,
            Err(TryRecvError::Disconnected) => break,
            Err(TryRecvError::Empty) => {
                // Idle: what is recorded is on disk (`tail -f` works).
                writer.out.flush()?;
                match taps.blocking_recv() {
                    Some(chunk) => chunk,
                    None => break,
                }
            }
        };
        let partial = &mut partial[chunk.direction as usize];
        if chunk.bytes.is_empty() {
            // That direction ended: a last line without a newline counts.
            if !partial.bytes.is_empty() && !partial.oversized {
                let line = std::mem::take(&mut partial.bytes);
                writer.line(chunk.direction, &line, line.len(), chunk.at)?;
            }
            *partial = Partial::default();
            continue;
        }
        writer.chunk(partial, &chunk)?;
    }
    writer.out.flush()?;
    Ok(writer.summary)
}

impl Writer {
    fn chunk(&mut self, partial: &mut Partial, chunk: &Chunk) -> io::Result<()> {
        let mut rest = chunk.bytes.as_slice();
        while let Some(end) = memchr::memchr(b'\n', rest) {
            let (piece, after) = rest.split_at(end + 1);
            rest = after;
            if partial.oversized {
                *partial = Partial::default();
                continue;
            }
            if partial.bytes.is_empty() {
                self.line(chunk.direction, &piece[..end], piece.len(), chunk.at)?;
            } else {
                partial.bytes.extend_from_slice(piece);
                let line = std::mem::take(&mut partial.bytes);
                self.line(chunk.direction, &line[..line.len() - 1], line.len(), chunk.at)?;
            }
        }
        if !partial.oversized {
            partial.bytes.extend_from_slice(rest);
            if partial.bytes.len() > MAX_LINE {
                let size = partial.bytes.len();
                *partial = Partial {
                    bytes: Vec::new(),
                    oversized: true,
                };
                self.oversized(chunk.direction, size, chunk.at)?;
            }
        }
        Ok(())
    }

    /// One line (without its newline; `bytes`: its size on the wire).
    fn line(&mut self, direction: Direction, line: &[u8], bytes: usize, at: Instant) -> io::Result<()> {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.iter().all(u8::is_ascii_whitespace) {
            return Ok(());
        }
        let finding = self.inspector.inspect(direction, line, at);
        let message = match finding.kind {
            Some(Kind::Invalid) => None,
            _ => std::str::from_utf8(line)
                .ok()
                .and_then(|text| serde_json::from_str::<&RawValue>(text).ok()),
        };
        let raw = message.is_none().then(|| {
            let cut = &line[..line.len().min(MAX_RAW)];
            String::from_utf8_lossy(cut).into_owned()
        });
        self.write(direction, bytes, at, &finding, message, raw)
    }

    fn oversized(&mut self, direction: Direction, size: usize, at: Instant) -> io::Result<()> {
        let finding = Finding {
            kind: Some(Kind::Invalid),
            problems: vec![Problem {
                rule: "oversized",
                detail: format!("a line longer than {size} bytes (not kept)"),
            }],
            ..Finding::default()
        };
        self.write(direction, size, at, &finding, None, None)
    }

    fn write(
        &mut self,
        direction: Direction,
        bytes: usize,
        at: Instant,
        finding: &Finding,
        message: Option<&RawValue>,
        raw: Option<String>,
    ) -> io::Result<()> {
        self.summary.messages += 1;
        if !finding.problems.is_empty() {
            self.summary.violations += 1;
        }
        let elapsed = at.saturating_duration_since(self.start);
        let record = Record {
            seq: self.summary.messages,
            unix_ms: (self.start_unix + elapsed).as_secs_f64() * 1000.0,
            elapsed_us: elapsed.as_micros() as u64,
            dir: direction,
            bytes,
            kind: finding.kind.unwrap_or(Kind::Invalid),
            id: finding.id.as_ref(),
            method: finding.method.as_deref(),
            session: finding.session.as_ref().map(|session| session.as_str()),
            latency_us: finding.latency.map(|latency| latency.as_micros() as u64),
            unstable: finding.unstable,
            legacy: finding.legacy,
            verdict: if finding.problems.is_empty() {
                "ok"
            } else {
                "violation"
            },
            problems: &finding.problems,
            message,
            raw,
        };
        serde_json::to_writer(&mut self.out, &record)?;
        self.out.write_all(b"\n")
    }
}
