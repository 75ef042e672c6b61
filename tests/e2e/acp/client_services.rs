//! The client's services: its `fs` methods for the file tools, its terminals for Bash; each
//! test runs with the providers linked and loaded as plugins into the thin CLI.

use super::*;
use crate::both_ways;
use crate::loading::{Loading, as_strs};

both_ways!(file_tools_go_through_the_clients_fs_methods_when_offered);
fn file_tools_go_through_the_clients_fs_methods_when_offered(loading: Loading) {
    let sb = loading.sandbox();
    let file = sb.project().join("app.py");
    std::fs::write(&file, "print('saved')\n").unwrap();
    let path = file.display().to_string();
    let server = MockModelServer::start_blocking([
        MockTurn::Reply(MockReply::tool_call(
            "call_read",
            "Read",
            json!({"file_path": "app.py"}),
        )),
        MockTurn::Reply(MockReply::tool_call(
            "call_edit",
            "Edit",
            json!({"file_path": "app.py", "old_string": "unsaved", "new_string": "edited"}),
        )),
        MockTurn::Reply(MockReply::text("done")),
    ]);
    let args = loading.args(&["--permission-mode", "accept_edits"]);
    let out = acp_with_model(
        &sb,
        &server,
        &as_strs(&args),
        json!({
            "clientCapabilities": {"fs": {"readTextFile": true, "writeTextFile": true}},
            "buffers": {path.clone(): "print('unsaved')\n"},
            "steps": session_steps(&sb, vec![prompt("edit it")]),
        }),
    );
    assert_eq!(out.result(2)["stopReason"], "end_turn");
    let fs: Vec<(String, String)> = out
        .of_kind("fs")
        .iter()
        .map(|r| {
            (
                r["op"].as_str().unwrap().to_owned(),
                r["path"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        fs,
        [
            ("read".into(), path.clone()),
            ("read".into(), path.clone()),
            ("write".into(), path.clone())
        ]
    );
    let written = out.of_kind("fs").last().unwrap()["content"].clone();
    assert_eq!(written, "print('edited')\n");
    let read_result = server.requests()[1].body["messages"].to_string();
    assert!(
        read_result.contains("unsaved"),
        "Read saw the editor's buffer: {read_result}"
    );
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "print('saved')\n",
        "the disk is left to the editor"
    );
}

both_ways!(bash_runs_in_the_clients_terminal_when_offered);
fn bash_runs_in_the_clients_terminal_when_offered(loading: Loading) {
    let sb = loading.sandbox();
    let (server, out) = bash_in_client_terminal(
        &sb,
        loading,
        "echo from-the-editor; exit 3",
        prompt("run it"),
    );
    assert_eq!(out.result(2)["stopReason"], "end_turn");
    let ops = terminal_ops(&out);
    assert_eq!(ops, ["create", "wait_for_exit", "output", "release"]);
    let created = out.of_kind("terminal")[0];
    assert_eq!(created["command"], "bash");
    let terminal_id = created["terminalId"].as_str().unwrap();
    let embedded = tool_updates(&out, "call_bash")
        .iter()
        .flat_map(|u| u["content"].as_array().into_iter().flatten())
        .any(|c| c["type"] == "terminal" && c["terminalId"] == terminal_id);
    assert!(embedded, "the tool call shows the client's terminal");
    assert_eq!(final_status(&out, "call_bash"), "failed", "exit code 3");
    let told = server.requests()[1].body["messages"].to_string();
    assert!(
        told.contains("from-the-editor") && told.contains("Exit code 3"),
        "{told}"
    );
}

both_ways!(cancelling_kills_the_command_in_the_clients_terminal);
fn cancelling_kills_the_command_in_the_clients_terminal(loading: Loading) {
    let sb = loading.sandbox();
    let cancel_soon = json!({"op": "prompt", "text": "wait", "cancelAfterMs": 1500});
    let (_server, out) = bash_in_client_terminal(
        &sb,
        loading,
        "echo $$ > pid.txt; exec sleep 30",
        cancel_soon,
    );
    assert_cancelled_cleanly(&out, 2);
    let ops = terminal_ops(&out);
    assert!(
        ops.contains(&"kill") && ops.last() == Some(&"release"),
        "{ops:?}"
    );
    assert!(process_gone(pid_in(&sb, "pid.txt")));
}

/// The client terminal methods the agent called, in order.
fn terminal_ops(out: &Transcript) -> Vec<&str> {
    out.of_kind("terminal")
        .into_iter()
        .map(|r| r["op"].as_str().unwrap())
        .collect()
}

/// A turn (`step`) whose model runs `command` with Bash (allowed), in a client that offers
/// terminals.
fn bash_in_client_terminal(
    sb: &Sandbox,
    loading: Loading,
    command: &str,
    step: Value,
) -> (MockModelServer, Transcript) {
    let server = bash_then_answer(command);
    let args = loading.args(&["--allow", "Bash"]);
    let out = acp_with_model(
        sb,
        &server,
        &as_strs(&args),
        json!({
            "clientCapabilities": {"terminal": true},
            "steps": session_steps(sb, vec![step]),
        }),
    );
    (server, out)
}

#[test]
fn a_third_party_tool_reads_the_editors_buffer_and_asks_the_sessions_model() {
    let sb = sandbox();
    let file = sb.project().join("app.py");
    std::fs::write(&file, "print('saved')\n").unwrap();
    let path = file.display().to_string();
    let server = MockModelServer::start_blocking([
        MockTurn::Reply(MockReply::tool_call(
            "call_sum",
            "Summarize",
            json!({"file": "app.py"}),
        )),
        // The tool's side question.
        MockTurn::Reply(MockReply::text("It prints a word not yet saved.")),
        MockTurn::Reply(MockReply::text("done")),
    ]);
    let plugin = crate::plugins::plugin_arg();
    let out = acp_with_model(
        &sb,
        &server,
        &["--plugin", &plugin],
        json!({
            "clientCapabilities": {"fs": {"readTextFile": true, "writeTextFile": true}},
            "buffers": {path.clone(): "print('unsaved')\n"},
            "steps": session_steps(&sb, vec![prompt("summarise app.py")]),
        }),
    );
    assert_eq!(out.result(2)["stopReason"], "end_turn", "{}", out.stderr);
    assert_eq!(final_status(&out, "call_sum"), "completed");
    let read: Vec<&str> = out
        .of_kind("fs")
        .iter()
        .filter(|r| r["op"] == "read")
        .map(|r| r["path"].as_str().unwrap())
        .collect();
    assert_eq!(read, [path.as_str()], "read through the editor");
    // The side question: the tool's own system prompt and the buffer's text, no tools.
    let asked = &server.requests()[1].body;
    assert!(asked.get("tools").is_none(), "{asked}");
    let messages = asked["messages"].to_string();
    assert!(
        messages.contains("You summarise files") && messages.contains("print('unsaved')"),
        "{messages}"
    );
    let result = server.requests()[2].body["messages"].to_string();
    assert!(
        result.contains("It prints a word not yet saved."),
        "{result}"
    );
}
