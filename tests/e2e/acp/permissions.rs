//! Permission questions as `session/request_permission`, and the session modes.

use super::*;

#[test]
fn allowing_once_runs_the_call_and_its_diff_reaches_the_client() {
    let sb = sandbox();
    let (_, out) = write_with_answers(&sb, 1, &["allow_once"], &["write it"]);
    assert_eq!(out.result(2)["stopReason"], "end_turn");
    let asked = out.of_kind("permission");
    assert_eq!(asked.len(), 1);
    let kinds: Vec<&str> = asked[0]["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["allow_once", "allow_always", "reject_once", "reject_always"]
    );
    assert_eq!(asked[0]["toolCall"]["toolCallId"], "call_0");
    assert_eq!(asked[0]["toolCall"]["kind"], "edit");
    let file = sb.project().join("greeting0.txt");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "hello\n");
    let updates = tool_updates(&out, "call_0");
    assert_eq!(updates[0]["sessionUpdate"], "tool_call");
    // `pending` is the default status, which the SDK's types leave out of the wire.
    assert!(updates[0]["status"].is_null() || updates[0]["status"] == "pending");
    assert_eq!(updates[0]["title"], "Write greeting0.txt");
    assert_eq!(updates[0]["rawInput"]["content"], "hello\n");
    assert!(
        updates[0]["locations"][0]["path"]
            .as_str()
            .unwrap()
            .ends_with("/greeting0.txt")
    );
    let statuses: Vec<&str> = updates
        .iter()
        .filter_map(|u| u["status"].as_str())
        .collect();
    assert_eq!(statuses, ["in_progress", "completed"]);
    let diff = updates
        .iter()
        .flat_map(|u| u["content"].as_array().into_iter().flatten())
        .find(|c| c["type"] == "diff")
        .expect("a diff");
    assert_eq!(diff["newText"], "hello\n");
    assert!(diff["oldText"].is_null());
    assert!(diff["path"].as_str().unwrap().ends_with("/greeting0.txt"));
}

#[test]
fn rejecting_once_fails_the_call_and_leaves_the_file_alone() {
    let sb = sandbox();
    let (server, out) = write_with_answers(&sb, 1, &["reject_once"], &["write it"]);
    assert_eq!(out.result(2)["stopReason"], "end_turn");
    assert_eq!(final_status(&out, "call_0"), "failed");
    assert!(!sb.project().join("greeting0.txt").exists());
    let told = &server.requests()[1].body["messages"];
    assert!(told.to_string().contains("rejected"), "{told}");
}

#[test]
fn always_answers_are_not_asked_again_in_the_session() {
    for (answer, second_status, file_written) in [
        ("allow_always", "completed", true),
        ("reject_always", "failed", false),
    ] {
        let sb = sandbox();
        let (_, out) = write_with_answers(&sb, 2, &[answer], &["one", "two"]);
        assert_eq!(out.of_kind("permission").len(), 1, "{answer}: asked once");
        assert_eq!(final_status(&out, "call_1"), second_status, "{answer}");
        assert_eq!(
            sb.project().join("greeting1.txt").exists(),
            file_written,
            "{answer}"
        );
    }
}

#[test]
fn set_mode_answers_with_current_mode_update_and_applies_to_the_next_turn() {
    let sb = sandbox();
    let server = write_then_answer(1);
    let out = acp_with_model(
        &sb,
        &server,
        &[],
        json!({"steps": session_steps(&sb, vec![
            json!({"op": "request", "method": "session/set_mode", "params": {"sessionId": "$session", "modeId": "accept_edits"}}),
            prompt("write it"),
            json!({"op": "request", "method": "session/set_mode", "params": {"sessionId": "$session", "modeId": "yolo"}}),
        ])}),
    );
    out.result(2);
    assert!(out.updates().iter().any(
        |u| u["sessionUpdate"] == "current_mode_update" && u["currentModeId"] == "accept_edits"
    ));
    assert!(
        out.of_kind("permission").is_empty(),
        "accept_edits runs file edits without asking"
    );
    assert_eq!(final_status(&out, "call_0"), "completed");
    let bad = out.answer(4);
    assert_eq!(bad["code"], -32602);
    assert!(bad["message"].as_str().unwrap().contains("yolo"), "{bad}");
}

#[test]
fn an_untrusted_folder_is_asked_about_once_and_trusting_it_is_kept() {
    let sb = sandbox();
    sb.write(
        "project/.agentry/config.toml",
        "permission_mode = \"bypass\"\n",
    );
    let server = MockModelServer::start_blocking([
        MockTurn::Reply(MockReply::text("one done")),
        MockTurn::Reply(MockReply::text("two done")),
    ]);
    let base = format!("{}/v1", server.url());
    let out = sb.acp(
        &["--model", "openai/gpt-4.1"],
        &[
            ("OPENAI_API_KEY", "sk-e2e"),
            ("OPENAI_BASE_URL", &base),
            ("AGENTRY_TRUST", "0"),
        ],
        json!({"permissions": ["allow_always"], "steps": session_steps(&sb, vec![prompt("one"), prompt("two")])}),
    );
    let asked = out.of_kind("permission");
    assert_eq!(asked.len(), 1, "asked once: {asked:#?}");
    let project = sb.project().display().to_string();
    assert_eq!(asked[0]["toolCall"]["title"], format!("Trust {project}?"));
    let shown = asked[0]["toolCall"]["content"].to_string();
    assert!(shown.contains("the permission mode `bypass`"), "{shown}");
    let said: String = out
        .updates()
        .iter()
        .filter(|u| u["sessionUpdate"] == "agent_message_chunk")
        .filter_map(|u| u["content"]["text"].as_str())
        .collect();
    assert!(said.contains("is trusted now"), "{said}");
    assert!(said.contains("two done"), "{said}");
    let kept =
        std::fs::read_to_string(sb.database().with_file_name("trusted-folders.json")).unwrap();
    assert!(kept.contains(&project), "{kept}");
}
