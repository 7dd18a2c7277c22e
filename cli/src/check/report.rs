//! What `check` prints: a line per case as it finishes (on a terminal),
//! the table, `--json` lines, and a JUnit XML report.

use std::io::IsTerminal;

use serde_json::json;

use super::case::{Case, Outcome, Verdict};

fn word(verdict: &Verdict) -> &'static str {
    match verdict {
        Verdict::Pass => "pass",
        Verdict::Fail => "FAIL",
        Verdict::Skip => "skip",
    }
}

/// A case finished: its JSON line with `--json`, else a progress line on
/// stderr when it is a terminal.
pub fn progress(case: &Case, outcome: &Outcome, json: bool) {
    if json {
        let line = json!({
            "case": case.name,
            "class": case.class,
            "verdict": word(&outcome.verdict).to_lowercase(),
            "evidence": outcome.evidence,
            "ms": outcome.elapsed.as_millis() as u64,
        });
        println!("{line}");
    } else if std::io::stderr().is_terminal() {
        eprintln!("{} {}", word(&outcome.verdict), case.name);
    }
}

/// The table: case, class, verdict, evidence; then the totals.
pub fn table(results: &[(Case, Outcome)]) {
    let colour = std::io::stdout().is_terminal();
    let name_width = results
        .iter()
        .map(|(case, _)| case.name.len())
        .max()
        .unwrap_or(4)
        .max(4);
    let class_width = results
        .iter()
        .map(|(case, _)| case.class.len())
        .max()
        .unwrap_or(5)
        .max(5);
    println!(
        "{:name_width$}  {:class_width$}  verdict  evidence",
        "case", "class"
    );
    for (case, outcome) in results {
        let verdict = word(&outcome.verdict);
        let painted = match (&outcome.verdict, colour) {
            (Verdict::Pass, true) => format!("\x1b[32m{verdict:7}\x1b[0m"),
            (Verdict::Fail, true) => format!("\x1b[31m{verdict:7}\x1b[0m"),
            (Verdict::Skip, true) => format!("\x1b[33m{verdict:7}\x1b[0m"),
            _ => format!("{verdict:7}"),
        };
        println!(
            "{:name_width$}  {:class_width$}  {painted}  {}",
            case.name, case.class, outcome.evidence
        );
    }
    let count = |verdict: Verdict| results.iter().filter(|(_, o)| o.verdict == verdict).count();
    println!(
        "{} passed, {} failed, {} skipped",
        count(Verdict::Pass),
        count(Verdict::Fail),
        count(Verdict::Skip)
    );
}

/// A JUnit XML report: one testsuite, a testcase per case.
pub fn junit(agent: &[String], results: &[(Case, Outcome)]) -> String {
    let failures = results.iter().filter(|(_, o)| o.verdict == Verdict::Fail).count();
    let skipped = results.iter().filter(|(_, o)| o.verdict == Verdict::Skip).count();
    let seconds: f64 = results.iter().map(|(_, o)| o.elapsed.as_secs_f64()).sum();
    let mut xml = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuite name=\"acp-engine check agent: {}\" tests=\"{}\" failures=\"{failures}\" skipped=\"{skipped}\" time=\"{seconds:.3}\">\n",
        escape(&agent.join(" ")),
        results.len()
    );
    for (case, outcome) in results {
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
