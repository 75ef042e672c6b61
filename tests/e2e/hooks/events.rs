//! Every hook event through the binary: hooks of `.claude/settings.json` record the input they
//! are given, each checked against the event's schema in `schemas.json` (Claude Code's input
//! shape), and the events that can block, block.

use crate::sandbox;
use agentry_tests::Sandbox;
use agentry_tests::mock_model::{MockModelServer, MockReply, MockTurn};
use serde_json::{Map, Value, json};

/// Where the recording hooks append their input, in the project.
const RECORD: &str = ".hook-events.jsonl";

/// A command hook that appends its input, a line of its own, to [`RECORD`].
fn recorder() -> Value {
    json!({"type": "command",
        "command": format!("cat >> \"$CLAUDE_PROJECT_DIR/{RECORD}\"; echo >> \"$CLAUDE_PROJECT_DIR/{RECORD}\"")})
}

/// Settings whose hooks record every one of `events`, with `more` hooks of their own.
pub(super) fn recording(events: &[&str], more: &[(&str, Value)]) -> Value {
    let mut hooks = Map::new();
    for event in events {
        hooks.insert((*event).to_owned(), json!([{"hooks": [recorder()]}]));
    }
    for (event, group) in more {
        let groups = hooks
            .entry((*event).to_owned())
            .or_insert_with(|| json!([]));
        groups.as_array_mut().unwrap().push(group.clone());
    }
    json!({"hooks": hooks})
}

/// The Task tools (TaskCreate, TaskUpdate, …) for the agent's task list, in place of TodoWrite.
fn task_tools(sb: &Sandbox) {
    sb.write(
        "project/.agentry/config.toml",
        "[builtin]\ntask_list = \"tasks\"\n",
    );
}

/// A script of one model response per call (ids `c1`, `c2`, …), then one per text.
pub(super) fn script(sb: &Sandbox, calls: &[(&str, Value)], texts: &[&str]) -> std::path::PathBuf {
    let mut responses: Vec<Value> = calls
        .iter()
        .enumerate()
        .map(|(at, (name, arguments))| {
            json!({"events": [{"tool_call": {"id": format!("c{}", at + 1), "name": name,
                "arguments": arguments}}]})
        })
        .collect();
    responses.extend(texts.iter().map(|text| json!({"events": [{"text": text}]})));
    sb.script("s", &json!({ "responses": responses }))
}

/// A Bash call that makes `made.txt`.
fn make_a_file() -> (&'static str, Value) {
    (
        "Bash",
        json!({"command": "touch made.txt", "description": "Make"}),
    )
}

/// The inputs recorded, in order, each checked against its event's schema.
pub(super) fn recorded(sb: &Sandbox) -> Vec<Value> {
    let schemas: Value = serde_json::from_str(include_str!("schemas.json")).unwrap();
    let text = std::fs::read_to_string(sb.project().join(RECORD)).unwrap_or_default();
    let inputs: Vec<Value> = text
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    for input in &inputs {
        let event = input["hook_event_name"].as_str().unwrap();
        let own = schemas["events"]
            .get(event)
            .unwrap_or_else(|| panic!("no schema for {event}"));
        let schema = json!({"allOf": [schemas["common"], own]});
        let validator = jsonschema::validator_for(&schema).unwrap();
        let problems: Vec<String> = validator
            .iter_errors(input)
            .map(|e| e.to_string())
            .collect();
        assert!(problems.is_empty(), "{event}: {problems:?}\n{input:#}");
    }
    inputs
}

/// The names of the events recorded, in order.
fn names(inputs: &[Value]) -> Vec<&str> {
    inputs
        .iter()
        .map(|input| input["hook_event_name"].as_str().unwrap())
        .collect()
}

/// The first recorded input of `event` (whose `field` is `value`, when given).
fn first<'a>(inputs: &'a [Value], event: &str, field: Option<(&str, &str)>) -> &'a Value {
    inputs
        .iter()
        .find(|input| {
            input["hook_event_name"] == event
                && field.is_none_or(|(field, value)| input[field] == value)
        })
        .unwrap_or_else(|| panic!("no {event} {field:?} in {:?}", names(inputs)))
}

