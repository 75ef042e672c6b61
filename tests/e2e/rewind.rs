//! Checkpoints and `agentry run --rewind`: every kind of change a chat makes to the workspace
//! (Edit, Write, and commands: `rm`, a created file, `chmod +x`) undone exactly, hand edits
//! kept unless confirmed, the conversation cut back; each step a process of its own.

use crate::{run_openai, user_texts};
use agentry_tests::Sandbox;
use agentry_tests::mock_model::{MockModelServer, MockReply, MockTurn};
use serde_json::{Value, json};
use std::os::unix::fs::PermissionsExt;

/// The project before the chat.
fn project(sb: &Sandbox) {
    sb.write("project/edit.txt", "old line\n");
    sb.write("project/tracked.txt", "keep me\n");
    sb.write("project/script.sh", "echo hi\n");
    sb.write("project/.gitignore", "build/\n");
    sb.write("project/build/out.bin", "ignored, never touched");
}

fn read(sb: &Sandbox, file: &str) -> Option<String> {
    std::fs::read_to_string(sb.project().join(file)).ok()
}

fn mode(sb: &Sandbox, file: &str) -> u32 {
    std::fs::metadata(sb.project().join(file))
        .unwrap()
        .permissions()
        .mode()
        & 0o777
}

/// A chat that edits, writes and runs a command that removes, creates and makes executable.
fn changing_chat() -> MockModelServer {
    MockModelServer::start_blocking([
        MockTurn::Reply(MockReply::tool_call(
            "r",
            "Read",
            json!({"file_path": "edit.txt"}),
        )),
        MockTurn::Reply(MockReply::tool_call(
            "e",
            "Edit",
            json!({"file_path": "edit.txt", "old_string": "old line", "new_string": "new line"}),
        )),
        MockTurn::Reply(MockReply::tool_call(
            "w",
            "Write",
            json!({"file_path": "new.txt", "content": "written\n"}),
        )),
        MockTurn::Reply(MockReply::tool_call(
            "b",
            "Bash",
            json!({"command": "rm tracked.txt && echo made > made.txt && chmod +x script.sh && echo more > build/more.bin", "description": "change things"}),
        )),
        MockTurn::Reply(MockReply::text("Changed.")),
    ])
}

/// The session and the user turn of the chat `out` printed (`--output-format stream-json`).
fn session_and_turn(out: &agentry_tests::Outcome) -> (String, String) {
    let events = out.json_lines();
    let session = events
        .iter()
        .find_map(|e| e["session_id"].as_str())
        .unwrap()
        .to_owned();
    let turn = events
        .iter()
        .find(|e| e["type"] == "turn_started" && e["role"] == "user")
        .and_then(|e| e["turn_id"].as_str())
        .unwrap()
        .to_owned();
    (session, turn)
}

fn rewind(sb: &Sandbox, target: &str, extra: &[&str]) -> Value {
    let mut args = vec!["run", "--rewind", target, "--output-format", "json"];
    args.extend_from_slice(extra);
    let out = sb.run(&args);
    assert_eq!(out.code, Some(0), "{out:?}");
    out.json()
}

fn paths(list: &Value) -> Vec<&str> {
    let mut paths: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    paths.sort();
    paths
}

#[test]
fn a_rewind_undoes_edits_writes_and_commands_and_keeps_hand_edits_unless_confirmed() {
    let sb = crate::sandbox();
    project(&sb);
    let server = changing_chat();
    let out = run_openai(
        &sb,
        &server,
        &[
            "--permission-mode",
            "bypass",
            "--output-format",
            "stream-json",
            "change things",
        ],
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    let (session, turn) = session_and_turn(&out);
    assert_eq!(read(&sb, "edit.txt").as_deref(), Some("new line\n"));
    assert_eq!(read(&sb, "tracked.txt"), None);
    assert_eq!(mode(&sb, "script.sh") & 0o111, 0o111);
    // The user changes one of the agent's files by hand.
    sb.write("project/new.txt", "changed by hand\n");

    // Files only: everything but the hand edit is put back, and the hand edit is named.
    let target = format!("{session}:{turn}");
    let first = rewind(&sb, &target, &["--rewind-scope", "files"]);
    assert_eq!(first["conversation"], false);
    assert_eq!(paths(&first["hand_edited"]), ["new.txt"]);
    assert_eq!(
        paths(&first["files"]),
        ["edit.txt", "made.txt", "script.sh", "tracked.txt"]
    );
    assert_eq!(read(&sb, "edit.txt").as_deref(), Some("old line\n"));
    assert_eq!(read(&sb, "tracked.txt").as_deref(), Some("keep me\n"));
    assert_eq!(read(&sb, "made.txt"), None);
    assert_eq!(mode(&sb, "script.sh"), 0o644);
    assert_eq!(read(&sb, "new.txt").as_deref(), Some("changed by hand\n"));
    // What the ignore rules exclude is never checkpointed, so never touched.
    assert_eq!(read(&sb, "build/more.bin").as_deref(), Some("more\n"));

    // Confirmed, and with the conversation: the hand-edited file goes too (the agent made it).
    let second = rewind(&sb, &target, &["--overwrite-hand-edits"]);
    assert_eq!(second["conversation"], true);
    assert_eq!(paths(&second["files"]), ["new.txt"]);
    assert_eq!(read(&sb, "new.txt"), None);

    // The next chat in the session starts from before the rewound one.
    let next = MockModelServer::start_blocking([MockTurn::Reply(MockReply::text("Fresh."))]);
    let out = run_openai(&sb, &next, &["--resume", &session, "again"]);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(user_texts(&next.requests()[0].body), ["again"]);
    // The chat is gone: rewinding to it again says so.
    let again = sb.run(&["run", "--rewind", &target]);
    assert_eq!(again.code, Some(2), "{again:?}");
    assert!(again.stderr.contains(&turn), "{}", again.stderr);
}

#[test]
fn a_rewind_of_the_conversation_alone_leaves_the_files_as_they_are() {
    let sb = crate::sandbox();
    project(&sb);
    let first = MockModelServer::start_blocking([MockTurn::Reply(MockReply::text("Hello."))]);
    let out = run_openai(&sb, &first, &["--output-format", "json", "hello"]);
    assert_eq!(out.code, Some(0), "{out:?}");
    let session = out.json()["session_id"].as_str().unwrap().to_owned();
    let server = changing_chat();
    let out = run_openai(
        &sb,
        &server,
        &[
            "--permission-mode",
            "bypass",
            "--resume",
            &session,
            "change things",
        ],
    );
    assert_eq!(out.code, Some(0), "{out:?}");

    // Without a chat named: to before the last one.
    let rewound = rewind(&sb, &session, &["--rewind-scope", "conversation"]);
    assert_eq!(rewound["conversation"], true);
    assert_eq!(rewound["files"], json!([]));
    assert_eq!(read(&sb, "edit.txt").as_deref(), Some("new line\n"));
    assert_eq!(read(&sb, "made.txt").as_deref(), Some("made\n"));

    let next = MockModelServer::start_blocking([MockTurn::Reply(MockReply::text("Fresh."))]);
    let out = run_openai(&sb, &next, &["--resume", &session, "again"]);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(user_texts(&next.requests()[0].body), ["hello", "again"]);
}
