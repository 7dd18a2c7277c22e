//! Server-sent events as Streamable HTTP uses them: one JSON-RPC message
//! per event, in `data:` lines. Reading follows the official TypeScript
//! SDK's client: lines end in CRLF, LF or a bare CR, a BOM at a line's start
//! is dropped, only `data:` lines count (several are joined with `\n`), a
//! blank line ends an event, and an event pending at the end of the stream
//! is still delivered. Every event a server sends carries an `id:` (a
//! number that grows through the connection), and a client that reopens a
//! broken stream sends the last one it got as `Last-Event-ID`.

/// Why a stream of events cannot be read on.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct TooLarge;

/// One message as event `id`.
pub(crate) fn event(id: u64, message: &[u8]) -> Vec<u8> {
    let mut frame = Vec::with_capacity(message.len() + 32);
    frame.extend_from_slice(b"id: ");
    frame.extend_from_slice(itoa::Buffer::new().format(id).as_bytes());
    frame.extend_from_slice(b"\ndata: ");
    frame.extend_from_slice(message);
    frame.extend_from_slice(b"\n\n");
    frame
}

/// A comment that keeps an idle stream alive through proxies.
pub(crate) const KEEP_ALIVE: &[u8] = b":\n\n";

/// What a line may hold besides an event's data: `data: ` and a BOM.
const LINE_SLACK: usize = 16;

/// Reads events from chunks as they arrive.
pub(crate) struct Parser {
    line: Vec<u8>,
    data: Vec<u8>,
    has_data: bool,
    /// The `id:` of the event being read, and of the last one delivered.
    pending_id: Option<Vec<u8>>,
    last_id: Option<Vec<u8>>,
    /// The last chunk ended in CR: an LF starting the next one belongs to it.
    after_cr: bool,
    max_event: usize,
}

impl Parser {
    pub(crate) fn new(max_event: usize) -> Self {
        Self {
            line: Vec::new(),
            data: Vec::new(),
            has_data: false,
            pending_id: None,
            last_id: None,
            after_cr: false,
            max_event,
        }
    }

    /// Take `chunk`, pushing each completed event's data to `events`.
    pub(crate) fn feed(&mut self, mut chunk: &[u8], events: &mut Vec<Vec<u8>>) -> Result<(), TooLarge> {
        if self.after_cr && chunk.first() == Some(&b'\n') {
            chunk = &chunk[1..];
        }
        self.after_cr = false;
        while let Some(end) = memchr::memchr2(b'\n', b'\r', chunk) {
            self.line.extend_from_slice(&chunk[..end]);
            self.check_line()?;
            let line = std::mem::take(&mut self.line);
            self.take_line(&line, events)?;
            self.line = line;
            self.line.clear();
            let crlf = chunk[end] == b'\r' && chunk.get(end + 1) == Some(&b'\n');
            if chunk[end] == b'\r' && end + 1 == chunk.len() {
                self.after_cr = true;
            }
            chunk = &chunk[end + if crlf { 2 } else { 1 }..];
        }
        self.line.extend_from_slice(chunk);
        self.check_line()
    }

    /// A line over the event limit (plus room for `data: ` and a BOM) is
    /// refused however it arrived: whole, or a piece per chunk.
    fn check_line(&self) -> Result<(), TooLarge> {
        if self.line.len() > self.max_event + LINE_SLACK {
            return Err(TooLarge);
        }
        Ok(())
    }

    /// The stream ended: an event pending without its blank line counts.
    pub(crate) fn finish(&mut self, events: &mut Vec<Vec<u8>>) -> Result<(), TooLarge> {
        if !self.line.is_empty() {
            let line = std::mem::take(&mut self.line);
            self.take_line(&line, events)?;
        }
        self.dispatch(events);
        Ok(())
    }

