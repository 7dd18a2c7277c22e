//! `acp-engine view`: a trace (`acp-engine trace`) as one self-contained
//! HTML page, a timeline to read in any browser with no network: the
//! page's script and style (`page.js`, `page.css`) and the records are all
//! inside it.

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

use acp_engine::schema::method;
use serde_json::value::RawValue;

use crate::args::{Args, Failure};

const HELP: &str = "\
usage: acp-engine view TRACE.jsonl [-o PAGE.html]

Writes a trace recorded by `acp-engine trace` as one self-contained HTML
page (no network, nothing fetched): a timeline of every message with
requests paired with their responses and latency, updates grouped by
session and turn, permission requests and problems highlighted, filters by
method, session, direction and verdict, and a message's full JSON on click.
Stays usable on traces of 100,000 messages and more (only the visible rows
are drawn).

options:
  -o, --out FILE   the page (default: the trace's name with .html)
  -h, --help       this text
";

const PAGE: &str = include_str!("page.html");
const STYLE: &str = include_str!("page.css");
const SCRIPT: &str = include_str!("page.js");

pub fn main(argv: Vec<String>) -> Result<(), Failure> {
    let argv = argv
        .into_iter()
        .map(|word| if word == "-o" { "--out".to_owned() } else { word })
        .collect();
    let args = Args::parse(argv, &["out"])?;
    if args.help {
        out!("{HELP}");
        return Ok(());
    }
    let [trace] = args.rest.as_slice() else {
        return Err(Failure::Usage("view needs one trace file".to_owned()));
    };
    let trace = PathBuf::from(trace);
    let out = args
        .value("out")
        .map(PathBuf::from)
        .unwrap_or_else(|| trace.with_extension("html"));
    let (records, skipped) = write_page(&trace, &out)?;
    errln!(
        "acp-engine view: {records} messages{} -> {}",
        if skipped > 0 {
            format!(" ({skipped} lines that are not JSON left out)")
        } else {
            String::new()
        },
        out.display()
    );
    Ok(())
}

/// The page for `trace`, written to `out`: how many records it holds, and
/// how many lines were not JSON.
fn write_page(trace: &Path, out: &Path) -> Result<(usize, usize), Failure> {
    let input = File::open(trace)
        .map_err(|error| Failure::Run(format!("cannot read {}: {error}", trace.display())))?;
    let failed = |error: std::io::Error| Failure::Run(format!("cannot write {}: {error}", out.display()));
    let mut page = BufWriter::new(File::create(out).map_err(failed)?);
    let (head, tail) = PAGE
        .split_once("{{TRACE}}")
        .expect("page.html has a {{TRACE}} slot");
    let title = html_escape(&trace.file_name().unwrap_or_default().to_string_lossy());
    let head = head
        .replace("{{TITLE}}", &title)
        .replace("{{STYLE}}", STYLE)
        .replace("{{METHODS}}", &methods());
    page.write_all(head.as_bytes()).map_err(failed)?;
    page.write_all(b"[").map_err(failed)?;
    let (mut records, mut skipped) = (0, 0);
    for line in BufReader::new(input).split(b'\n') {
        let line = line.map_err(|error| Failure::Run(format!("cannot read {}: {error}", trace.display())))?;
        let Some(record) = std::str::from_utf8(&line)
            .ok()
            .filter(|text| !text.trim().is_empty())
            .and_then(|text| serde_json::from_str::<&RawValue>(text).ok())
        else {
            skipped += usize::from(!line.iter().all(u8::is_ascii_whitespace));
            continue;
        };
        if records > 0 {
            page.write_all(b",\n").map_err(failed)?;
        }
        // Inside <script>, "</" or "<!--" could end or escape the element;
        // in JSON "<" only occurs in strings, where "\u003c" means the same.
        page.write_all(record.get().replace('<', "\\u003c").as_bytes())
            .map_err(failed)?;
        records += 1;
    }
    page.write_all(b"]").map_err(failed)?;
    // In a script, "<\/" is "</" and cannot end the element.
    let tail = tail.replace("{{SCRIPT}}", &SCRIPT.replace("</", "<\\/"));
    page.write_all(tail.as_bytes()).map_err(failed)?;
    page.flush().map_err(failed)?;
    Ok((records, skipped))
}

/// The method names the page's script needs, from the generated tables.
fn methods() -> String {
    serde_json::json!({
        "prompt": method::SESSION_PROMPT,
        "update": method::SESSION_UPDATE,
        "requestPermission": method::SESSION_REQUEST_PERMISSION,
    })
    .to_string()
}

fn html_escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
