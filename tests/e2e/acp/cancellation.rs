//! `session/cancel` and hanging up: turns end `cancelled`, commands end with them.

use super::*;

#[test]
fn a_second_prompt_while_a_turn_runs_is_refused_and_the_first_goes_on() {
    let sb = sandbox();
    let server = MockModelServer::start_blocking([MockTurn::Reply(MockReply {
        pause_before_last: Some(std::time::Duration::from_millis(800)),
        piece: 3,
        ..MockReply::text("slow answer")
    })]);
    let out = acp_with_model(
        &sb,
        &server,
        &[],
        json!({"steps": session_steps(&sb, vec![
            json!({"op": "prompt", "text": "first", "noWait": true}),
            json!({"op": "prompt", "text": "second", "cancelAfterMs": 2000}),
            json!({"op": "wait"}),
        ])}),
    );
    let refused = out.answer(3);
    assert_eq!(refused["kind"], "error");
    assert!(
        refused["message"]
            .as_str()
            .unwrap()
            .contains("already running"),
        "{refused}"
    );
    assert_eq!(out.result(2)["stopReason"], "end_turn");
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn cancelling_during_the_model_stream_ends_the_turn_cancelled() {
    let sb = sandbox();
    let server = MockModelServer::start_blocking([MockTurn::Reply(MockReply {
        stall_after: Some(600),
        piece: 2,
        ..MockReply::text("this answer never finishes arriving")
    })]);
    let out = acp_with_model(
        &sb,
        &server,
        &[],
        json!({"steps": session_steps(&sb, vec![json!({"op": "prompt", "text": "hi", "cancelAfterMs": 1000})])}),
    );
    assert_cancelled_cleanly(&out, 2);
    assert!(!out.agent_text().is_empty(), "the answer had begun");
    assert!(server.client_hung_up(), "the model request was dropped");
}

#[test]
fn cancelling_during_a_command_ends_the_turn_and_the_process() {
    let sb = sandbox();
    let server = bash_then_answer("echo $$ > pid.txt; exec sleep 30");
    let out = acp_with_model(
        &sb,
        &server,
        &["--allow", "Bash"],
        json!({"steps": session_steps(&sb, vec![json!({"op": "prompt", "text": "wait", "cancelAfterMs": 1500})])}),
    );
    assert_cancelled_cleanly(&out, 2);
    assert_eq!(final_status(&out, "call_bash"), "failed");
    assert!(
        process_gone(pid_in(&sb, "pid.txt")),
        "the command still runs"
    );
}

#[test]
fn cancelling_while_permission_is_asked_ends_the_turn_cancelled() {
    let sb = sandbox();
    let (server, out) = write_with_answers(&sb, 1, &["cancel"], &["write it"]);
    assert_eq!(out.of_kind("permission").len(), 1);
    assert_cancelled_cleanly(&out, 2);
    assert_eq!(final_status(&out, "call_0"), "failed");
    assert!(!sb.project().join("greeting0.txt").exists());
    assert_eq!(
        server.requests().len(),
        1,
        "no model request after the cancellation"
    );
}

#[test]
fn cancelling_a_permission_request_never_answered_ends_the_turn_cancelled() {
    let sb = sandbox();
    let (server, out) = write_with_answers(&sb, 1, &["ignore_then_cancel"], &["write it", "again"]);
    assert_eq!(out.of_kind("permission").len(), 1);
    assert_eq!(out.result(2)["stopReason"], "cancelled");
    assert_eq!(final_status(&out, "call_0"), "failed");
    assert!(!sb.project().join("greeting0.txt").exists());
    // The unanswered request does not hold up the session: the next prompt runs.
    assert_eq!(
        out.result(3)["stopReason"],
        "end_turn",
        "{:#?}",
        out.records
    );
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn hanging_up_stops_running_commands_and_the_agent() {
    let sb = sandbox();
    let server = bash_then_answer("echo $$ > pid.txt; exec sleep 30");
    let out = acp_with_model(
        &sb,
        &server,
        &["--allow", "Bash"],
        json!({"steps": session_steps(&sb, vec![
            json!({"op": "prompt", "text": "wait", "noWait": true}),
            json!({"op": "sleep", "ms": 1500}),
            json!({"op": "close_stdin"}),
        ])}),
    );
    let exit = out.of_kind("exit");
    assert_eq!(exit[0]["code"], 0, "{:#?}", out.records);
    assert!(
        process_gone(pid_in(&sb, "pid.txt")),
        "the command outlived the agent"
    );
}

#[test]
fn a_client_that_stops_reading_stops_running_commands_and_the_agent() {
    use std::io::{BufRead, BufReader, Write};
    let sb = sandbox();
    let server = bash_then_answer(
        "echo $$ > pid.txt; for i in $(seq 1 300); do echo tick $i; sleep 0.1; done",
    );
    let base = format!("{}/v1", server.url());
    let mut child = sb
        .agentry(&["acp", "--model", "openai/gpt-4.1", "--allow", "Bash"])
        .env("OPENAI_API_KEY", "sk-e2e")
        .env("OPENAI_BASE_URL", &base)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut send = |line: String| {
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
    };
    send(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}"#.to_owned());
    let mut reply_to = |id: i64| loop {
        let reply: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
        if reply["id"] == id {
            break reply;
        }
    };
    reply_to(1);
    let project = sb.project().display().to_string();
    send(format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"session/new","params":{{"cwd":{project:?},"mcpServers":[]}}}}"#
    ));
    let session = reply_to(2)["result"]["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    send(format!(
        r#"{{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{{"sessionId":"{session}","prompt":[{{"type":"text","text":"tick"}}]}}}}"#
    ));
    let pid_file = sb.project().join("pid.txt");
    for _ in 0..500 {
        if std::fs::read_to_string(&pid_file).is_ok_and(|pid| pid.ends_with('\n')) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // The client stops reading, its stdin still open: the agent's next write breaks.
    drop(lines);
    let mut exited = None;
    for _ in 0..500 {
        exited = child.try_wait().unwrap();
        if exited.is_some() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let _ = child.kill();
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(
        exited.is_some(),
        "the agent kept running with nobody reading: {stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        process_gone(pid_in(&sb, "pid.txt")),
        "the command outlived the agent"
    );
    drop(stdin);
}
