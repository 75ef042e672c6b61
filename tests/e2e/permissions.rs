//! Permission rules through the real binary, as users write them (in `.agentry/config.toml`,
//! with `--deny`, in `.claude/settings.json`), against the spellings and chains a hostile model
//! would try. The read, write, edit and Bash rules are tried with the providers linked and
//! loaded as plugins.

use crate::both_ways;
use crate::loading::{Loading, as_strs};
use crate::{run_openai, sandbox, tool_result_in};
use agentry_tests::Sandbox;
use agentry_tests::mock_model::{MockModelServer, MockReply, MockTurn};
use serde_json::{Value, json};

/// A model that makes each call in turn, one per request, then answers `done`.
fn calls(calls: &[(&str, Value)]) -> MockModelServer {
    let turns = calls
        .iter()
        .enumerate()
        .map(|(n, (tool, input))| {
            MockTurn::Reply(MockReply::tool_call(&format!("c{n}"), tool, input.clone()))
        })
        .chain([MockTurn::Reply(MockReply::text("done"))])
        .collect::<Vec<_>>();
    MockModelServer::start_blocking(turns)
}

/// A project holding `secret/key.txt`, a public note that mentions a key, and a link to the
/// secret folder.
fn project_with_a_secret() -> Sandbox {
    project_with_a_secret_in(sandbox())
}

/// The project of [`project_with_a_secret`] in `sb`.
fn project_with_a_secret_in(sb: Sandbox) -> Sandbox {
    sb.write("project/secret/key.txt", "KEY-123-SECRET\n");
    sb.write("project/notes/a.txt", "KEY-public\n");
    std::os::unix::fs::symlink(sb.project().join("secret"), sb.project().join("link")).unwrap();
    sb
}

/// Every way to read `secret/key.txt` a model might try, and searches over the project.
fn reads_of_the_secret(sb: &Sandbox) -> Vec<(&'static str, Value)> {
    let absolute = sb.project().join("secret/key.txt").display().to_string();
    vec![
        ("Read", json!({"file_path": "secret/key.txt"})),
        ("Read", json!({"file_path": "./secret/key.txt"})),
        ("Read", json!({"file_path": absolute})),
        ("Read", json!({"file_path": "notes/../secret/key.txt"})),
        ("Read", json!({"file_path": "link/key.txt"})),
        ("Grep", json!({"pattern": "KEY", "output_mode": "content"})),
        ("Grep", json!({"pattern": "KEY", "path": "secret"})),
        ("Grep", json!({"pattern": "KEY", "path": "link"})),
        ("Glob", json!({"pattern": "**/*.txt"})),
    ]
}

/// Runs the model's calls in bypass mode with these flags: only the rules stand in their way.
fn in_bypass_mode(sb: &Sandbox, server: &MockModelServer, flags: &[&str]) {
    let mut args = vec!["--permission-mode", "bypass"];
    args.extend_from_slice(flags);
    args.push("go");
    let out = run_openai(sb, server, &args);
    assert_eq!(out.code, Some(0), "{out:?}");
}

/// Runs the reads in bypass mode and checks what the model got.
fn the_secret_stays_secret(sb: &Sandbox, extra_args: &[&str]) {
    let reads = reads_of_the_secret(sb);
    let server = calls(&reads);
    in_bypass_mode(sb, &server, extra_args);
    for (n, (tool, input)) in reads.iter().enumerate() {
        let result = tool_result_in(&server, n + 1);
        assert!(
            !result.contains("KEY-123-SECRET"),
            "{tool} {input} read the secret: {result}"
        );
        let searched_the_project = *tool == "Glob" || input.get("path").is_none();
        if searched_the_project && *tool != "Read" {
            assert!(
                result.contains("a.txt") || result.contains("KEY-public"),
                "{tool} {input} still finds the rest: {result}"
            );
            assert!(!result.contains("key.txt"), "{tool} {input}: {result}");
        } else {
            assert!(
                result.contains("denied by the permission rule `Read(secret/**)`"),
                "{tool} {input}: {result}"
            );
        }
    }
}

