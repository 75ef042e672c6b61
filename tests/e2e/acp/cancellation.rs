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
