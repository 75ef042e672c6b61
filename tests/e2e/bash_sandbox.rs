//! Bash's sandbox through the binary: writes confined to the workspace and the temporary
//! folder (Landlock), no network (seccomp), escalation through the permission prompt, and the
//! fallback on a kernel without Landlock; with Bash linked and as a plugin of the thin CLI,
//! configured by the same `[sandbox]`.
//!
//! Each run gets `TMPDIR` inside the test's own folder, so that the folder beside the project
//! (`outside/`) is outside everything the sandbox lets commands write.

use crate::acp::{prompt, session_steps, tool_updates};
use crate::both_ways;
use crate::loading::{Loading, as_strs};
use crate::{run_openai_with_env, tool_result_in};
use agentry_tests::Sandbox;
use agentry_tests::mock_model::{MockModelServer, MockReply, MockTurn};
use agentry_tests::peers::Transcript;
use serde_json::{Value, json};
use std::path::PathBuf;

/// `TMPDIR` for the run: a folder of the test's own.
fn temp_dir(sb: &Sandbox) -> String {
    let dir = sb.project().parent().unwrap().join("tmp");
    std::fs::create_dir_all(&dir).unwrap();
    dir.display().to_string()
}

/// A folder beside the project, outside the workspace and the temporary folder.
fn outside(sb: &Sandbox) -> PathBuf {
    let dir = sb.project().parent().unwrap().join("outside");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A model that runs each command with Bash, then answers "done".
fn bash_calls(calls: &[Value]) -> MockModelServer {
    let mut turns: Vec<MockTurn> = calls
        .iter()
        .enumerate()
        .map(|(n, input)| {
            MockTurn::Reply(MockReply::tool_call(
                &format!("c{n}"),
                "Bash",
                input.clone(),
            ))
        })
        .collect();
    turns.push(MockTurn::Reply(MockReply::text("done")));
    MockModelServer::start_blocking(turns)
}

/// `agentry acp --allow Bash` against `server`, with the test's own `TMPDIR`, under the ACP
/// test client playing `client`.
fn acp_allowing_bash(
    loading: Loading,
    sb: &Sandbox,
    server: &MockModelServer,
    client: Value,
) -> Transcript {
    let tmp = temp_dir(sb);
    let base = format!("{}/v1", server.url());
    let args = loading.args(&["--model", "openai/gpt-4.1", "--allow", "Bash"]);
    sb.acp(
        &as_strs(&args),
        &[
            ("OPENAI_API_KEY", "sk-e2e"),
            ("OPENAI_BASE_URL", &base),
            ("TMPDIR", &tmp),
        ],
        client,
    )
}

both_ways!(a_write_outside_the_workspace_is_refused_and_named_and_inside_is_allowed);
fn a_write_outside_the_workspace_is_refused_and_named_and_inside_is_allowed(loading: Loading) {
    let sb = loading.sandbox();
    let outside = outside(&sb);
    let server = bash_calls(&[
        json!({"command": "echo kept > inside.txt && mkdir -p build && echo ok > build/x"}),
        json!({"command": "echo lost > ../outside/x.txt"}),
        json!({"command": "touch \"$TMPDIR/scratch\" && echo temp-ok"}),
    ]);
    let tmp = temp_dir(&sb);
    let out = run_openai_with_env(
        &sb,
        &server,
        &as_strs(&loading.args(&["--allow", "Bash", "go"])),
        &[("TMPDIR", &tmp)],
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(
        std::fs::read_to_string(sb.project().join("inside.txt")).unwrap(),
        "kept\n"
    );
    assert!(sb.project().join("build/x").exists());
    assert!(!outside.join("x.txt").exists());
    let refused = tool_result_in(&server, 2);
    assert!(
        refused.contains(&format!(
            "[sandbox] The sandbox refused writing to {}",
            outside.join("x.txt").display()
        )),
        "{refused}"
    );
    assert!(
        refused.contains("dangerouslyDisableSandbox: true"),
        "{refused}"
    );
    assert!(tool_result_in(&server, 3).contains("temp-ok"));
}

both_ways!(network_is_off_unless_the_configuration_allows_it);
fn network_is_off_unless_the_configuration_allows_it(loading: Loading) {
    let sb = loading.sandbox();
    let target = MockModelServer::start_blocking([]);
    let curl = format!(
        "curl -sS -o /dev/null -w 'status %{{http_code}}' {}/ping",
        target.url()
    );
    let tmp = temp_dir(&sb);
    let env = [("TMPDIR", tmp.as_str())];
    let server = bash_calls(&[json!({"command": curl})]);
    let out = run_openai_with_env(
        &sb,
        &server,
        &as_strs(&loading.args(&["--allow", "Bash", "go"])),
        &env,
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    let refused = tool_result_in(&server, 1);
    assert!(
        refused.contains("[sandbox] The sandbox refused the network"),
        "{refused}"
    );
    assert!(target.requests().is_empty(), "the request went out");

    sb.write(
        "project/.agentry/config.toml",
        "[sandbox]\nnetwork = true\n",
    );
    let server = bash_calls(&[json!({"command": curl})]);
    let out = run_openai_with_env(
        &sb,
        &server,
        &as_strs(&loading.args(&["--allow", "Bash", "go"])),
        &env,
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    let reached = tool_result_in(&server, 1);
    assert!(reached.contains("status "), "{reached}");
    assert!(!reached.contains("[sandbox]"), "{reached}");
    assert_eq!(target.requests().len(), 1);
}

both_ways!(running_outside_the_sandbox_is_asked_even_when_bash_is_allowed);
fn running_outside_the_sandbox_is_asked_even_when_bash_is_allowed(loading: Loading) {
    let sb = loading.sandbox();
    let outside = outside(&sb);
    let server = bash_calls(&[
        json!({"command": "echo first > ../outside/a.txt", "dangerouslyDisableSandbox": true}),
        json!({"command": "echo second > ../outside/b.txt", "dangerouslyDisableSandbox": true}),
        json!({"command": "echo plain"}),
    ]);
    let out = acp_allowing_bash(
        loading,
        &sb,
        &server,
        json!({"permissions": ["allow_once", "reject_once"],
               "steps": session_steps(&sb, vec![prompt("go")])}),
    );
    assert_eq!(
        out.result(2)["stopReason"],
        "end_turn",
        "{:#?}",
        out.records
    );
    let asked = out.of_kind("permission");
    assert_eq!(asked.len(), 2, "only the escalated calls ask: {asked:#?}");
    assert_eq!(asked[0]["toolCall"]["toolCallId"], "c0");
    assert!(
        asked[0]["toolCall"]["title"]
            .as_str()
            .unwrap()
            .ends_with("(outside the sandbox)"),
        "{}",
        asked[0]
    );
    assert_eq!(
        std::fs::read_to_string(outside.join("a.txt")).unwrap(),
        "first\n"
    );
    assert!(!outside.join("b.txt").exists());
    let plain = tool_updates(&out, "c2");
    assert_eq!(plain.last().unwrap()["status"], "completed");
}

/// Runs `run` on a thread whose seccomp filter answers Landlock's first system call with
/// ENOSYS, as a kernel without Landlock does: the binary it starts inherits the filter.
fn without_landlock<T: Send>(run: impl FnOnce() -> T + Send) -> T {
    use seccompiler::{BpfProgram, SeccompAction, SeccompFilter};
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                let filter: BpfProgram = SeccompFilter::new(
                    [(libc::SYS_landlock_create_ruleset, vec![])]
                        .into_iter()
                        .collect(),
                    SeccompAction::Allow,
                    SeccompAction::Errno(libc::ENOSYS as u32),
                    std::env::consts::ARCH.try_into().unwrap(),
                )
                .unwrap()
                .try_into()
                .unwrap();
                seccompiler::apply_filter(&filter).unwrap();
                run()
            })
            .join()
            .unwrap()
    })
}

