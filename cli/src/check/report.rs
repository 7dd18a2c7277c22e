//! What `check` prints: a line per case as it finishes (on a terminal),
//! the table, `--json` lines, and a JUnit XML report.

use std::io::IsTerminal;

use serde_json::json;

use super::case::{Outcome, Verdict};

/// One case's result, whichever side was checked.
pub struct Row {
    pub name: String,
    pub class: String,
    pub description: String,
    pub outcome: Outcome,
}

fn word(verdict: &Verdict) -> &'static str {
    match verdict {
        Verdict::Pass => "pass",
        Verdict::Fail => "FAIL",
        Verdict::Skip => "skip",
    }
}

/// A case finished: its JSON line with `--json`, else a progress line on
/// stderr when it is a terminal.
pub fn progress(row: &Row, json: bool) {
    let outcome = &row.outcome;
    if json {
        let line = json!({
            "case": row.name,
            "class": row.class,
            "verdict": word(&outcome.verdict).to_lowercase(),
            "evidence": outcome.evidence,
            "ms": outcome.elapsed.as_millis() as u64,
            "invalid_notifications": outcome.invalid_notifications,
        });
        outln!("{line}");
    } else if std::io::stderr().is_terminal() {
        errln!("{} {}", word(&outcome.verdict), row.name);
    }
}

/// The table: case, class, verdict, evidence; then the totals.
pub fn table(results: &[Row]) {
    let colour = std::io::stdout().is_terminal();
    let name_width = results.iter().map(|row| row.name.len()).max().unwrap_or(4).max(4);
    let class_width = results
        .iter()
        .map(|row| row.class.len())
        .max()
        .unwrap_or(5)
        .max(5);
    outln!(
        "{:name_width$}  {:class_width$}  verdict  evidence",
        "case",
        "class"
    );
    for row in results {
        let (case, outcome) = (row, &row.outcome);
        let verdict = word(&outcome.verdict);
        let painted = match (&outcome.verdict, colour) {
            (Verdict::Pass, true) => format!("\x1b[32m{verdict:7}\x1b[0m"),
            (Verdict::Fail, true) => format!("\x1b[31m{verdict:7}\x1b[0m"),
            (Verdict::Skip, true) => format!("\x1b[33m{verdict:7}\x1b[0m"),
            _ => format!("{verdict:7}"),
        };
        outln!(
            "{:name_width$}  {:class_width$}  {painted}  {}",
            case.name,
            case.class,
            outcome.evidence
        );
    }
    let count = |verdict: Verdict| {
        results
            .iter()
            .filter(|row| row.outcome.verdict == verdict)
            .count()
    };
    let invalid: Vec<&String> = results
        .iter()
        .flat_map(|row| &row.outcome.invalid_notifications)
        .collect();
    if let Some(first) = invalid.first() {
        outln!(
            "warning: {} notification(s) from the peer fail the schema (a client drops them), e.g. {first}",
            invalid.len()
        );
    }
    outln!(
        "{} passed, {} failed, {} skipped",
        count(Verdict::Pass),
        count(Verdict::Fail),
        count(Verdict::Skip)
    );
}

/// A JUnit XML report: one testsuite, a testcase per case.
pub fn junit(title: &str, results: &[Row]) -> String {
    let failures = results
        .iter()
        .filter(|row| row.outcome.verdict == Verdict::Fail)
        .count();
    let skipped = results
        .iter()
        .filter(|row| row.outcome.verdict == Verdict::Skip)
        .count();
    let seconds: f64 = results.iter().map(|row| row.outcome.elapsed.as_secs_f64()).sum();
    let mut xml = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" skipped=\"{skipped}\" time=\"{seconds:.3}\">\n",
        escape(title),
        results.len()
    );
    for row in results {
        let (case, outcome) = (row, &row.outcome);
        xml.push_str(&format!(
            "  <testcase classname=\"{}\" name=\"{}\" time=\"{:.3}\">",
            escape(&case.class),
            escape(&case.name),
            outcome.elapsed.as_secs_f64()
        ));
        match outcome.verdict {
            Verdict::Pass => {}
            Verdict::Fail => xml.push_str(&format!(
                "<failure message=\"{}\">{}</failure>",
                escape(&case.description),
                escape(&outcome.evidence)
            )),
            Verdict::Skip => xml.push_str(&format!("<skipped message=\"{}\"/>", escape(&outcome.evidence))),
        }
        xml.push_str("</testcase>\n");
    }
    xml.push_str("</testsuite>\n");
    xml
}

fn escape(text: &str) -> String {
    text.chars()
        .filter(|c| !c.is_control() || *c == '\n' || *c == '\t')
        .collect::<String>()
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
