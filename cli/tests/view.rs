//! `acp-engine view` without a browser (`cli/tests/view/view.test.mjs`
//! drives the page in Chromium): the page holds every record, cannot be
//! broken out of by a message's text, skips lines that are not JSON, and
//! the command's usage errors exit 2.

mod support;

use support::{acp_engine, Scratch};

#[test]
fn a_page_holds_every_record_and_no_message_can_end_its_script() {
    let dir = Scratch::new("view-test");
    let (trace, page) = (dir.join("t.jsonl"), dir.join("t.html"));
    let hostile = r#"{"seq":1,"elapsed_us":1,"dir":"client_to_agent","bytes":9,"kind":"invalid","verdict":"violation","raw":"</script><script>alert(1)</script>"}"#;
    let plain = r#"{"seq":2,"elapsed_us":2,"dir":"agent_to_client","bytes":9,"kind":"notification","method":"_x","verdict":"ok","message":{"jsonrpc":"2.0","method":"_x"}}"#;
    std::fs::write(&trace, format!("{hostile}\nnot json\n\n{plain}\n")).unwrap();
    let run = acp_engine()
        .arg("view")
        .arg(&trace)
        .arg("-o")
        .arg(&page)
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    assert!(String::from_utf8_lossy(&run.stderr).contains("2 messages (1 lines that are not JSON left out)"));
    let html = std::fs::read_to_string(&page).unwrap();
    // Three scripts (the method names, the records, the viewer), each closed once.
    assert_eq!(html.matches("</script>").count(), 3, "{html}");
    assert!(!html.contains("<script>alert"));
    let records = &html[html
        .find(r#"<script id="trace" type="application/json">"#)
        .unwrap()..];
    let records = &records[records.find('>').unwrap() + 1..records.find("</script>").unwrap()];
    let parsed: Vec<serde_json::Value> = serde_json::from_str(records).unwrap();
    assert_eq!(parsed.len(), 2);
    assert_eq!(parsed[0]["raw"], "</script><script>alert(1)</script>");
    assert!(html.contains("<title>t.jsonl · acp-engine trace</title>"));
}

#[test]
fn usage_errors_exit_2_and_a_missing_trace_exits_1() {
    assert_eq!(acp_engine().arg("view").output().unwrap().status.code(), Some(2));
    let help = acp_engine().args(["view", "--help"]).output().unwrap();
    assert!(help.status.success());
    assert!(String::from_utf8_lossy(&help.stdout).starts_with("usage: acp-engine view"));
    let missing = acp_engine()
        .args(["view", "/nonexistent/trace.jsonl"])
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("cannot read"));
}