#[test]
fn a_headless_run_fires_every_event_it_reaches_with_claude_codes_input() {
    let sb = sandbox();
    task_tools(&sb);
    sb.write("project/CLAUDE.md", "Answer tersely.\n");
    sb.write(
        "project/.claude/agents/helper.md",
        "---\nname: helper\ndescription: Checks things.\n---\nYou check things.\n",
    );
    // Every event but a failed request's, compaction's and an MCP server's question's.
    let unreached = [
        "StopFailure",
        "PreCompact",
        "PostCompact",
        "Elicitation",
        "ElicitationResult",
    ];
    let events: Vec<&str> = agentry::hooks::HOOK_EVENTS
        .iter()
        .copied()
        .filter(|event| !unreached.contains(event))
        .collect();
    sb.write(
        "project/.claude/settings.json",
        &recording(&events, &[]).to_string(),
    );
    let script = script(
        &sb,
        &[
            (
                "TaskCreate",
                json!({"subject": "Check the build", "description": "Run it"}),
            ),
            ("TaskUpdate", json!({"taskId": "1", "status": "completed"})),
            ("Bash", json!({"command": "exit 3", "description": "Fail"})),
            ("Write", json!({"file_path": "notes.txt", "content": "x"})),
            (
                "Agent",
                json!({"description": "Check", "prompt": "Check it", "subagent_type": "helper"}),
            ),
        ],
        &["Checked.", "All done."],
    );
    let out = sb.run_scripted(&script, &["--allow", "Bash", "Do the work"]);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(out.stdout, "All done.\n");
    let inputs = recorded(&sb);
    let seen = names(&inputs);
    for event in events {
        assert!(seen.contains(&event), "{event} did not fire: {seen:?}");
    }
    assert_eq!(seen.first(), Some(&"SessionStart"), "{seen:?}");
    assert_eq!(seen.last(), Some(&"SessionEnd"), "{seen:?}");
    let start = first(&inputs, "SessionStart", None);
    assert_eq!(start["source"], "startup");
    assert_eq!(start["model"], "scripted");
    let loaded = first(&inputs, "InstructionsLoaded", None);
    assert!(
        loaded["file_path"]
            .as_str()
            .unwrap()
            .ends_with("project/CLAUDE.md")
    );
    assert_eq!(loaded["memory_type"], "Project");
    assert_eq!(
        first(&inputs, "UserPromptSubmit", None)["prompt"],
        "Do the work"
    );
    let created = first(&inputs, "TaskCreated", None);
    assert_eq!(created["task_id"], "1");
    assert_eq!(created["task_subject"], "Check the build");
    assert_eq!(first(&inputs, "TaskCompleted", None)["task_id"], "1");
    let failed = first(&inputs, "PostToolUseFailure", Some(("tool_name", "Bash")));
    assert!(failed["error"].as_str().unwrap().contains('3'), "{failed}");
    assert_eq!(failed["tool_input"]["command"], "exit 3");
    let asked = first(&inputs, "PermissionRequest", Some(("tool_name", "Write")));
    assert_eq!(asked["tool_input"]["content"], "x");
    assert_eq!(
        first(&inputs, "Notification", None)["notification_type"],
        "permission_prompt"
    );
    let denied = first(&inputs, "PermissionDenied", Some(("tool_name", "Write")));
    assert_eq!(denied["tool_use_id"], "c4");
    let sub = first(&inputs, "SubagentStart", None);
    assert_eq!(sub["agent_type"], "helper");
    let sub_stop = first(&inputs, "SubagentStop", None);
    assert_eq!(sub_stop["agent_id"], sub["agent_id"]);
    assert_eq!(sub_stop["last_assistant_message"], "Checked.");
    let stop = first(&inputs, "Stop", None);
    assert_eq!(stop["last_assistant_message"], "All done.");
    assert_eq!(stop["stop_hook_active"], false);
    assert_eq!(first(&inputs, "SessionEnd", None)["reason"], "other");
    // Every event of the run names the one session and its transcript, which holds the
    // conversation as it stood: the prompt, the calls, their results, the answer.
    let session = &start["session_id"];
    let main: Vec<&Value> = inputs
        .iter()
        .filter(|i| i.get("agent_id").is_none())
        .collect();
    assert!(main.iter().all(|input| &input["session_id"] == session));
    let transcript = std::fs::read_to_string(stop["transcript_path"].as_str().unwrap()).unwrap();
    let lines: Vec<Value> = transcript
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(lines[0]["type"], "user");
    assert!(
        lines[0]["message"]["content"]
            .to_string()
            .contains("Do the work")
    );
    let tool_uses = lines
        .iter()
        .filter(|line| line["message"]["content"][0]["type"] == "tool_use")
        .count();
    assert_eq!(tool_uses, 5, "{transcript}");
    assert_eq!(
        lines.last().unwrap()["message"]["content"][0]["text"],
        "All done."
    );
    for pair in lines.windows(2) {
        assert_eq!(pair[1]["parentUuid"], pair[0]["uuid"]);
    }
    let sub_transcript = sub_stop["agent_transcript_path"].as_str().unwrap();
    assert!(
        std::fs::read_to_string(sub_transcript)
            .unwrap()
            .contains("Check it")
    );
}

