//! `agentry run` with the scripted model: output formats, exit codes, resume, config, signals.

use crate::sandbox;

use nix::sys::signal::Signal;
use serde_json::{Value, json};

fn text_script(text: &str) -> Value {
    json!({"responses": [{"events": [{"text": text}], "usage": {"input_tokens": 9, "output_tokens": 2}}]})
}

#[test]
fn text_format_prints_only_the_answer_on_stdout_and_activity_on_stderr() {
    let sb = sandbox();
    let script = sb.script("s", &json!({"responses": [
        {"events": [{"text": "Let me check. "}, {"tool_call": {"id": "c1", "name": "Nope", "arguments": {}}}]},
        {"events": [{"text": "The answer is 42."}]}
    ]}));
    let out = sb.run_scripted(&script, &["What is it?"]);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(out.stdout, "The answer is 42.\n");
    assert!(out.stderr.contains("→ Nope"), "{}", out.stderr);
    assert!(
        out.stderr.contains("✗ Nope: There is no tool named `Nope`"),
        "{}",
        out.stderr
    );
}

#[test]
fn text_format_shows_a_models_and_a_tools_escapes_as_text_and_json_keeps_them_exact() {
    let sb = sandbox();
    let forged = "done \u{1b}[2K\r\u{1b}]52;c;c3RvbGVu\u{7}\u{9b}2J";
    let script = sb.script(
        "s",
        &json!({"responses": [
            {"events": [{"tool_call": {"id": "c1", "name": "Nope\u{1b}[2K", "arguments": {}}}]},
            {"events": [{"text": forged}]}
        ]}),
    );
    let out = sb.run_scripted(&script, &["go"]);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(out.stdout, "done ␛[2K^M␛]52;c;c3RvbGVu^G<U+009B>2J\n");
    assert!(out.stderr.contains("→ Nope␛[2K"), "{}", out.stderr);
    assert!(!out.stderr.contains('\u{1b}'), "{:?}", out.stderr);
    let out = sb.run_scripted(&script, &["--output-format", "json", "go"]);
    assert_eq!(out.json()["result"], forged);
}

#[test]
fn json_format_prints_one_object_with_result_stop_reason_session_usage_and_duration() {
    let sb = sandbox();
    let script = sb.script("s", &text_script("Paris."));
    let out = sb.run_scripted(&script, &["--output-format", "json", "Capital of France?"]);
    assert_eq!(out.code, Some(0), "{out:?}");
    let result = out.json();
    assert_eq!(result["result"], "Paris.");
    assert_eq!(result["stop_reason"], "end_turn");
    assert_eq!(result["is_error"], false);
    assert_eq!(result["usage"]["input_tokens"], 9);
    assert!(result["duration_ms"].is_u64());
    assert!(result["session_id"].as_str().unwrap().starts_with("sess_"));
}

#[test]
fn stream_json_prints_every_event_as_a_line_ending_with_chat_ended() {
    let sb = sandbox();
    let script = sb.script("s", &json!({"responses": [
        {"events": [{"thinking": "hm"}, {"tool_call": {"id": "c1", "name": "Nope", "raw_arguments": "{oops"}}]},
        {"events": [{"text": "Fixed"}, {"text": " it."}]}
    ]}));
    let out = sb.run_scripted(&script, &["--output-format", "stream-json", "go"]);
    assert_eq!(out.code, Some(0), "{out:?}");
    let events = out.json_lines();
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(types.first(), Some(&"chat_started"));
    assert_eq!(types.last(), Some(&"chat_ended"));
    for expected in [
        "user_message",
        "thinking_delta",
        "tool_call",
        "tool_call_update",
        "text_delta",
        "turn_ended",
    ] {
        assert!(
            types.contains(&expected),
            "{expected} missing from {types:?}"
        );
    }
    let failed = events
        .iter()
        .find(|e| e["type"] == "tool_call_update" && e["status"] == "failed")
        .unwrap();
    assert_eq!(failed["tool_call_id"], "c1");
    let turn_statuses: Vec<(&Value, &Value)> = events
        .iter()
        .filter(|e| e["type"] == "turn_started")
        .map(|e| (&e["role"], &e["status"]))
        .collect();
    assert_eq!(turn_statuses.len(), 3);
    assert_eq!(turn_statuses[0], (&json!("user"), &json!("completed")));
    assert_eq!(turn_statuses[1], (&json!("assistant"), &json!("streaming")));
    let end = events.last().unwrap();
    assert_eq!(end["result"], "Fixed it.");
    assert_eq!(end["model_requests"], 2);
    assert!(out.stderr.is_empty(), "{}", out.stderr);
}