both_ways!(a_read_deny_rule_in_the_projects_config_holds_for_every_spelling_and_search);
fn a_read_deny_rule_in_the_projects_config_holds_for_every_spelling_and_search(loading: Loading) {
    let sb = project_with_a_secret_in(loading.sandbox());
    sb.write(
        "project/.agentry/config.toml",
        "[permissions]\ndeny = [\"Read(secret/**)\"]\n",
    );
    the_secret_stays_secret(&sb, &as_strs(&loading.args(&[])));
}

#[test]
fn a_read_deny_rule_given_as_a_flag_holds_the_same() {
    let sb = project_with_a_secret();
    the_secret_stays_secret(&sb, &["--deny", "Read(secret/**)"]);
}

#[test]
fn a_read_deny_rule_in_claude_codes_settings_holds_the_same() {
    let sb = project_with_a_secret();
    sb.write(
        "project/.claude/settings.json",
        r#"{"permissions": {"deny": ["Read(secret/**)"]}}"#,
    );
    the_secret_stays_secret(&sb, &[]);
}

#[test]
fn the_four_path_forms_start_where_the_readme_says() {
    let sb = sandbox();
    sb.write("home/.ssh/id_ed25519", "PRIVATE\n");
    sb.write("project/.env", "TOKEN=1\n");
    sb.write("project/sub/.env", "TOKEN=2\n");
    let home_key = sb.project().join("../home/.ssh/id_ed25519");
    let reads = [
        ("Read", json!({"file_path": home_key.display().to_string()})),
        ("Read", json!({"file_path": "sub/.env"})),
        ("Read", json!({"file_path": ".env"})),
    ];
    let server = calls(&reads);
    in_bypass_mode(
        &sb,
        &server,
        &["--deny", "Read(~/.ssh/**)", "--deny", "Read(.env)"],
    );
    for n in 1..=3 {
        let result = tool_result_in(&server, n);
        assert!(result.contains("denied"), "read {n}: {result}");
        assert!(!result.contains("TOKEN") && !result.contains("PRIVATE"));
    }
}

both_ways!(the_readmes_write_rule_allows_writes_under_src_and_only_there);
fn the_readmes_write_rule_allows_writes_under_src_and_only_there(loading: Loading) {
    let sb = loading.sandbox();
    let server = calls(&[
        (
            "Write",
            json!({"file_path": "src/lib.rs", "content": "// ok\n"}),
        ),
        (
            "Write",
            json!({"file_path": "other.rs", "content": "// no\n"}),
        ),
    ]);
    let args = loading.args(&["--allow", "Write(src/**)", "write"]);
    let out = run_openai(&sb, &server, &as_strs(&args));
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(sb.project().join("src/lib.rs").exists(), "{out:?}");
    assert!(!sb.project().join("other.rs").exists());
}

both_ways!(an_edit_rule_covers_every_tool_that_edits_files);
fn an_edit_rule_covers_every_tool_that_edits_files(loading: Loading) {
    let sb = loading.sandbox();
    sb.write("project/locked/a.txt", "old\n");
    let server = calls(&[
        (
            "Write",
            json!({"file_path": "locked/a.txt", "content": "new\n"}),
        ),
        (
            "Edit",
            json!({"file_path": "locked/a.txt", "old_string": "old", "new_string": "new"}),
        ),
        (
            "MultiEdit",
            json!({"file_path": "locked/a.txt", "edits": [{"old_string": "old", "new_string": "new"}]}),
        ),
    ]);
    in_bypass_mode(
        &sb,
        &server,
        &as_strs(&loading.args(&["--deny", "Edit(locked/)"])),
    );
    for n in 1..=3 {
        assert!(tool_result_in(&server, n).contains("denied"));
    }
    let text = std::fs::read_to_string(sb.project().join("locked/a.txt")).unwrap();
    assert_eq!(text, "old\n");
}