both_ways!(without_landlock_commands_run_unsandboxed_with_one_warning_or_are_refused);
fn without_landlock_commands_run_unsandboxed_with_one_warning_or_are_refused(loading: Loading) {
    let sb = loading.sandbox();
    let outside = outside(&sb);
    let tmp = temp_dir(&sb);
    let env = [("TMPDIR", tmp.as_str())];
    let args = loading.args(&["--allow", "Bash", "go"]);
    let run = |server: &MockModelServer| {
        without_landlock(|| run_openai_with_env(&sb, server, &as_strs(&args), &env))
    };
    let server = bash_calls(&[
        json!({"command": "echo one > ../outside/a.txt"}),
        json!({"command": "echo two > ../outside/b.txt"}),
    ]);
    let out = run(&server);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(outside.join("a.txt").exists() && outside.join("b.txt").exists());
    let warning = "Bash commands run unsandboxed in this session: this kernel has no Landlock";
    assert_eq!(out.stderr.matches(warning).count(), 1, "{}", out.stderr);

    sb.write(
        "project/.agentry/config.toml",
        "[sandbox]\nwhen_unavailable = \"refuse\"\n",
    );
    let server = bash_calls(&[json!({"command": "echo three > ../outside/c.txt"})]);
    let out = run(&server);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(!outside.join("c.txt").exists());
    let refused = tool_result_in(&server, 1);
    assert!(
        refused.contains("Bash cannot run sandboxed: this kernel has no Landlock"),
        "{refused}"
    );
}