#[test]
fn each_stop_reason_and_failure_has_its_exit_code() {
    let sb = sandbox();
    let cases = [
        (
            json!({"responses": [{"events": [{"text": "cut"}], "stop": "max_tokens"}]}),
            vec![],
            4,
            "max_tokens",
        ),
        (
            json!({"responses": [{"events": [{"text": "no"}], "stop": "refusal"}]}),
            vec![],
            6,
            "refusal",
        ),
        (
            json!({"responses": [{"events": [{"tool_call": {"name": "Nope", "arguments": {}}}]}]}),
            vec!["--max-turn-requests", "1"],
            5,
            "max_turn_requests",
        ),
    ];
    for (i, (script, extra, code, stop)) in cases.into_iter().enumerate() {
        let path = sb.script(&format!("s{i}"), &script);
        let mut args = vec!["--output-format", "json"];
        args.extend(extra);
        args.push("go");
        let out = sb.run_scripted(&path, &args);
        assert_eq!(out.code, Some(code), "{stop}: {out:?}");
        assert_eq!(out.json()["stop_reason"], stop);
    }
    let failing = sb.script("err", &json!({"responses": [{"error": "overloaded"}]}));
    let out = sb.run_scripted(&failing, &["--output-format", "json", "go"]);
    assert_eq!(out.code, Some(3), "{out:?}");
    assert_eq!(out.json()["is_error"], true);
    assert!(out.stderr.contains("overloaded"), "{}", out.stderr);
}

#[test]
fn usage_errors_exit_2_with_a_message_that_says_what_to_do() {
    let sb = sandbox();
    let script = sb.script("s", &text_script("x"));
    let model = format!("scripted:{}", script.display());
    let out = sb.run(&["run", "hi"]);
    assert_eq!(out.code, Some(2));
    assert!(
        out.stderr.contains(
            "no model configured and no API key found: set ANTHROPIC_API_KEY or OPENAI_API_KEY"
        ),
        "{}",
        out.stderr
    );
    let out = sb.run(&["run", "--model", &model, "--permission-mode", "yolo", "hi"]);
    assert_eq!(out.code, Some(2));
    assert!(
        out.stderr.contains("unknown permission mode `yolo`"),
        "{}",
        out.stderr
    );
    let out = sb.run(&["run", "--model", &model, "--cwd", "/no/such/dir", "hi"]);
    assert_eq!(out.code, Some(2));
    assert!(out.stderr.contains("/no/such/dir"), "{}", out.stderr);
    let out = sb.run(&["run", "--model", &model, "--resume", "sess_missing", "hi"]);
    assert_eq!(out.code, Some(2));
    assert!(
        out.stderr.contains("no session with id `sess_missing`"),
        "{}",
        out.stderr
    );
    let out = sb.run(&["run", "--model", &model, "--allow", "Bash(oops", "hi"]);
    assert_eq!(out.code, Some(2));
    assert!(out.stderr.contains("does not close"), "{}", out.stderr);
    let out = sb.run(&["run", "--model", "scripted:/no/script.json", "hi"]);
    assert_eq!(out.code, Some(2));
    assert!(
        out.stderr.contains("cannot read script /no/script.json"),
        "{}",
        out.stderr
    );
    let out = sb.run(&["run", "--model", &model, "--bogus"]);
    assert_eq!(out.code, Some(2));
    assert!(out.stdout.is_empty());
}

