//! Which hooks run, through the binary: a handler's `if` (a permission rule the call must
//! match, judged as permission rules are, other spellings and chained commands included), a
//! `PermissionRequest` hook's rewritten input (judged again by deny and ask rules), and
//! `disableAllHooks`.

use super::events::script;
use crate::sandbox;
use agentry_tests::Sandbox;
use serde_json::{Value, json};

/// A command hook that appends the call's input to `file` (in the project), a line each.
fn logging_to(file: &str) -> Value {
    json!({"type": "command",
        "command": format!("cat >> \"$CLAUDE_PROJECT_DIR/{file}\"; echo >> \"$CLAUDE_PROJECT_DIR/{file}\"")})
}

/// The `field` of each call's input `file` holds, in order.
fn logged(sb: &Sandbox, file: &str, field: &str) -> Vec<String> {
    let text = std::fs::read_to_string(sb.project().join(file)).unwrap_or_default();
    text.lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            let input: Value = serde_json::from_str(line).unwrap();
            input["tool_input"][field].as_str().unwrap().to_owned()
        })
        .collect()
}

/// A Bash call of `command`.
fn bash(command: &str) -> (&'static str, Value) {
    ("Bash", json!({"command": command, "description": "Run"}))
}

/// Other spellings of `rm` a model might try to slip past a hook with.
const OTHER_RMS: [&str; 5] = [
    "/bin/rm -f gone1",
    "command rm -f gone2",
    "\\rm -f gone3",
    "bash -c 'rm -f gone4'",
    "r=rm; $r -f gone5",
];

#[test]
fn an_if_runs_a_hook_only_for_the_calls_its_rule_matches_however_they_are_spelt() {
    let sb = sandbox();
    let git = |file: &str| {
        json!({"if": "Bash(git *)", "type": "command",
        "command": logging_to(file)["command"]})
    };
    let mut src = logging_to(".src.jsonl");
    src["if"] = json!("Edit(src/**)");
    let mut rm = logging_to(".rm.jsonl");
    rm["if"] = json!("Bash(rm *)");
    sb.write(
        "project/.claude/settings.json",
        &json!({"hooks": {
            "PreToolUse": [{"hooks": [git(".git.jsonl"), src, rm]}],
            "PostToolUse": [{"matcher": "Bash", "hooks": [git(".post-git.jsonl")]}],
            "PostToolUseFailure": [{"matcher": "Bash", "hooks": [git(".post-git.jsonl")]}],
            "SessionStart": [{"hooks": [{"if": "Bash(git *)", "type": "command",
                "command": "touch \"$CLAUDE_PROJECT_DIR/started\""}]}]}})
        .to_string(),
    );
    std::fs::create_dir_all(sb.project().join("src")).unwrap();
    std::fs::create_dir_all(sb.project().join("lib")).unwrap();
    let commands = [
        "ls",
        "git status",
        "ls && git log -1",
        "FOO=1 git status",
        "echo $(git rev-parse HEAD)",
        "echo git status",
        "eval \"$SOMETHING\"",
    ];
    let mut calls: Vec<(&str, Value)> = commands
        .iter()
        .chain(&OTHER_RMS)
        .map(|command| bash(command))
        .collect();
    for path in ["src/a.txt", "./lib/../src/b.txt", "notes.txt"] {
        calls.push(("Write", json!({"file_path": path, "content": "x"})));
    }
    let script = script(&sb, &calls, &["done"]);
    let out = sb.run_scripted(&script, &["--allow", "Bash", "--allow", "Write", "Go"]);
    assert_eq!(out.code, Some(0), "{out:?}");
    let expected_git = [
        "git status",
        "ls && git log -1",
        "FOO=1 git status",
        "echo $(git rev-parse HEAD)",
        // What no rule can see counts as matching: a filter selects, it guards nothing.
        "eval \"$SOMETHING\"",
        "r=rm; $r -f gone5",
    ];
    assert_eq!(logged(&sb, ".git.jsonl", "command"), expected_git);
    assert_eq!(logged(&sb, ".post-git.jsonl", "command"), expected_git);
    assert_eq!(
        logged(&sb, ".rm.jsonl", "command"),
        [
            // A variable set for a program may make it run anything (`GIT_PAGER`, …): the
            // permission rules' reader cannot see through it, so neither can a filter.
            "FOO=1 git status",
            "eval \"$SOMETHING\"",
        ]
        .iter()
        .chain(&OTHER_RMS)
        .copied()
        .collect::<Vec<_>>()
    );
    assert_eq!(
        logged(&sb, ".src.jsonl", "file_path"),
        ["src/a.txt", "./lib/../src/b.txt"]
    );
    assert!(
        !sb.project().join("started").exists(),
        "an `if` on an event without a call never runs"
    );
    assert!(
        out.stderr.contains("a hook of SessionStart has `if`"),
        "{}",
        out.stderr
    );
    let listed = sb.run(&["hooks"]);
    assert!(
        listed.stdout.contains("[command if Bash(git *)]"),
        "{}",
        listed.stdout
    );
}

