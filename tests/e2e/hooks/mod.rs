//! Hooks through the binary: Claude Code's `.claude/settings.json` and agentry's own
//! `[[hooks.…]]` in `config.toml`.

mod events;
mod filters;
mod front_ends;

use crate::{run_openai, sandbox, tool_result_in};
use agentry_tests::mock_model::{MockModelServer, MockReply, MockTurn};
use serde_json::json;

fn two_bash_calls() -> MockModelServer {
    MockModelServer::start_blocking([
        MockTurn::Reply(MockReply::tool_call(
            "c1",
            "Bash",
            json!({"command": "rm -rf build", "description": "Clean"}),
        )),
        MockTurn::Reply(MockReply::tool_call(
            "c2",
            "Bash",
            json!({"command": "echo built > out.txt", "description": "Build"}),
        )),
        MockTurn::Reply(MockReply::text("done")),
    ])
}

#[test]
fn claude_code_settings_hooks_and_config_hooks_run_around_tool_calls() {
    let sb = sandbox();
    sb.write(
        "project/.claude/settings.json",
        &json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command",
            "command": "grep -q 'rm -rf' && { echo 'rm -rf is not allowed here' >&2; exit 2; }; exit 0"}]}]}})
        .to_string(),
    );
    sb.write(
        "project/.agentry/config.toml",
        "[[hooks.PostToolUse]]\nmatcher = \"kind:execute\"\n\
         [[hooks.PostToolUse.hooks]]\ntype = \"command\"\n\
         command = \"echo 'post-hook saw it' >&2; exit 2\"\n",
    );
    let server = two_bash_calls();
    let out = run_openai(&sb, &server, &["--allow", "Bash", "Clean and build"]);
    assert_eq!(out.code, Some(0), "{out:?}");
    let denied = tool_result_in(&server, 1);
    assert!(
        denied.contains("A hook denied this call: rm -rf is not allowed here"),
        "{denied}"
    );
    let built = tool_result_in(&server, 2);
    assert!(
        built.contains("PostToolUse hook feedback:") && built.contains("post-hook saw it"),
        "{built}"
    );
    assert_eq!(
        std::fs::read_to_string(sb.project().join("out.txt")).unwrap(),
        "built\n"
    );
}