#[test]
fn output_schema_yields_json_or_fails_with_exit_7() {
    let sb = sandbox();
    let schema = sb.write(
        "schema.json",
        &json!({"type": "object", "required": ["n"], "properties": {"n": {"type": "integer"}}})
            .to_string(),
    );
    let good = sb.script(
        "good",
        &json!({"responses": [
            {"events": [{"text": "n is three"}]},
            {"events": [{"text": "{\"n\": 3}"}]}
        ]}),
    );
    let out = sb.run_scripted(
        &good,
        &[
            "--output-schema",
            schema.to_str().unwrap(),
            "--output-format",
            "json",
            "count",
        ],
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(out.json()["result"], json!({"n": 3}));
    let bad = sb.script("bad", &json!({"responses": [
        {"events": [{"text": "{\"n\": \"x\"}"}]}, {"events": [{"text": "{}"}]}, {"events": [{"text": "nope"}]}
    ]}));
    let out = sb.run_scripted(
        &bad,
        &["--output-schema", schema.to_str().unwrap(), "count"],
    );
    assert_eq!(out.code, Some(7), "{out:?}");
    assert!(
        out.stderr
            .contains("does not satisfy the output schema after 3 attempts"),
        "{}",
        out.stderr
    );
}

#[test]
fn resume_continues_a_session_and_sessions_lists_it() {
    let sb = sandbox();
    let first = sb.script("first", &text_script("one"));
    let out = sb.run_scripted(&first, &["--output-format", "json", "first prompt"]);
    let id = out.json()["session_id"].as_str().unwrap().to_owned();
    // The second script checks nothing itself; the stored history shows the continuation.
    let second = sb.script("second", &text_script("two"));
    let out = sb.run_scripted(
        &second,
        &["--resume", &id, "--output-format", "json", "second prompt"],
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(out.json()["session_id"], id.as_str());
    let db = rusqlite::Connection::open(sb.database()).unwrap();
    let messages: i64 = db
        .query_row(
            "SELECT COUNT(*) FROM messages m JOIN chats c ON c.id = m.chat_id WHERE c.session_id = ?1",
            [&id],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(messages, 4);
    let listed = sb.run(&["sessions", "--json"]).json();
    assert_eq!(listed.as_array().unwrap().len(), 1);
    assert_eq!(listed[0]["id"], id.as_str());
    assert_eq!(listed[0]["title"], "first prompt");
}

#[test]
fn config_layers_apply_user_then_project_then_flags() {
    let sb = sandbox();
    let user_script = sb.script("user", &text_script("from user config"));
    let project_script = sb.script("project", &text_script("from project config"));
    let flag_script = sb.script("flag", &text_script("from the flag"));
    sb.write(
        "config/agentry/config.toml",
        &format!("model = \"scripted:{}\"\n", user_script.display()),
    );
    assert_eq!(sb.run(&["run", "hi"]).stdout, "from user config\n");
    sb.write(
        "project/.agentry/config.toml",
        &format!("model = \"scripted:{}\"\n", project_script.display()),
    );
    assert_eq!(sb.run(&["run", "hi"]).stdout, "from project config\n");
    let flag = format!("scripted:{}", flag_script.display());
    assert_eq!(
        sb.run(&["run", "--model", &flag, "hi"]).stdout,
        "from the flag\n"
    );
    sb.write("project/.agentry/config.toml", "modle = 1\n");
    let out = sb.run(&["run", "hi"]);
    assert_eq!(out.code, Some(2));
    assert!(
        out.stderr.contains(".agentry/config.toml"),
        "{}",
        out.stderr
    );
}

#[test]
fn the_prompt_can_come_on_standard_input() {
    use std::io::Write;
    let sb = sandbox();
    let script = sb.script("s", &text_script("read it"));
    let mut child = sb
        .agentry(&[
            "run",
            "--model",
            &format!("scripted:{}", script.display()),
            "--output-format",
            "stream-json",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"prompt from stdin")
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(
        stdout.contains("\"text\":\"prompt from stdin\""),
        "{stdout}"
    );
}

#[test]
fn sigint_cancels_the_turn_cleanly_with_exit_130() {
    let sb = sandbox();
    let script = sb.script("slow", &json!({"responses": [{"events": [{"text": "Working"}, {"delay_ms": 60000}, {"text": "never"}]}]}));
    let mut running = sb.spawn_scripted(&script, &["--output-format", "stream-json", "go"]);
    running.wait_for_line(|l| l.contains("\"text_delta\""));
    running.signal(Signal::SIGINT);
    let status = running.wait();
    assert_eq!(status.code(), Some(130));
    let rest = running.rest();
    let last: Value = serde_json::from_str(rest.last().unwrap()).unwrap();
    assert_eq!(last["type"], "chat_ended");
    assert_eq!(last["stop_reason"], "cancelled");
    assert_eq!(last["result"], "Working");
}

#[test]
fn the_stock_agent_has_the_file_and_shell_tools() {
    let sb = sandbox();
    let script = sb.script("tools", &json!({"responses": [
        {"events": [{"tool_call": {"id": "w", "name": "Write", "arguments": {"file_path": "notes/todo.txt", "content": "ship it\n"}}}]},
        {"events": [{"tool_call": {"id": "b", "name": "Bash", "arguments": {"command": "cat notes/todo.txt | tr a-z A-Z"}}}]},
        {"events": [{"text": "Done."}]}
    ]}));
    let out = sb.run_scripted(
        &script,
        &[
            "--output-format",
            "stream-json",
            "--permission-mode",
            "bypass",
            "go",
        ],
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(
        std::fs::read_to_string(sb.project().join("notes/todo.txt")).unwrap(),
        "ship it\n"
    );
    let events = out.json_lines();
    let bash_done = events
        .iter()
        .find(|e| {
            e["type"] == "tool_call_update"
                && e["tool_call_id"] == "b"
                && e["status"] == "completed"
        })
        .unwrap();
    assert!(
        bash_done["content"].to_string().contains("SHIP IT"),
        "{bash_done}"
    );
    let write_done = events
        .iter()
        .find(|e| {
            e["type"] == "tool_call_update"
                && e["tool_call_id"] == "w"
                && e["status"] == "completed"
        })
        .unwrap();
    assert_eq!(write_done["content"][0]["type"], "diff");
    assert_eq!(write_done["content"][0]["oldText"], serde_json::Value::Null);

    // Without permission, a headless run refuses the write and says how to allow it.
    let refused_script = sb.script("refused", &json!({"responses": [
        {"events": [{"tool_call": {"id": "w2", "name": "Write", "arguments": {"file_path": "other.txt", "content": "x"}}}]},
        {"events": [{"text": "I could not write it."}]}
    ]}));
    let out = sb.run_scripted(&refused_script, &["go"]);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(!sb.project().join("other.txt").exists());
    assert!(
        out.stderr.contains("needs permission") && out.stderr.contains("--allow"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_reader_that_goes_away_is_not_a_crash() {
    let sb = sandbox();
    let script = sb.script("answer", &text_script(&"many words ".repeat(20_000)));
    let mut command = sb.agentry(&[
        "run",
        "--model",
        &format!("scripted:{}", script.display()),
        "hi",
    ]);
    command
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = command.spawn().unwrap();
    // The reader closes its end before the answer is printed (`agentry run … | head -c 0`).
    drop(child.stdout.take());
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn the_users_and_the_projects_instruction_files_and_their_imports_reach_the_model_in_order() {
    let sb = sandbox();
    sb.write("home/.claude/CLAUDE.md", "Answer briefly.");
    sb.write("project/AGENTS.md", "Run cargo test.");
    sb.write(
        "project/CLAUDE.md",
        "Use tabs. Conventions: @docs/conventions.md; never `@docs/secret.md`.",
    );
    sb.write("project/docs/conventions.md", "Name tests as sentences.");
    sb.write("project/docs/secret.md", "A code span is not an import.");
    sb.write("project/CLAUDE.local.md", "My local note. @docs/escape.md");
    sb.write("outside.md", "Outside the project and home.");
    sb.write("project/docs/escape.md", "@../../outside.md");
    let server = agentry_tests::mock_model::MockModelServer::start_blocking([
        agentry_tests::mock_model::MockTurn::Reply(agentry_tests::mock_model::MockReply::text(
            "ok",
        )),
    ]);
    let out = crate::run_openai(&sb, &server, &["hello"]);
    assert_eq!(out.code, Some(0), "{out:?}");
    let prompt = server.requests()[0].body["messages"].to_string();
    let at = |text: &str| {
        prompt
            .find(text)
            .unwrap_or_else(|| panic!("{text} is not in {prompt}"))
    };
    let order = [
        "Answer briefly.",
        "Run cargo test.",
        "Use tabs.",
        "Name tests as sentences.",
        "My local note.",
    ]
    .map(at);
    assert!(order.is_sorted(), "{order:?} in {prompt}");
    assert!(!prompt.contains("A code span is not an import."));
    assert!(!prompt.contains("Outside the project and home."));
}
