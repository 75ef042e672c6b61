//! `agentry mcp serve`, driven by the official MCP TypeScript SDK (`tests/peers/mcp-client.mjs`):
//! prompts listed a page at a time, filled in, every error code, list changes when a template
//! is added, `agentry_run` through a mock model, and streamable HTTP.

use crate::{bash_then_answer, pid_in, process_gone, sandbox};
use agentry_tests::mock_model::{MockModelServer, MockReply, MockTurn};
use agentry_tests::peers::{Transcript, run_mcp_client};
use agentry_tests::{Sandbox, http};
use serde_json::{Value, json};
use std::time::Duration;

/// Five project templates and one of the user's, which the project's `review` replaces.
pub(crate) fn with_templates(sb: &Sandbox) {
    sb.write(
        "config/agentry/prompts/review.md",
        "---\ndescription: the user's review\n---\nUser review.\n",
    );
    sb.write(
        "config/agentry/prompts/standup.md",
        "---\ndescription: Write the standup notes\n---\nWrite the standup notes.\n",
    );
    sb.write(
        "project/.agentry/prompts/review.md",
        "---\ndescription: Review a file\narguments:\n  - name: file\n    description: The file\n    required: true\n  - name: focus\n---\nReview {{file}}, looking at {{focus}}.\n",
    );
    sb.write("project/.agentry/prompts/explain.md", "Explain the code.\n");
    sb.write("project/.agentry/prompts/fix.md", "Fix the failing test.\n");
    sb.write(
        "project/.agentry/prompts/context.md",
        "Mind these notes:\n@notes.txt\n![the diagram](diagram.png)\nThen plan.\n",
    );
    sb.write("project/.agentry/prompts/notes.txt", "the notes");
    std::fs::write(
        sb.project().join(".agentry/prompts/diagram.png"),
        [0x89, b'P', b'N', b'G'],
    )
    .unwrap();
    sb.write("project/.agentry/prompts/broken.md", "@gone.txt\n");
}

fn serve(sb: &Sandbox, args: &[&str], steps: Vec<Value>) -> Transcript {
    sb.mcp_serve(args, &[], json!({"steps": steps}))
}

#[test]
fn prompts_are_listed_page_by_page_and_filled_in() {
    let sb = sandbox();
    with_templates(&sb);
    let out = serve(
        &sb,
        &["--page-size", "2"],
        vec![
            json!({"op": "list_prompts"}),
            json!({"op": "list_all_prompts"}),
            json!({"op": "get_prompt", "name": "review", "arguments": {"file": "src/lib.rs", "focus": "errors"}}),
            json!({"op": "get_prompt", "name": "context"}),
        ],
    );
    let connected = &out.of_kind("connected")[0];
    assert_eq!(connected["server"]["name"], "agentry");
    assert_eq!(connected["capabilities"]["prompts"]["listChanged"], true);

    let first = out.result(0);
    assert_eq!(first["prompts"].as_array().unwrap().len(), 2);
    assert_eq!(first["prompts"][0]["name"], "broken");
    assert!(first["nextCursor"].is_string(), "{first}");
    assert_eq!(
        out.result(1)["pages"],
        json!([
            ["broken", "context"],
            ["explain", "fix"],
            ["review", "standup"]
        ])
    );

    let review = out.result(2);
    assert_eq!(review["description"], "Review a file");
    assert_eq!(
        review["messages"],
        json!([{"role": "user", "content": {"type": "text", "text": "Review src/lib.rs, looking at errors.\n"}}])
    );
    let context = &out.result(3)["messages"];
    assert_eq!(context[0]["content"]["text"], "Mind these notes:\n");
    assert_eq!(context[1]["content"]["type"], "resource");
    assert_eq!(context[1]["content"]["resource"]["text"], "the notes");
    assert!(
        context[1]["content"]["resource"]["uri"]
            .as_str()
            .unwrap()
            .ends_with("/notes.txt")
    );
    assert_eq!(
        context[2]["content"],
        json!({"type": "image", "data": "iVBORw==", "mimeType": "image/png"})
    );
    assert_eq!(context[3]["content"]["text"], "Then plan.\n");
}

#[test]
fn bad_requests_get_the_prompt_error_codes() {
    let sb = sandbox();
    with_templates(&sb);
    let out = serve(
        &sb,
        &[],
        vec![
            json!({"op": "get_prompt", "name": "nope"}),
            json!({"op": "get_prompt", "name": "review", "arguments": {"focus": "errors"}}),
            json!({"op": "get_prompt", "name": "review", "arguments": {"file": "a", "colour": "red"}}),
            json!({"op": "get_prompt", "name": "broken"}),
            json!({"op": "list_prompts", "cursor": "not-a-cursor"}),
        ],
    );
    let error = |step: usize, code: i64, naming: &str| {
        let answer = out.answer(step);
        assert_eq!(answer["kind"], "error", "step {step}: {answer}");
        assert_eq!(answer["code"], code, "step {step}: {answer}");
        assert!(
            answer["message"].as_str().unwrap().contains(naming),
            "step {step}: {answer}"
        );
    };
    error(0, -32602, "`nope`");
    error(1, -32602, "`file`");
    error(2, -32602, "`colour`");
    error(3, -32603, "gone.txt");
    error(4, -32602, "not-a-cursor");
}