#[test]
fn a_failed_model_request_fires_stop_failure_not_stop() {
    let sb = sandbox();
    sb.write(
        "project/.claude/settings.json",
        &recording(&["Stop", "StopFailure"], &[]).to_string(),
    );
    let script = script(&sb, &[], &[]);
    let out = sb.run_scripted(&script, &["hello"]);
    assert_ne!(out.code, Some(0), "{out:?}");
    let inputs = recorded(&sb);
    assert_eq!(names(&inputs), ["StopFailure"]);
    assert_eq!(inputs[0]["error"], "unknown");
    assert!(
        inputs[0]["error_details"]
            .as_str()
            .unwrap()
            .contains("scripted model")
    );
}

#[test]
fn blocking_hooks_refuse_a_task_decide_a_permission_and_stop_the_agent() {
    let sb = sandbox();
    task_tools(&sb);
    let settings = recording(
        &["PostToolUseFailure"],
        &[
            (
                "TaskCreated",
                json!({"hooks": [{"type": "command",
                "command": "echo 'tasks need a ticket number' >&2; exit 2"}]}),
            ),
            (
                "PermissionRequest",
                json!({"matcher": "Write", "hooks": [{"type": "command",
                "command": "echo '{\"hookSpecificOutput\": {\"hookEventName\": \"PermissionRequest\", \"decision\": {\"behavior\": \"allow\"}}}'"}]}),
            ),
            (
                "PostToolUse",
                json!({"matcher": "Write", "hooks": [{"type": "command",
                "command": "echo '{\"continue\": false, \"stopReason\": \"the file is written: that is enough\"}'"}]}),
            ),
        ],
    );
    sb.write("project/.claude/settings.json", &settings.to_string());
    let script = script(
        &sb,
        &[
            (
                "TaskCreate",
                json!({"subject": "Write notes", "description": "Now"}),
            ),
            (
                "Write",
                json!({"file_path": "notes.txt", "content": "kept"}),
            ),
        ],
        &["never asked for"],
    );
    let out = sb.run_scripted(&script, &["--output-format", "json", "Take notes"]);
    assert_eq!(
        out.code,
        Some(9),
        "a hook's continue: false ends with exit code 9: {out:?}"
    );
    let result = out.json();
    assert_eq!(result["stop_reason"], "hook_stopped");
    assert!(
        out.stderr.contains("the file is written: that is enough"),
        "{}",
        out.stderr
    );
    // The permission hook allowed the write no one could be asked about.
    assert_eq!(
        std::fs::read_to_string(sb.project().join("notes.txt")).unwrap(),
        "kept"
    );
    // The refused task was not created, and the model read why.
    let inputs = recorded(&sb);
    let refused = first(
        &inputs,
        "PostToolUseFailure",
        Some(("tool_name", "TaskCreate")),
    );
    let error = refused["error"].as_str().unwrap();
    assert!(error.contains("tasks need a ticket number"), "{error}");
}

/// A loopback HTTP server that answers one request with `reply` (JSON), and hands over the
/// request it read.
fn one_reply_server(reply: Value) -> (String, std::sync::mpsc::Receiver<String>) {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    let (sender, received) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        let mut request = Vec::new();
        let mut buffer = [0u8; 4096];
        loop {
            let read = stream.read(&mut buffer).unwrap();
            request.extend_from_slice(&buffer[..read]);
            let text = String::from_utf8_lossy(&request).to_string();
            if let Some((head, body)) = text.split_once("\r\n\r\n") {
                let length = head
                    .lines()
                    .find_map(|line| {
                        let (name, value) = line.split_once(':')?;
                        name.eq_ignore_ascii_case("content-length")
                            .then(|| value.trim().parse::<usize>().ok())?
                    })
                    .unwrap_or(0);
                if body.len() >= length {
                    break;
                }
            }
            if read == 0 {
                break;
            }
        }
        let body = reply.to_string();
        let response = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        stream.write_all(response.as_bytes()).unwrap();
        sender
            .send(String::from_utf8_lossy(&request).to_string())
            .unwrap();
    });
    (url, received)
}