/// A `PermissionRequest` hook, for the calls `rule` matches, that allows them with `command`
/// in place of theirs.
fn rewriting(rule: &str, command: &str) -> Value {
    let reply = json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
        "decision": {"behavior": "allow",
            "updatedInput": {"command": command, "description": "Rewritten"}}}});
    json!({"if": rule, "type": "command", "command": format!("echo '{reply}'")})
}

#[test]
fn a_permission_hooks_rewritten_call_runs_and_deny_and_ask_rules_judge_it_again() {
    let sb = sandbox();
    sb.write(
        "project/.claude/settings.json",
        &json!({
            "permissions": {"deny": ["Bash(rm:*)"], "ask": ["Bash(touch:*)"]},
            "hooks": {
                "PermissionRequest": [{"matcher": "Bash", "hooks": [
                    rewriting("Bash(echo first:*)", "echo rewritten > out.txt"),
                    rewriting("Bash(echo second:*)", "rm -f keep.txt"),
                    rewriting("Bash(echo third:*)", "touch asked.txt"),
                ]}],
                "PermissionDenied": [{"hooks": [logging_to(".denied.jsonl")]}],
                "PostToolUse": [{"hooks": [logging_to(".ran.jsonl")]}]}})
        .to_string(),
    );
    sb.write("project/keep.txt", "kept");
    let calls = [
        bash("echo first > out.txt"),
        bash("echo second"),
        bash("echo third"),
    ];
    let script = script(&sb, &calls, &["done"]);
    let out = sb.run_scripted(&script, &["--output-format", "json", "Go"]);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(
        std::fs::read_to_string(sb.project().join("out.txt")).unwrap(),
        "rewritten\n",
        "the hook's input is what ran"
    );
    assert_eq!(
        std::fs::read_to_string(sb.project().join("keep.txt")).unwrap(),
        "kept",
        "a deny rule refuses the rewritten call"
    );
    assert!(
        !sb.project().join("asked.txt").exists(),
        "an ask rule asks about the rewritten call, and no one could be asked"
    );
    assert_eq!(
        logged(&sb, ".ran.jsonl", "command"),
        ["echo rewritten > out.txt"],
        "the hooks after a call see the call that ran"
    );
    assert_eq!(
        logged(&sb, ".denied.jsonl", "command"),
        ["rm -f keep.txt", "touch asked.txt"],
        "PermissionDenied names the call that was refused"
    );
}

#[test]
fn disable_all_hooks_turns_every_hook_off_and_the_last_file_that_says_decides() {
    let sb = sandbox();
    sb.write(
        "project/.claude/settings.json",
        &json!({"hooks": {"PreToolUse": [{"hooks": [logging_to(".ran.jsonl")]}]}}).to_string(),
    );
    sb.write(
        "project/.claude/settings.local.json",
        &json!({"disableAllHooks": true}).to_string(),
    );
    let script = script(&sb, &[bash("true")], &["done"]);
    let out = sb.run_scripted(&script, &["--allow", "Bash", "Go"]);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(logged(&sb, ".ran.jsonl", "command").is_empty());
    let listed = sb.run(&["hooks"]);
    assert!(
        listed
            .stdout
            .contains("no hooks: `disableAllHooks` turns them off"),
        "{}",
        listed.stdout
    );
    assert_eq!(sb.run(&["hooks", "--json"]).json()["disabled"], true);
    // The user's settings turn them off; the project's turn them back on.
    sb.write(
        "home/.claude/settings.json",
        &json!({"disableAllHooks": true}).to_string(),
    );
    sb.write(
        "project/.claude/settings.local.json",
        &json!({"disableAllHooks": false}).to_string(),
    );
    let out = sb.run_scripted(&script, &["--allow", "Bash", "Go"]);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(logged(&sb, ".ran.jsonl", "command"), ["true"]);
}

#[test]
fn a_repository_nobody_trusted_cannot_turn_the_users_own_hooks_off() {
    let sb = sandbox();
    sb.write(
        "home/.claude/settings.json",
        &json!({"hooks": {"PreToolUse": [{"hooks": [logging_to(".guarded.jsonl")]}]}}).to_string(),
    );
    sb.write(
        "project/.claude/settings.json",
        &json!({"disableAllHooks": true}).to_string(),
    );
    let script = script(&sb, &[bash("true")], &["done"]);
    let script = format!("scripted:{}", script.display());
    let args = ["run", "--model", &script, "--allow", "Bash", "Go"];
    let out = sb.run_with_env(&args, &[("AGENTRY_TRUST", "0")]);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(
        logged(&sb, ".guarded.jsonl", "command"),
        ["true"],
        "the user's hook still ran"
    );
    assert!(
        out.stderr.contains("turning every hook off, your own too"),
        "what was left out is said: {}",
        out.stderr
    );
}
