//! A plugin's command files carried out as Claude Code carries them out, through `agentry run`:
//! shell lines (`` !`…` `` and ```` ```! ```` blocks) run before the prompt is sent, allowed
//! only by the command's `allowed-tools` and the session's rules and never asking, their output
//! in their place; `@file` references read through Read's permissions; `allowed-tools` holding
//! for the model's calls of the chat. Then the ways round it a hostile command line or argument
//! would try: a line not allowed, a chain after an allowed command, a command substitution, the
//! arguments, an option that writes a file (`git log --output=…`), a deny rule of the user's —
//! each stops the command before the model is asked anything, and nothing runs; a prompt hook
//! that blocks the command stops it before its lines run.

use crate::claude_plugins::{commit_all, marketplace, write};
use crate::run_openai;
use agentry_tests::Sandbox;
use agentry_tests::mock_model::{MockModelServer, MockReply, MockTurn};
use serde_json::json;

/// Installs the test marketplace's `guard` plugin with `commands` (file name, text) besides its
/// own, in a project that is a git repository with one commit and an untracked file; returns
/// the sandbox and what the install showed.
fn plugin_with(commands: &[(&str, &str)]) -> (Sandbox, String) {
    let sb = crate::sandbox();
    let market = marketplace(&sb);
    for (name, text) in commands {
        write(
            &market.join("plugins/guard/commands").join(name),
            &format!("{text}\n"),
        );
    }
    let add = sb.run(&["plugin", "marketplace", "add", market.to_str().unwrap()]);
    assert_eq!(add.code, Some(0), "{add:?}");
    let install = sb.run(&["plugin", "install", "guard@team", "--yes"]);
    assert_eq!(install.code, Some(0), "{install:?}");
    sb.write("project/notes/plan.md", "the plan: ship on Friday\n");
    commit_all(&sb.project());
    sb.write("project/new.txt", "not yet committed\n");
    sb.write("outside.txt", "SECRET-OUTSIDE\n");
    (sb, install.stdout)
}

#[test]
fn shell_lines_and_files_fill_the_prompt_and_allowed_tools_hold_for_the_chat() {
    let (sb, shown) = plugin_with(&[(
        "commit.md",
        "---\nallowed-tools: Bash(git status:*), Bash(git log:*), Bash(touch made-by-the-model)\ndescription: Commit\n---\n## Context\n- Status: !`git status --short`\n- Last commit:\n```!\ngit log --format=%s -1\n```\nCommit $ARGUMENTS. See @notes/plan.md and @../outside.txt.",
    )]);
    assert!(
        shown.contains("tools its commands allow while they run: /commit Bash(git status:*) Bash(git log:*) Bash(touch made-by-the-model)"),
        "the install shows what the command allows: {shown}"
    );
    let model = MockModelServer::start_blocking([
        MockTurn::Reply(MockReply::tool_call(
            "c1",
            "Bash",
            json!({"command": "touch made-by-the-model"}),
        )),
        MockTurn::Reply(MockReply::text("Committed.")),
    ]);
    let out = run_openai(&sb, &model, &["/commit the notes"]);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(out.stdout.trim(), "Committed.");
    let requests = model.requests();
    let first = requests[0].body["messages"].to_string();
    for shown in [
        "## Context\\n- Status: ?? new.txt",
        "- Last commit:\\nplugins",
        "Commit the notes. See @notes/plan.md and @../outside.txt.",
        "@notes/plan.md:",
        "the plan: ship on Friday",
        "@../outside.txt:\\n(the file could not be read)",
    ] {
        assert!(first.contains(shown), "{shown} in {first}");
    }
    assert!(
        !first.contains("SECRET-OUTSIDE"),
        "a file outside the workspace is not read unasked: {first}"
    );
    assert!(
        !first.contains("!`git status"),
        "the lines ran in their place: {first}"
    );
    // The calls showed like any call, and the model's own call ran as the command allows.
    assert!(
        out.stderr.contains("→ git status --short"),
        "{}",
        out.stderr
    );
    assert!(sb.project().join("made-by-the-model").exists(), "{out:?}");

    // Without the command, the same call of the model is asked about, and nobody can answer.
    let model = MockModelServer::start_blocking([
        MockTurn::Reply(MockReply::tool_call(
            "c1",
            "Bash",
            json!({"command": "touch made-by-the-model-again"}),
        )),
        MockTurn::Reply(MockReply::text("Could not.")),
    ]);
    let out = run_openai(&sb, &model, &["Commit the notes."]);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(!sb.project().join("made-by-the-model-again").exists());
}

