//! A process killed mid-turn (SIGKILL) loses only the turn in flight.

use crate::sandbox;
use agentry_tests::Sandbox;
use nix::sys::signal::Signal;
use serde_json::json;

fn message_count(sb: &Sandbox, session: &str) -> i64 {
    let db = rusqlite::Connection::open(sb.database()).unwrap();
    let check: String = db
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok");
    db.query_row(
        "SELECT COUNT(*) FROM messages m JOIN chats c ON c.id = m.chat_id WHERE c.session_id = ?1",
        [session],
        |r| r.get(0),
    )
    .unwrap()
}

#[test]
fn sigkill_mid_turn_keeps_every_finished_turn_and_the_store_stays_usable() {
    let sb = sandbox();
    let first = sb.script(
        "first",
        &json!({"responses": [
            {"events": [{"tool_call": {"id": "c1", "name": "Nope", "arguments": {}}}]},
            {"events": [{"text": "first answer"}]}
        ]}),
    );
    let out = sb.run_scripted(&first, &["--output-format", "json", "first"]);
    assert_eq!(out.code, Some(0), "{out:?}");
    let id = out.json()["session_id"].as_str().unwrap().to_owned();
    assert_eq!(message_count(&sb, &id), 4);

    let slow = sb.script(
        "slow",
        &json!({"responses": [
            {"events": [{"tool_call": {"id": "c2", "name": "Nope", "arguments": {}}}]},
            {"events": [{"text": "half an ans"}, {"delay_ms": 60000}, {"text": "wer"}]}
        ]}),
    );
    let mut running = sb.spawn_scripted(
        &slow,
        &["--resume", &id, "--output-format", "stream-json", "second"],
    );
    running.wait_for_line(|l| l.contains("half an ans"));
    running.signal(Signal::SIGKILL);
    let status = running.wait();
    assert_eq!(status.code(), None, "killed by a signal");

    // The finished turn is intact; the one in flight is gone without a trace.
    assert_eq!(message_count(&sb, &id), 4);

    let third = sb.script(
        "third",
        &json!({"responses": [{"events": [{"text": "third answer"}]}]}),
    );
    let out = sb.run_scripted(
        &third,
        &["--resume", &id, "--output-format", "json", "third"],
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(out.json()["result"], "third answer");
    assert_eq!(message_count(&sb, &id), 6);
}