#[test]
fn adding_a_template_announces_a_new_list() {
    let sb = sandbox();
    sb.write(
        "config/agentry/prompts/standup.md",
        "Write the standup notes.\n",
    );
    // The project has no prompt folder yet: it appears with the new template.
    let new_template = sb.project().join(".agentry/prompts/deploy.md");
    let out = serve(
        &sb,
        &[],
        vec![
            json!({"op": "list_all_prompts"}),
            json!({"op": "sleep", "ms": 300}),
            json!({"op": "write_file", "path": new_template, "text": "---\ndescription: Deploy it\n---\nDeploy.\n"}),
            json!({"op": "wait_for_list_changed", "timeoutMs": 10000}),
            json!({"op": "list_all_prompts"}),
        ],
    );
    assert_eq!(out.result(0)["pages"], json!([["standup"]]));
    out.result(3);
    assert_eq!(out.of_kind("notification").len(), 1, "{:#?}", out.records);
    assert_eq!(out.result(4)["pages"], json!([["deploy", "standup"]]));
}

#[test]
fn agentry_run_hands_a_task_to_the_agent() {
    let sb = sandbox();
    sb.write("project/notes.md", "remember the milk\n");
    let model = MockModelServer::start_blocking([
        MockTurn::Reply(MockReply::tool_call(
            "call_read",
            "Read",
            json!({"file_path": "notes.md"}),
        )),
        MockTurn::Reply(MockReply::text("The notes say: remember the milk.")),
    ]);
    let base = format!("{}/v1", model.url());
    let out = sb.mcp_serve(
        &["--model", "openai/gpt-4.1"],
        &[("OPENAI_API_KEY", "sk-e2e"), ("OPENAI_BASE_URL", &base)],
        json!({"steps": [
            json!({"op": "list_tools"}),
            json!({"op": "call_tool", "name": "agentry_run", "arguments": {"prompt": "What do my notes say?"}, "progress": true}),
            json!({"op": "call_tool", "name": "agentry_run", "arguments": {"prompt": "x", "cwd": "relative"}}),
        ]}),
    );
    let tools = &out.result(0)["tools"];
    assert_eq!(tools[0]["name"], "agentry_run");
    assert_eq!(tools[0]["inputSchema"]["required"], json!(["prompt"]));
    let answer = out.result(1);
    assert_ne!(answer["isError"], true, "{answer}");
    assert_eq!(
        answer["content"][0]["text"],
        "The notes say: remember the milk."
    );
    let progress = out.of_kind("progress");
    assert_eq!(progress.len(), 1, "{:#?}", out.records);
    assert!(
        progress[0]["message"]
            .as_str()
            .unwrap()
            .contains("notes.md"),
        "{}",
        progress[0]
    );
    let told = model.requests()[1].body["messages"].to_string();
    assert!(told.contains("remember the milk"), "{told}");
    assert_eq!(out.answer(2)["code"], -32602);
}

#[test]
fn agentry_run_stays_in_the_servers_folder_and_its_deny_rules_hold_in_a_subfolder() {
    let sb = sandbox();
    sb.write("project/secret/key.txt", "the secret\n");
    sb.write("project/sub/readme.md", "hello\n");
    let model = MockModelServer::start_blocking([
        MockTurn::Reply(MockReply::tool_call(
            "call_read",
            "Read",
            json!({"file_path": "../secret/key.txt"}),
        )),
        MockTurn::Reply(MockReply::text("done")),
    ]);
    let base = format!("{}/v1", model.url());
    let home = sb.project().join("../home").canonicalize().unwrap();
    let sub = sb.project().join("sub");
    let out = sb.mcp_serve(
        &[
            "--model",
            "openai/gpt-4.1",
            "--permission-mode",
            "bypass",
            "--deny",
            "Read(secret/**)",
        ],
        &[("OPENAI_API_KEY", "sk-e2e"), ("OPENAI_BASE_URL", &base)],
        json!({"steps": [
            json!({"op": "call_tool", "name": "agentry_run", "arguments": {"prompt": "x", "cwd": "/"}}),
            json!({"op": "call_tool", "name": "agentry_run", "arguments": {"prompt": "x", "cwd": home}}),
            json!({"op": "call_tool", "name": "agentry_run", "arguments": {"prompt": "read it", "cwd": sub}}),
        ]}),
    );
    for outside in [0, 1] {
        let answer = out.answer(outside);
        assert_eq!(answer["code"], -32602, "{answer}");
        assert!(
            answer["message"]
                .as_str()
                .unwrap()
                .contains("or a folder inside it"),
            "{answer}"
        );
    }
    let told = model.requests()[1].body["messages"].to_string();
    assert!(!told.contains("the secret"), "{told}");
    assert!(told.contains("denied"), "{told}");
}