#[test]
fn an_http_hook_posts_the_event_with_only_the_variables_it_names_and_its_reply_decides() {
    let sb = sandbox();
    let (url, received) = one_reply_server(json!({"hookSpecificOutput": {
        "hookEventName": "PreToolUse", "permissionDecision": "deny",
        "permissionDecisionReason": "the policy service says no"}}));
    sb.write(
        "project/.claude/settings.json",
        &json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "http",
            "url": url, "timeout": 10,
            "headers": {"Authorization": "Bearer $HOOK_TOKEN", "X-Other": "[${SECRET_TOKEN}]"},
            "allowedEnvVars": ["HOOK_TOKEN"]}]}]}})
        .to_string(),
    );
    let script = script(&sb, &[make_a_file()], &["done"]);
    let mut args = vec!["run".to_owned(), "--model".to_owned()];
    args.push(format!("scripted:{}", script.display()));
    args.extend(["--allow", "Bash", "make it"].map(str::to_owned));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = sb.run_with_env(&args, &[("HOOK_TOKEN", "tok-1"), ("SECRET_TOKEN", "sec-2")]);
    assert_eq!(out.code, Some(0), "{out:?}");
    let request = received
        .recv_timeout(std::time::Duration::from_secs(10))
        .unwrap();
    let lower = request.to_lowercase();
    assert!(lower.starts_with("post /hook "), "{request}");
    assert!(lower.contains("authorization: bearer tok-1"), "{request}");
    assert!(
        lower.contains("x-other: []"),
        "a variable the hook does not name stays out: {request}"
    );
    assert!(!request.contains("sec-2"), "{request}");
    let body: Value = serde_json::from_str(request.split_once("\r\n\r\n").unwrap().1).unwrap();
    assert_eq!(body["hook_event_name"], "PreToolUse");
    assert_eq!(body["tool_input"]["command"], "touch made.txt");
    assert!(!sb.project().join("made.txt").exists(), "the call ran");
    assert!(
        out.stderr.contains("the policy service says no"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_prompt_hook_has_the_model_judge_the_event_and_its_no_denies_the_call() {
    let sb = sandbox();
    sb.write(
        "project/.claude/settings.json",
        &json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "prompt",
            "prompt": "Refuse commands that create files. The event: $ARGUMENTS"}]}]}})
        .to_string(),
    );
    let verdict = r#"{"ok": false, "reason": "it creates a file"}"#;
    let script = script(&sb, &[make_a_file()], &[verdict, "done"]);
    let out = sb.run_scripted(&script, &["--allow", "Bash", "make it"]);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(out.stdout, "done\n");
    assert!(!sb.project().join("made.txt").exists(), "the call ran");
    assert!(out.stderr.contains("it creates a file"), "{}", out.stderr);
}

#[test]
fn agentry_hooks_lists_each_hook_with_its_file_and_unknown_events_are_said_at_start_up() {
    let sb = sandbox();
    let settings = sb.write(
        "project/.claude/settings.json",
        &json!({"hooks": {
            "Stop": [{"hooks": [{"type": "command", "command": "notify-me"}]}],
            "TeammateIdle": [{"hooks": [{"type": "command", "command": "x"}]}]}})
        .to_string(),
    );
    sb.write(
        "project/.agentry/config.toml",
        "[[hooks.PreToolUse]]\nmatcher = \"Bash\"\n[[hooks.PreToolUse.hooks]]\ntype = \"http\"\nurl = \"http://127.0.0.1:9/check\"\n",
    );
    let out = sb.run(&["hooks", "--json"]);
    assert_eq!(out.code, Some(0), "{out:?}");
    let listed = out.json();
    let hooks = listed["hooks"].as_array().unwrap();
    let stop = hooks.iter().find(|h| h["event"] == "Stop").unwrap();
    assert_eq!(stop["run"], "notify-me");
    assert_eq!(stop["source"], settings.display().to_string());
    let check = hooks.iter().find(|h| h["event"] == "PreToolUse").unwrap();
    assert_eq!(check["type"], "http");
    assert_eq!(check["matcher"], "Bash");
    assert!(
        check["source"]
            .as_str()
            .unwrap()
            .ends_with(".agentry/config.toml")
    );
    let warnings = listed["warnings"].to_string();
    assert!(warnings.contains("TeammateIdle"), "{warnings}");
    let text = sb.run(&["hooks"]);
    assert!(text.stdout.contains("Stop\n  *"), "{}", text.stdout);
    assert!(
        text.stdout.contains("[http] http://127.0.0.1:9/check"),
        "{}",
        text.stdout
    );
    let script = script(&sb, &[], &["hi"]);
    let run = sb.run_scripted(&script, &["hello"]);
    assert!(
        run.stderr.contains("agentry: warning: ") && run.stderr.contains("`TeammateIdle`"),
        "{}",
        run.stderr
    );
}

