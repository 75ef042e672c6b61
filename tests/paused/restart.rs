//! A question asked inside a sub-agent pauses the chat; a new process reopens the session from
//! its SQLite file and the answer resumes the sub-agent where it stopped (the `paused-chat`
//! program, run once per chat).
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use serde_json::{Value, json};
use std::path::Path;
use std::process::Command;

/// Runs one chat in a fresh process and returns its report.
fn chat(db: &Path, script: Value, cwd: &Path, command: &[&str]) -> Value {
    let script_file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(script_file.path(), script.to_string()).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_paused-chat"))
        .arg(db)
        .arg(script_file.path())
        .arg(cwd)
        .args(command)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

fn responses(responses: Value) -> Value {
    json!({ "responses": responses })
}

fn tool_call(id: &str, name: &str, arguments: Value) -> Value {
    json!({"events": [{"tool_call": {"id": id, "name": name, "arguments": arguments}}]})
}

fn text(text: &str) -> Value {
    json!({"events": [{"text": text}]})
}

/// The statuses the call `id` went through in `report`'s events.
fn statuses(report: &Value, id: &str) -> Vec<String> {
    report["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| {
            matches!(e["type"].as_str(), Some("tool_call" | "tool_call_update"))
                && e["tool_call_id"] == id
                && e["status"].is_string()
        })
        .map(|e| e["status"].as_str().unwrap().to_owned())
        .collect()
}

/// The text of the last tool result in a request's messages.
fn last_result(messages: &Value) -> String {
    let last = messages.as_array().unwrap().last().unwrap();
    last["results"][0]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no tool result: {last}"))
        .to_owned()
}

#[test]
fn a_sub_agents_question_is_answered_in_a_new_process() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("sessions.db");
    let question = json!({"questions": [{
        "question": "Which database?",
        "header": "Database",
        "options": [{"label": "PostgreSQL"}, {"label": "SQLite"}],
    }]});
    let first = chat(
        &db,
        responses(json!([
            tool_call(
                "agent_1",
                "Agent",
                json!({"description": "Pick a database", "prompt": "Pick the database"})
            ),
            tool_call("ask_1", "AskUserQuestion", question),
        ])),
        dir.path(),
        &["prompt", "Set the project up"],
    );
    assert_eq!(first["ended"]["stop_reason"], "paused", "{first}");
    let waiting = &first["waiting"][0];
    assert_eq!(waiting["tool_call_id"], "ask_1");
    assert_eq!(
        waiting["source_loop"],
        json!({"loop_id": "loop_agent_1", "parent_fork_tool_call_id": "agent_1"})
    );
    assert_eq!(
        statuses(&first, "agent_1"),
        ["pending", "in_progress", "awaiting_answer"]
    );
    assert_eq!(
        statuses(&first, "ask_1"),
        ["pending", "in_progress", "awaiting_answer"]
    );
    let session = first["session_id"].as_str().unwrap();

    // Another process, another model script: what the sub-agent and then the main loop say
    // once the answer is in.
    let second = chat(
        &db,
        responses(json!([
            text("SQLite, as the user chose."),
            text("Set up with SQLite.")
        ])),
        dir.path(),
        &[
            "answer",
            session,
            &json!({"tool_call_id": "ask_1", "selections": {"0": [1]}, "custom": {}}).to_string(),
        ],
    );
    assert_eq!(second["ended"]["stop_reason"], "end_turn", "{second}");
    assert_eq!(second["ended"]["result"], "Set up with SQLite.");
    assert_eq!(second["waiting"], Value::Null);
    assert_eq!(statuses(&second, "agent_1"), ["in_progress", "completed"]);
    assert_eq!(statuses(&second, "ask_1"), ["in_progress", "completed"]);
    let requests = second["requests"].as_array().unwrap();
    // The sub-agent's request: its task, its question and the answer, from the stored pause.
    let sub = requests[0].as_array().unwrap();
    assert_eq!(sub[0]["content"][0]["text"], "Pick the database");
    assert!(
        last_result(&requests[0]).contains("\"Which database?\" = \"SQLite\""),
        "{}",
        requests[0]
    );
    // The main loop's request: the whole stored conversation and the sub-agent's answer.
    let main = requests[1].as_array().unwrap();
    assert_eq!(main[0]["content"][0]["text"], "Set the project up");
    let answer = last_result(&requests[1]);
    assert!(
        answer.starts_with("SQLite, as the user chose.") && answer.contains("2 model requests"),
        "the sub-agent's requests count from before the pause: {answer}"
    );
    // The sub-agent's resumed turns still name their parent call.
    assert!(second["events"].as_array().unwrap().iter().any(|e| {
        e["type"] == "turn_started"
            && e["loop_id"] == "loop_agent_1"
            && e["parent_fork_tool_call_id"] == "agent_1"
    }));

    // The answer was used up: answering again is refused, and nothing changes.
    let again = chat(
        &db,
        responses(json!([])),
        dir.path(),
        &[
            "answer",
            session,
            &json!({"tool_call_id": "ask_1", "selections": {"0": [0]}}).to_string(),
        ],
    );
    assert!(
        again["ended"]["error"]
            .as_str()
            .unwrap()
            .contains("no question of this session waits"),
        "{again}"
    );
}