#[test]
fn a_prompt_argument_never_embeds_a_file() {
    let sb = sandbox();
    sb.write("secret.txt", "the secret\n");
    sb.write(
        "project/.agentry/prompts/ask.md",
        "---\ndescription: Ask\narguments:\n  - name: topic\n---\nTell me about {{topic}}\n",
    );
    let secret = sb.project().join("../secret.txt").canonicalize().unwrap();
    let out = serve(
        &sb,
        &[],
        vec![
            json!({"op": "get_prompt", "name": "ask", "arguments": {"topic": format!("x\n@{}", secret.display())}}),
        ],
    );
    let messages = out.result(0)["messages"].to_string();
    assert!(!messages.contains("the secret"), "{messages}");
    assert!(!messages.contains("\"resource\""), "{messages}");
}

#[test]
fn agentry_run_without_a_model_says_what_is_missing() {
    let sb = sandbox();
    let out = serve(
        &sb,
        &[],
        vec![json!({"op": "call_tool", "name": "agentry_run", "arguments": {"prompt": "hi"}})],
    );
    let answer = out.result(0);
    assert_eq!(answer["isError"], true, "{answer}");
    assert!(
        answer["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("agentry cannot run prompts"),
        "{answer}"
    );
}

#[test]
fn streamable_http_serves_the_same_prompts() {
    let sb = sandbox();
    with_templates(&sb);
    let mut server = sb.spawn(&[
        "mcp",
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--page-size",
        "4",
        "--token",
        "mcp-s3cret",
    ]);
    let url = server.wait_for_line(|line| line.starts_with("http://"));
    // Any local account reaches the port: without the token, or from a rebound name, nothing.
    let (status, _) = http::call("POST", &url, Some(&json!({})), None);
    assert_eq!(status, 401);
    let (status, _) = http::request(
        "POST",
        &url,
        &[
            ("Host", "rebind.example"),
            ("Authorization", "Bearer mcp-s3cret"),
        ],
        Some(("application/json", "{}".to_owned())),
    );
    assert_eq!(status, 403);
    let new_template = sb.project().join(".agentry/prompts/deploy.md");
    let out = run_mcp_client(
        &json!({"server": {"url": url, "headers": {"Authorization": "Bearer mcp-s3cret"}}, "steps": [
            {"op": "list_all_prompts"},
            {"op": "get_prompt", "name": "explain"},
            {"op": "write_file", "path": new_template, "text": "Deploy.\n"},
            {"op": "wait_for_list_changed", "timeoutMs": 10000},
            {"op": "get_prompt", "name": "deploy"},
        ]}),
        &sb.project(),
        Duration::from_secs(60),
    );
    let _ = server.child.kill();
    server.wait();
    assert_eq!(
        out.result(0)["pages"],
        json!([
            ["broken", "context", "explain", "fix"],
            ["review", "standup"]
        ])
    );
    assert_eq!(
        out.result(1)["messages"][0]["content"]["text"],
        "Explain the code.\n"
    );
    assert_eq!(out.result(4)["messages"][0]["content"]["text"], "Deploy.\n");
}

#[test]
fn a_cancelled_agentry_run_leaves_no_process_behind() {
    let sb = sandbox();
    let model = bash_then_answer("echo $$ > pid.txt; exec sleep 30");
    let base = format!("{}/v1", model.url());
    let out = sb.mcp_serve(
        &["--model", "openai/gpt-4.1", "--permission-mode", "bypass"],
        &[("OPENAI_API_KEY", "sk-e2e"), ("OPENAI_BASE_URL", &base)],
        json!({"steps": [
            {"op": "call_tool", "name": "agentry_run", "arguments": {"prompt": "wait"}, "cancelAfterMs": 1500},
            // While the server still runs: the cancellation, not the exit, ended the command.
            {"op": "process_gone", "pidFile": sb.project().join("pid.txt"), "timeoutMs": 3000},
            {"op": "list_prompts"},
        ]}),
    );
    let cancelled = out.answer(0);
    assert_eq!(cancelled["kind"], "error", "{cancelled}");
    assert_eq!(out.result(1)["gone"], true, "{:#?}", out.records);
    assert!(process_gone(pid_in(&sb, "pid.txt")));
    out.result(2);
    assert_eq!(
        model.requests().len(),
        1,
        "the turn ended with the cancellation"
    );
}