#[test]
fn an_mcp_servers_question_is_heard_by_the_hooks_which_may_answer_it() {
    let sb = sandbox();
    crate::configure_everything_server(&sb);
    let answer = json!({"hookSpecificOutput": {"hookEventName": "ElicitationResult",
        "action": "accept", "content": {"name": "Grace Hopper", "check": true, "integer": 7,
        "number": 1.5, "untitledSingleSelectEnum": "Monica"}}});
    sb.write(
        "project/.claude/settings.json",
        &recording(
            &["Elicitation", "Notification", "ElicitationResult"],
            &[(
                "ElicitationResult",
                json!({"matcher": "everything", "hooks": [{"type": "command",
                    "command": format!("echo '{answer}'")}]}),
            )],
        )
        .to_string(),
    );
    let model = MockModelServer::start_blocking([
        MockTurn::Reply(MockReply::tool_call(
            "ask",
            "mcp__everything__trigger-elicitation-request",
            json!({}),
        )),
        MockTurn::Reply(MockReply::text("done")),
    ]);
    let out = crate::run_openai(&sb, &model, &["--allow", "mcp__everything__*", "ask me"]);
    assert_eq!(out.code, Some(0), "{out:?}");
    let inputs = recorded(&sb);
    let asked = first(&inputs, "Elicitation", None);
    assert_eq!(asked["mcp_server_name"], "everything");
    assert_eq!(asked["mode"], "form");
    assert!(
        asked["requested_schema"]["properties"]["name"].is_object(),
        "{asked}"
    );
    // No hook answered the question: the user was asked, and the hooks told so.
    assert_eq!(
        names(&inputs),
        ["Elicitation", "Notification", "ElicitationResult"]
    );
    let dialog = first(&inputs, "Notification", None);
    assert_eq!(dialog["notification_type"], "elicitation_dialog");
    assert!(
        dialog["message"]
            .as_str()
            .unwrap()
            .starts_with("everything asks: "),
        "{dialog}"
    );
    // Nobody could be asked in a headless run: the user's answer was to decline, and the hook
    // changed it before the server was told.
    let answered = first(&inputs, "ElicitationResult", None);
    assert_eq!(answered["action"], "decline");
    let result = crate::tool_result_in(&model, 1);
    assert!(result.contains("Grace Hopper"), "{result}");
}

#[test]
fn a_session_start_hook_gives_the_model_context_and_the_commands_their_environment() {
    let sb = sandbox();
    sb.write(
        "project/.claude/settings.json",
        &json!({"hooks": {"SessionStart": [{"matcher": "startup", "hooks": [{"type": "command",
            "command": "echo 'export GREETING=hello-from-the-hook' >> \"$CLAUDE_ENV_FILE\"; echo 'The branch is feat/hooks.'"}]}]}})
        .to_string(),
    );
    let model = MockModelServer::start_blocking([
        MockTurn::Reply(MockReply::tool_call(
            "c1",
            "Bash",
            json!({"command": "echo \"$GREETING\" > greeting.txt", "description": "Greet"}),
        )),
        MockTurn::Reply(MockReply::text("done")),
    ]);
    let out = crate::run_openai(&sb, &model, &["--allow", "Bash", "greet"]);
    assert_eq!(out.code, Some(0), "{out:?}");
    let first = model.requests()[0].body["messages"].to_string();
    assert!(first.contains("The branch is feat/hooks."), "{first}");
    assert_eq!(
        std::fs::read_to_string(sb.project().join("greeting.txt")).unwrap(),
        "hello-from-the-hook\n"
    );
}