#[test]
fn a_shell_line_the_command_does_not_allow_stops_it_before_the_model_is_asked() {
    let allowed = "---\nallowed-tools: Bash(git status:*), Bash(git log:*)\n---\n";
    let (sb, _) = plugin_with(&[
        ("unallowed.md", "Go: !`touch pwned-unallowed`"),
        (
            "chained.md",
            &format!("{allowed}Go: !`git status; touch pwned-chained`"),
        ),
        (
            "substituted.md",
            &format!("{allowed}Go: !`git status $(touch pwned-substituted)`"),
        ),
        ("argued.md", &format!("{allowed}Go: !`git log $ARGUMENTS`")),
        (
            "piped.md",
            &format!("{allowed}Go: !`git log -1 | sh -c 'touch pwned-piped'`"),
        ),
        (
            "failing.md",
            &format!("{allowed}Go: !`git log --no-such-flag`"),
        ),
        ("denied.md", &format!("{allowed}Go: !`git status --short`")),
    ]);
    let cases: [(&str, &[&str], &str); 8] = [
        ("/unallowed", &[], "pwned-unallowed"),
        ("/chained", &[], "pwned-chained"),
        ("/substituted", &[], "pwned-substituted"),
        ("/argued -1; touch pwned-argued", &[], "pwned-argued"),
        ("/piped", &[], "pwned-piped"),
        ("/failing", &[], "no-such-flag"),
        (
            "/argued -1 --output=../written-by-git.txt",
            &[],
            "--output=../written-by-git.txt",
        ),
        ("/denied", &["--deny", "Bash(git status:*)"], "git status"),
    ];
    for (prompt, flags, marker) in cases {
        let model = MockModelServer::start_blocking([MockTurn::Reply(MockReply::text("Ran."))]);
        let mut args = flags.to_vec();
        args.push(prompt);
        let out = run_openai(&sb, &model, &args);
        assert_eq!(out.code, Some(2), "{prompt}: {out:?}");
        assert!(
            out.stderr.contains("the command was not run: Bash"),
            "{prompt}: {}",
            out.stderr
        );
        assert!(out.stderr.contains(marker), "{prompt}: {}", out.stderr);
        assert!(
            model.requests().is_empty(),
            "{prompt}: the model was never asked"
        );
        let pwned: Vec<_> = std::fs::read_dir(sb.project())
            .unwrap()
            .filter_map(|entry| entry.ok())
            .filter(|entry| entry.file_name().to_string_lossy().starts_with("pwned"))
            .map(|entry| entry.file_name())
            .collect();
        assert!(pwned.is_empty(), "{prompt}: {pwned:?}");
        let by_git = sb.project().parent().unwrap().join("written-by-git.txt");
        assert!(!by_git.exists(), "{prompt}");
    }
}

#[test]
fn a_prompt_hook_that_blocks_a_command_stops_it_before_its_lines_run() {
    let (sb, _) = plugin_with(&[(
        "mark.md",
        "---\nallowed-tools: Bash(touch ran-before-the-hook)\n---\nMarked: !`touch ran-before-the-hook`",
    )]);
    sb.write(
        "project/.claude/settings.json",
        &json!({"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command",
            "command": "cat > \"$CLAUDE_PROJECT_DIR/prompt-hook.json\"; echo 'no commands today' >&2; exit 2"}]}]}})
        .to_string(),
    );
    let model = MockModelServer::start_blocking([MockTurn::Reply(MockReply::text("Ran."))]);
    let out = run_openai(&sb, &model, &["/mark"]);
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(out.stderr.contains("no commands today"), "{}", out.stderr);
    assert!(
        !sb.project().join("ran-before-the-hook").exists(),
        "the hook judged the command before its shell line ran"
    );
    let seen = std::fs::read_to_string(sb.project().join("prompt-hook.json")).unwrap();
    assert!(seen.contains("Marked: "), "{seen}");
    assert!(model.requests().is_empty());
}

#[test]
fn the_terminal_shows_a_commands_shell_line_as_a_call_and_its_output_in_the_message() {
    let (sb, _) = plugin_with(&[(
        "status.md",
        "---\nallowed-tools: Bash(git status:*)\n---\nStatus: !`git status --short`\nSay what changed.",
    )]);
    let model =
        MockModelServer::start_blocking([MockTurn::Reply(MockReply::text("One new file."))]);
    let tmux = crate::tui::chat(&sb, &model, &[], &[]);
    tmux.type_text("/status");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for_text("One new file.");
    let call = screen
        .find("git status --short")
        .unwrap_or_else(|| panic!("{screen}"));
    let message = screen
        .find("Status: ?? new.txt")
        .unwrap_or_else(|| panic!("{screen}"));
    assert!(
        call < message,
        "the call shows, then the message it filled: {screen}"
    );
    let first = model.requests()[0].body["messages"].to_string();
    assert!(first.contains("Status: ?? new.txt"), "{first}");
}