both_ways!(the_read_only_sandbox_refuses_writes_in_the_workspace_too);
fn the_read_only_sandbox_refuses_writes_in_the_workspace_too(loading: Loading) {
    let sb = loading.sandbox();
    let server =
        bash_calls(&[json!({"command": "cat /etc/hostname > /dev/null && echo x > inside.txt"})]);
    let tmp = temp_dir(&sb);
    let out = run_openai_with_env(
        &sb,
        &server,
        &as_strs(&loading.args(&["--allow", "Bash", "--sandbox", "read-only", "go"])),
        &[("TMPDIR", &tmp)],
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(!sb.project().join("inside.txt").exists());
    let refused = tool_result_in(&server, 1);
    assert!(
        refused.contains(&format!(
            "refused writing to {} (in the read-only sandbox",
            sb.project().join("inside.txt").display()
        )),
        "{refused}"
    );
}

both_ways!(an_editor_chooses_the_sandbox_per_session_with_a_config_option);
fn an_editor_chooses_the_sandbox_per_session_with_a_config_option(loading: Loading) {
    let sb = loading.sandbox();
    let outside = outside(&sb);
    let turn = |id: &str, command: &str| {
        [
            MockTurn::Reply(MockReply::tool_call(
                id,
                "Bash",
                json!({"command": command}),
            )),
            MockTurn::Reply(MockReply::text("done")),
        ]
    };
    let server = MockModelServer::start_blocking(
        turn("c0", "echo sandboxed > ../outside/a.txt")
            .into_iter()
            .chain(turn("c1", "echo unconfined > ../outside/b.txt")),
    );
    let set = |value: &str| {
        json!({"op": "request", "method": "session/set_config_option",
               "params": {"sessionId": "$session", "configId": "sandbox", "value": value}})
    };
    let out = acp_allowing_bash(
        loading,
        &sb,
        &server,
        json!({"steps": session_steps(&sb, vec![
            prompt("first"), set("strict"), set("off"), prompt("second"),
        ])}),
    );
    let options = out.result(1)["configOptions"].as_array().unwrap().clone();
    let sandbox = options.iter().find(|o| o["id"] == "sandbox").unwrap();
    assert_eq!(sandbox["currentValue"], "workspace-write", "{sandbox}");
    let values: Vec<&str> = sandbox["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["value"].as_str().unwrap())
        .collect();
    assert_eq!(values, ["workspace-write", "read-only", "off"]);
    assert_eq!(out.answer(3)["code"], -32602, "{}", out.answer(3));
    let changed = &out.result(4)["configOptions"];
    let sandbox = changed
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["id"] == "sandbox")
        .unwrap();
    assert_eq!(sandbox["currentValue"], "off");
    assert_eq!(
        out.result(5)["stopReason"],
        "end_turn",
        "{:#?}",
        out.records
    );
    assert!(
        !outside.join("a.txt").exists(),
        "the first turn was sandboxed"
    );
    assert_eq!(
        std::fs::read_to_string(outside.join("b.txt")).unwrap(),
        "unconfined\n"
    );
}