    fn take_line(&mut self, line: &[u8], events: &mut Vec<Vec<u8>>) -> Result<(), TooLarge> {
        let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
        if line.is_empty() {
            self.dispatch(events);
            return Ok(());
        }
        if let Some(id) = line.strip_prefix(b"id:") {
            let id = id.strip_prefix(b" ").unwrap_or(id);
            // As the SSE spec: an id holding NUL is ignored.
            if !id.contains(&0) {
                self.pending_id = Some(id.to_vec());
            }
            return Ok(());
        }
        let Some(value) = line.strip_prefix(b"data:") else {
            return Ok(());
        };
        let value = value.strip_prefix(b" ").unwrap_or(value);
        if self.has_data {
            self.data.push(b'\n');
        }
        self.data.extend_from_slice(value);
        self.has_data = true;
        if self.data.len() > self.max_event {
            return Err(TooLarge);
        }
        Ok(())
    }

    /// The `id:` of the last event delivered (not of one still being read:
    /// a stream broken mid-event resumes before that event).
    pub(crate) fn last_event_id(&self) -> Option<&[u8]> {
        self.last_id.as_deref()
    }

    fn dispatch(&mut self, events: &mut Vec<Vec<u8>>) {
        if let Some(id) = self.pending_id.take() {
            self.last_id = Some(id);
        }
        if self.has_data {
            events.push(std::mem::take(&mut self.data));
            self.has_data = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(chunks: &[&[u8]]) -> Vec<String> {
        let mut parser = Parser::new(1024);
        let mut events = Vec::new();
        for chunk in chunks {
            parser.feed(chunk, &mut events).unwrap();
        }
        parser.finish(&mut events).unwrap();
        events
            .into_iter()
            .map(|e| String::from_utf8(e).unwrap())
            .collect()
    }

    #[test]
    fn events_are_read_across_chunks_and_line_endings() {
        assert_eq!(parse(&[b"data: {\"a\":1}\n\n"]), ["{\"a\":1}"]);
        assert_eq!(parse(&[b"data: x\r", b"\ndata:y\r\n\r\n"]), ["x\ny"]);
        assert_eq!(
            parse(&[b":\n\nevent: e\nid: 1\nretry: 5\ndata: z\r\rdata: w"]),
            ["z", "w"]
        );
        assert_eq!(parse(&[b"\xEF\xBB\xBFdata: b\n", b"\n"]), ["b"]);
        assert_eq!(parse(&[b"da", b"ta: sp", b"lit\n\n"]), ["split"]);
        assert_eq!(parse(&[b":\n\n:\n\n"]), Vec::<String>::new());
    }

    #[test]
    fn the_last_event_id_is_that_of_an_event_delivered_whole() {
        let mut parser = Parser::new(1024);
        let mut events = Vec::new();
        parser.feed(&event(7, b"{}"), &mut events).unwrap();
        assert_eq!(parser.last_event_id(), Some(b"7".as_slice()));
        parser.feed(b"id: 8\ndata: {", &mut events).unwrap();
        assert_eq!(
            parser.last_event_id(),
            Some(b"7".as_slice()),
            "event 8 is not whole"
        );
        parser.feed(b"}\n\n", &mut events).unwrap();
        assert_eq!(parser.last_event_id(), Some(b"8".as_slice()));
        assert_eq!(events, [b"{}".to_vec(), b"{}".to_vec()]);
    }

    #[test]
    fn a_long_line_is_refused_however_it_is_chunked() {
        let long_comment = [b":".as_slice(), &[b'c'; 40], b"\n\n"].concat();
        for size in [1, 7, long_comment.len()] {
            let mut parser = Parser::new(8);
            let mut events = Vec::new();
            let refused = long_comment
                .chunks(size)
                .any(|chunk| parser.feed(chunk, &mut events).is_err());
            assert!(refused, "chunks of {size}");
        }
    }

    #[test]
    fn an_event_over_the_limit_is_refused() {
        let mut parser = Parser::new(8);
        let mut events = Vec::new();
        assert_eq!(parser.feed(b"data: 0123456789\n", &mut events), Err(TooLarge));
        let mut parser = Parser::new(8);
        assert_eq!(parser.feed(&[b'x'; 64], &mut events), Err(TooLarge));
    }
}