both_ways!(a_bash_deny_rule_holds_against_chains_beside_allowing_all_of_bash);
fn a_bash_deny_rule_holds_against_chains_beside_allowing_all_of_bash(loading: Loading) {
    let sb = loading.sandbox();
    sb.write(
        "project/.agentry/config.toml",
        "[permissions]\nallow = [\"Bash\"]\ndeny = [\"Bash(rm:*)\"]\n",
    );
    sb.write("project/victim", "still here\n");
    let commands = [
        "echo hi && rm -f victim",
        "true; /bin/rm -f victim",
        "echo $(rm -f victim)",
        "bash -c 'rm -f victim'",
        "r\\m -f victim",
        "eval 'rm -f victim'",
        "echo untouched",
    ];
    let server = calls(
        &commands
            .iter()
            .map(|command| ("Bash", json!({"command": command})))
            .collect::<Vec<_>>(),
    );
    let args = loading.args(&["--sandbox", "off", "go"]);
    let out = run_openai(&sb, &server, &as_strs(&args));
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(sb.project().join("victim").exists(), "{out:?}");
    for n in 1..=5 {
        let result = tool_result_in(&server, n);
        assert!(
            result.contains("`Bash(rm:*)`"),
            "{}: {result}",
            commands[n - 1]
        );
    }
    // What the rule cannot see through is put to the user; headless, nobody answers.
    let hidden = tool_result_in(&server, 6);
    assert!(!hidden.contains("Exit code"), "{hidden}");
    assert!(tool_result_in(&server, 7).contains("untouched"));
}

#[test]
fn rules_that_can_never_match_are_reported_and_listed_with_their_sources() {
    let sb = sandbox();
    sb.write(
        "project/.agentry/config.toml",
        "[permissions]\ndeny = [\"Read(/etc/passwd)\", \"Reed(secret/**)\", \"Read(secret/**)\"]\n",
    );
    let listed = sb.run(&["permissions", "--json", "--allow", "TodoWrite(x)"]);
    assert_eq!(listed.code, Some(0), "{listed:?}");
    let listed = listed.json();
    let rules = listed["rules"].as_array().unwrap();
    assert_eq!(rules.len(), 4);
    assert!(
        rules[0]["source"]
            .as_str()
            .unwrap()
            .ends_with(".agentry/config.toml")
    );
    assert_eq!(rules[3]["source"], "the command line");
    let problems: Vec<&str> = listed["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["rule"].as_str().unwrap())
        .collect();
    assert_eq!(
        problems,
        ["Read(/etc/passwd)", "Reed(secret/**)", "TodoWrite(x)"]
    );
    assert!(
        listed["warnings"][0]["problem"]
            .as_str()
            .unwrap()
            .contains("write `//etc/passwd`")
    );
    let text = sb.run(&["permissions"]).stdout;
    assert!(
        text.contains("warning: the deny rule `Reed(secret/**)`"),
        "{text}"
    );

    // A run tells the user too, before the model answers.
    let server = calls(&[]);
    let out = run_openai(&sb, &server, &["hi"]);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(
        out.stderr.contains("`Read(/etc/passwd)`") && out.stderr.contains("can never match"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_headless_run_says_nobody_was_asked_and_names_the_rule_that_allows_exactly_the_call() {
    let sb = sandbox();
    sb.write("project/victim", "here\n");
    let server = calls(&[(
        "Bash",
        json!({"command": "git status --short && rm -f victim", "description": "List files"}),
    )]);
    let out = run_openai(&sb, &server, &["--output-format", "stream-json", "go"]);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(sb.project().join("victim").exists());
    let told = tool_result_in(&server, 1);
    assert!(told.contains("nobody can be asked"), "{told}");
    assert!(!told.contains("rejected this call"), "{told}");
    assert!(
        out.stderr
            .contains("--allow 'Bash(git status:*)' --allow 'Bash(rm:*)'"),
        "{}",
        out.stderr
    );
    // What was put to the user is the command, whatever the model called it.
    let announced = out
        .json_lines()
        .into_iter()
        .find(|event| event["type"] == "tool_call")
        .unwrap();
    assert_eq!(
        announced["title"],
        "git status --short && rm -f victim — List files"
    );
}

#[test]
fn a_headless_run_says_what_no_rule_can_see_through_and_suggests_no_rule_for_it() {
    let sb = sandbox();
    sb.write("project/victim", "here\n");
    let server = calls(&[(
        "Bash",
        json!({"command": "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0='rm -f victim; false' git status"}),
    )]);
    let out = run_openai(&sb, &server, &["--allow", "Bash(git status:*)", "go"]);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(sb.project().join("victim").exists(), "it ran");
    assert!(
        out.stderr.contains("no rule can allow it")
            && out
                .stderr
                .contains("`GIT_CONFIG_COUNT=` set for a command may change what it does"),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("--allow"), "{}", out.stderr);
    let told = tool_result_in(&server, 1);
    assert!(told.contains("cannot see through"), "{told}");
}
