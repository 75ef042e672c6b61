//! The interactive chat (`agentry` with no subcommand) in a real terminal: tmux runs the
//! binary against the mock model; the tests type, press keys and read the screen.

use crate::{process_gone, sandbox, tool_result_in};
use agentry_tests::Sandbox;
use agentry_tests::mock_model::{MockModelServer, MockReply, MockTurn};
use agentry_tests::tmux::Tmux;
use serde_json::json;

mod rewind;
mod scrollback;

/// The terminal's size in every test but the scrollback checks.
const SIZE: (u16, u16) = (80, 30);

/// `agentry --model openai/gpt-4.1 ARGS…` in tmux, against `server`, with `env` added.
pub(crate) fn chat(
    sb: &Sandbox,
    server: &MockModelServer,
    args: &[&str],
    env: &[(&str, &str)],
) -> Tmux {
    chat_in(sb, server, args, env, SIZE)
}

/// `agentry --model openai/gpt-4.1 ARGS…` in a `size` tmux pane, against `server`.
fn chat_sized(sb: &Sandbox, server: &MockModelServer, args: &[&str], size: (u16, u16)) -> Tmux {
    chat_in(sb, server, args, &[], size)
}

fn chat_in(
    sb: &Sandbox,
    server: &MockModelServer,
    args: &[&str],
    env: &[(&str, &str)],
    size: (u16, u16),
) -> Tmux {
    let tmux = start_chat(sb, server, args, env, size);
    tmux.wait_for_text("/help");
    tmux
}

/// [`chat_in`] without waiting for the chat to be ready.
fn start_chat(
    sb: &Sandbox,
    server: &MockModelServer,
    args: &[&str],
    env: &[(&str, &str)],
    size: (u16, u16),
) -> Tmux {
    let mut environment: Vec<(String, String)> = sb
        .environment()
        .into_iter()
        .map(|(k, v)| (k, v.display().to_string()))
        .collect();
    environment.push(("TERM".into(), "xterm-256color".into()));
    environment.push(("OPENAI_API_KEY".into(), "sk-e2e".into()));
    environment.push(("OPENAI_BASE_URL".into(), format!("{}/v1", server.url())));
    environment.extend(env.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())));
    let mut all_args = vec!["--model", "openai/gpt-4.1"];
    all_args.extend_from_slice(args);
    Tmux::start(
        crate::agentry_binary(),
        &all_args,
        &environment,
        &sb.project(),
        size,
    )
}

/// Whether the chat is idle: no status line spins and the input (the line under a rule)
/// is there.
fn idle(screen: &str) -> bool {
    let lines: Vec<&str> = screen.lines().collect();
    !screen.contains("ctrl-c to interrupt")
        && lines
            .windows(2)
            .any(|pair| pair[0].starts_with("────") && pair[1].starts_with('›'))
}

/// The screen with what changes from run to run (spinner frames, durations) replaced.
fn normalised(screen: &str) -> String {
    let spinner = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
    let is_duration = |word: &str| {
        let digits = word.trim_end_matches("ms").trim_end_matches('s');
        word.ends_with('s') && !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit())
    };
    let mut out = String::new();
    for line in screen.lines() {
        let words: Vec<String> = line
            .replace(spinner, "*")
            .split(' ')
            .map(|word| match word.strip_prefix('(') {
                Some(rest) if is_duration(rest) => "(<time>".to_owned(),
                _ if is_duration(word) => "<time>".to_owned(),
                _ => word.to_owned(),
            })
            .collect();
        out.push_str(&words.join(" "));
        out.push('\n');
    }
    out
}

/// Saves the terminal's screen as a PNG at `shot` (for the README): its styled capture as a
/// page, photographed by the tests' Chromium.
fn photograph(tmux: &Tmux, sb: &Sandbox, shot: &std::path::Path) {
    let page = sb.write(
        "terminal.html",
        &agentry_tests::terminal_page::page(&tmux.styled_screen(), SIZE.0),
    );
    let out = agentry_tests::peers::run_page_client(
        &json!({"url": format!("file://{}", page.display()),
            "steps": [{"op": "screenshot", "path": shot, "fit": "pre"}]}),
        sb.project().parent().unwrap(),
        std::time::Duration::from_secs(60),
    );
    assert!(out.of_kind("failed").is_empty(), "{:#?}", out.records);
}

#[test]
fn a_streamed_answer_renders_as_markdown_inline_and_stays_after_exit() {
    let sb = sandbox();
    let answer = "# Findings\n\nThe parser is **fine**; the `lexer` is not.\n\n\
                  1. Fix the lexer\n2. Add a test\n\n\
                  ```rust\nfn lex(input: &str) -> Vec<Token> {\n    todo()\n}\n```\n\n\
                  | file | lines |\n|---|---:|\n| lexer.rs | 120 |\n| parser.rs | 480 |\n";
    let mut reply = MockReply::text(answer);
    reply.piece = 3;
    let server = MockModelServer::start_blocking([MockTurn::Reply(reply)]);
    let tmux = chat(&sb, &server, &[], &[]);
    tmux.type_text("Review the parser");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("the whole answer and the input back", |s| {
        s.contains("parser.rs") && idle(s)
    });
    insta::assert_snapshot!("streamed_answer", normalised(&screen));
    if let Some(shot) = std::env::var_os("AGENTRY_TUI_SHOT") {
        photograph(&tmux, &sb, std::path::Path::new(&shot));
    }
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert!(
        requests[0].body["messages"]
            .to_string()
            .contains("Review the parser")
    );
    // Ctrl-D leaves; the exchange stays in the terminal (no alternate screen).
    tmux.keys(&["C-d"]);
    tmux.wait_for_text("[exited 0]");
    let after = tmux.everything();
    for kept in [
        "› Review the parser",
        "Findings",
        "2. Add a test",
        "fn lex(input: &str)",
        "parser.rs │   480",
    ] {
        assert!(
            after.contains(kept),
            "{kept:?} is gone after exit:\n{after}"
        );
    }
}

#[test]
fn a_forged_command_is_shown_as_it_is_and_a_long_one_whole_before_it_is_allowed() {
    let sb = sandbox();
    sb.write("project/victim", "");
    let forged = "rm -f victim \u{1b}[2K\r\u{1b}[1Aecho hello # \u{1b}]52;c;c3RvbGVu\u{7}";
    let long: String = (1..=40)
        .map(|n| format!("echo line{n}\n"))
        .chain(["rm -f victim".to_owned()])
        .collect();
    let server = MockModelServer::start_blocking([
        MockTurn::Reply(MockReply::tool_call(
            "call_1",
            "Bash",
            json!({"command": forged, "description": "Say hello"}),
        )),
        MockTurn::Reply(MockReply::text("Not allowed.")),
        MockTurn::Reply(MockReply::tool_call(
            "call_2",
            "Bash",
            json!({"command": long, "description": "Print lines"}),
        )),
        MockTurn::Reply(MockReply::text("Not allowed either.")),
    ]);
    let tmux = chat(&sb, &server, &[], &[]);
    tmux.accept_clipboard();
    tmux.type_text("Say hello");
    tmux.keys(&["Enter"]);
    let prompt = tmux.wait_for_text("Always reject Bash");
    assert!(
        prompt.contains("$ rm -f victim ␛[2K^M␛[1Aecho hello # ␛]52;c;c3RvbGVu^G"),
        "{prompt}"
    );
    assert_eq!(tmux.buffers(), "", "OSC 52 wrote the clipboard");
    tmux.keys(&["n"]);
    tmux.wait_for_text("Not allowed.");
    tmux.type_text("Print lines");
    tmux.keys(&["Enter"]);
    tmux.wait_for_text("all 41 are shown above");
    let everything = tmux.everything();
    assert!(
        everything.contains("Bash asks to run (41 lines):"),
        "{everything}"
    );
    for line in [
        "$ echo line1",
        "$ echo line20",
        "$ echo line40",
        "$ rm -f victim",
    ] {
        assert!(everything.contains(line), "{line} not shown:\n{everything}");
    }
    tmux.keys(&["n"]);
    tmux.wait_for_text("Not allowed either.");
    assert!(sb.project().join("victim").exists());
}

#[test]
fn an_untrusted_folder_is_asked_about_once_before_the_chat_starts() {
    let sb = sandbox();
    sb.write(
        "project/.agentry/config.toml",
        "permission_mode = \"bypass\"\n",
    );
    let untrusted = [("AGENTRY_TRUST", "0")];
    let server = || {
        MockModelServer::start_blocking([
            MockTurn::Reply(MockReply::tool_call(
                "call_1",
                "Bash",
                json!({"command": "touch made"}),
            )),
            MockTurn::Reply(MockReply::text("Made it.")),
        ])
    };
    // Declined: the chat runs without the folder's settings, and asks.
    let declined = server();
    let tmux = start_chat(&sb, &declined, &[], &untrusted, SIZE);
    let question = tmux.wait_for_text("Trust this folder? [y/N]");
    assert!(
        question.contains("the permission mode `bypass`"),
        "{question}"
    );
    tmux.keys(&["n", "Enter"]);
    tmux.wait_for_text("/help");
    tmux.type_text("Make it");
    tmux.keys(&["Enter"]);
    tmux.wait_for_text("Always reject Bash");
    tmux.keys(&["n"]);
    drop(tmux);
    assert!(!sb.project().join("made").exists());
    // Trusted: the folder's mode counts, and the answer is kept.
    let trusted = server();
    let tmux = start_chat(&sb, &trusted, &[], &untrusted, SIZE);
    tmux.wait_for_text("Trust this folder? [y/N]");
    tmux.keys(&["y", "Enter"]);
    tmux.wait_for_text("/help");
    tmux.type_text("Make it");
    tmux.keys(&["Enter"]);
    tmux.wait_for_text("Made it.");
    assert!(sb.project().join("made").exists());
    drop(tmux);
    let again = server();
    let tmux = start_chat(&sb, &again, &[], &untrusted, SIZE);
    let screen = tmux.wait_for_text("/help");
    assert!(!screen.contains("Trust this folder"), "{screen}");
}

#[test]
fn a_permission_prompt_is_answered_with_one_key() {
    let sb = sandbox();
    let server = MockModelServer::start_blocking([
        MockTurn::Reply(MockReply::tool_call(
            "call_1",
            "Bash",
            json!({"command": "echo made > made.txt && echo wrote it", "description": "Write made.txt"}),
        )),
        MockTurn::Reply(MockReply::text("The file is there.")),
    ]);
    let tmux = chat(&sb, &server, &[], &[]);
    tmux.type_text("Make the file");
    tmux.keys(&["Enter"]);
    let prompt = tmux.wait_for_text("Always reject Bash");
    insta::assert_snapshot!("permission_prompt", normalised(&prompt));
    assert!(
        !sb.project().join("made.txt").exists(),
        "it ran before the answer"
    );
    tmux.keys(&["y"]);
    let screen = tmux.wait_for("the answer after the call", |s| {
        s.contains("The file is there.") && idle(s)
    });
    insta::assert_snapshot!("permission_allowed", normalised(&screen));
    assert_eq!(
        std::fs::read_to_string(sb.project().join("made.txt")).unwrap(),
        "made\n"
    );
    assert!(tool_result_in(&server, 1).contains("wrote it"));
}

#[test]
fn a_question_is_answered_from_a_menu() {
    let sb = sandbox();
    let question = json!({"questions": [{
        "question": "Which database should the service use?",
        "header": "Database",
        "options": [
            {"label": "PostgreSQL", "description": "the team runs it already"},
            {"label": "SQLite", "description": "one file, no server"}
        ],
        "multiSelect": false
    }]});
    let server = MockModelServer::start_blocking([
        MockTurn::Reply(MockReply::tool_call("q", "AskUserQuestion", question)),
        MockTurn::Reply(MockReply::text("SQLite it is.")),
    ]);
    let tmux = chat(&sb, &server, &[], &[]);
    tmux.type_text("Set up storage");
    tmux.keys(&["Enter"]);
    tmux.wait_for_text("Type an answer");
    tmux.keys(&["Down"]);
    let menu = tmux.wait_for_text("❯ 2. SQLite");
    insta::assert_snapshot!("question_menu", normalised(&menu));
    tmux.keys(&["Enter"]);
    tmux.wait_for("the answer", |s| s.contains("SQLite it is.") && idle(s));
    let result = tool_result_in(&server, 1);
    assert!(result.contains("SQLite"), "{result}");
    assert!(!result.contains("PostgreSQL"), "{result}");
}

#[test]
fn ctrl_c_stops_a_running_command_and_gives_the_prompt_back() {
    let sb = sandbox();
    let server = MockModelServer::start_blocking([
        MockTurn::Reply(MockReply::tool_call(
            "call_1",
            "Bash",
            json!({"command": "echo $$ > pid.txt; sleep 30", "description": "Wait a long time"}),
        )),
        MockTurn::Reply(MockReply::text("unused")),
    ]);
    let tmux = chat(&sb, &server, &["--allow", "Bash"], &[]);
    tmux.type_text("Wait");
    tmux.keys(&["Enter"]);
    tmux.wait_for_text("ctrl-c to interrupt");
    let pid_file = sb.project().join("pid.txt");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while std::fs::read_to_string(&pid_file).map_or(true, |t| t.trim().is_empty()) {
        assert!(
            std::time::Instant::now() < deadline,
            "the command did not start"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    tmux.keys(&["C-c"]);
    let screen = tmux.wait_for("the turn cancelled and the input back", |s| {
        s.contains("Interrupted") && idle(s)
    });
    assert!(
        process_gone(pid),
        "the command's shell {pid} is still running"
    );
    insta::assert_snapshot!("interrupted", normalised(&screen));
    // The session stays open: the next message is sent.
    assert_eq!(server.requests().len(), 1);
    tmux.type_text("Go on");
    tmux.keys(&["Enter"]);
    tmux.wait_for("the next answer", |s| s.contains("unused") && idle(s));
}

#[test]
fn slash_commands_complete_and_run_without_colour_under_no_color() {
    let sb = sandbox();
    sb.write(
        "project/.agentry/prompts/review.md",
        "---\ndescription: Review a file\narguments:\n  - name: target\n    required: true\n---\nReview {{target}} carefully.\n",
    );
    let server = MockModelServer::start_blocking([MockTurn::Reply(MockReply::text("Reviewed."))]);
    let tmux = chat(&sb, &server, &[], &[("NO_COLOR", "1")]);
    tmux.type_text("/he");
    // The keys arrive one by one: the list is read once the composer shows all three (after
    // the `/` alone it lists every command).
    let completion = tmux.wait_for("the completion of /he", |s| {
        s.contains("› /he") && s.contains("/help  the commands and keys")
    });
    assert!(
        !completion.contains("/model"),
        "only commands starting /he:\n{completion}"
    );
    tmux.keys(&["Enter"]);
    // The whole frame: the help, then the composer and its status line, drawn last.
    let help = tmux.wait_for("the help and the composer under it", |s| {
        s.contains("ctrl-d") && idle(s) && s.trim_end().ends_with("· /help")
    });
    insta::assert_snapshot!("help", normalised(&help));
    let styled = tmux.styled_screen();
    assert!(
        !styled.contains("\u{1b}[38;5;"),
        "colours under NO_COLOR:\n{styled}"
    );
    tmux.type_text("/review src/lib.rs");
    tmux.keys(&["Enter"]);
    tmux.wait_for("the answer", |s| s.contains("Reviewed.") && idle(s));
    let sent = server.requests()[0].body["messages"].to_string();
    assert!(sent.contains("Review src/lib.rs carefully."), "{sent}");
}

#[test]
fn a_shell_command_and_an_attached_file_go_with_the_next_message() {
    let sb = sandbox();
    sb.write("project/notes.md", "the deadline is Friday\n");
    let server = MockModelServer::start_blocking([MockTurn::Reply(MockReply::text("Noted."))]);
    let tmux = chat(&sb, &server, &[], &[]);
    tmux.type_text("!echo from-the-shell; exit 3");
    tmux.keys(&["Enter"]);
    tmux.wait_for("the command's output", |s| {
        s.contains("from-the-shell") && s.contains("exit code 3")
    });
    tmux.type_text("Read @note");
    tmux.wait_for_text("@notes.md");
    tmux.keys(&["Tab"]);
    tmux.wait_for_text("› Read @notes.md");
    tmux.type_text("please");
    tmux.keys(&["Enter"]);
    tmux.wait_for("the answer", |s| s.contains("Noted.") && idle(s));
    let sent = server.requests()[0].body["messages"].to_string();
    assert!(
        sent.contains("<bash-input>echo from-the-shell; exit 3</bash-input>"),
        "{sent}"
    );
    assert!(sent.contains("from-the-shell"), "{sent}");
    assert!(
        sent.contains("the deadline is Friday"),
        "the file was not attached: {sent}"
    );
}

#[test]
fn the_chat_follows_the_terminal_when_it_is_resized() {
    let sb = sandbox();
    let server = MockModelServer::start_blocking([MockTurn::Reply(MockReply::text(
        "A sentence long enough to wrap differently at sixty columns than at eighty columns wide.",
    ))]);
    let tmux = chat(&sb, &server, &[], &[]);
    tmux.resize(60, 30);
    let rule_of = |width: usize| format!("\n{}\n›", "─".repeat(width));
    tmux.wait_for("the input box 60 columns wide", |s| {
        s.contains(&rule_of(60))
    });
    tmux.type_text("Say it");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("the answer", |s| s.contains("eighty") && idle(s));
    let lines: Vec<&str> = screen.lines().collect();
    assert!(lines.iter().all(|l| l.chars().count() <= 60), "{screen}");
    assert_eq!(screen.matches("Say it").count(), 1, "{screen}");
    insta::assert_snapshot!("resized", normalised(&screen));
}

#[test]
fn piped_input_runs_headless_like_agentry_run() {
    use std::io::Write;
    let sb = sandbox();
    let script = sb.script(
        "answer",
        &json!({"responses": [{"events": [{"text": "Piped answer."}]}]}),
    );
    let mut command = sb.agentry(&[
        "--model",
        &format!("scripted:{}", script.display()),
        "Summarise",
    ]);
    command
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped());
    let mut child = command.spawn().unwrap();
    child.stdin.take().unwrap().write_all(b"a diff\n").unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{output:?}");
    assert_eq!(
        String::from_utf8_lossy(&output.stdout).trim(),
        "Piped answer."
    );
}

#[test]
fn continue_takes_up_the_last_session_with_its_history_and_the_input_history() {
    let sb = sandbox();
    let server = MockModelServer::start_blocking([
        MockTurn::Reply(MockReply::text("The first answer.")),
        MockTurn::Reply(MockReply::text("The second answer.")),
    ]);
    let first = chat(&sb, &server, &[], &[]);
    first.type_text("The first question");
    first.keys(&["Enter"]);
    first.wait_for("the first answer", |s| {
        s.contains("The first answer.") && idle(s)
    });
    first.keys(&["C-c"]);
    first.wait_for_text("Press Ctrl-C again to leave");
    first.keys(&["C-c"]);
    first.wait_for_text("[exited 0]");
    drop(first);

    let second = chat(&sb, &server, &["--continue"], &[]);
    let screen = second.wait_for_text("The first answer.");
    assert!(screen.contains("Resuming session"), "{screen}");
    assert!(screen.contains("› The first question"), "{screen}");
    // The input history survived the restart.
    second.keys(&["Up"]);
    second.wait_for("the last message recalled", |s| {
        s.lines().filter(|l| *l == "› The first question").count() == 2
    });
    second.keys(&["C-u"]);
    second.type_text("And then?");
    second.keys(&["Enter"]);
    second.wait_for("the second answer", |s| {
        s.contains("The second answer.") && idle(s)
    });
    // The model got the whole conversation.
    let sent = server.requests()[1].body["messages"].to_string();
    assert!(
        sent.contains("The first question") && sent.contains("The first answer."),
        "{sent}"
    );
}

#[test]
fn a_pasted_text_keeps_its_lines_and_is_sent_whole() {
    let sb = sandbox();
    let server = MockModelServer::start_blocking([MockTurn::Reply(MockReply::text("Got both."))]);
    let tmux = chat(&sb, &server, &[], &[]);
    tmux.type_text("Compare:");
    tmux.keys(&["M-Enter"]);
    tmux.paste("first pasted line\nsecond pasted line");
    let screen = tmux.wait_for_text("second pasted line");
    assert!(
        screen.contains("› Compare:\n  first pasted line\n  second pasted line"),
        "{screen}"
    );
    assert_eq!(server.requests().len(), 0, "a pasted newline does not send");
    tmux.keys(&["Enter"]);
    tmux.wait_for("the answer", |s| s.contains("Got both.") && idle(s));
    let sent = server.requests()[0].body["messages"].to_string();
    assert!(
        sent.contains(r"Compare:\nfirst pasted line\nsecond pasted line"),
        "{sent}"
    );
}

#[test]
fn the_sandbox_is_shown_and_switched_for_the_session_with_a_slash_command() {
    let sb = sandbox();
    let server = MockModelServer::start_blocking([
        MockTurn::Reply(MockReply::tool_call(
            "c1",
            "Bash",
            json!({"command": "echo x > inside.txt"}),
        )),
        MockTurn::Reply(MockReply::text("Tried.")),
    ]);
    let tmp = sb.project().parent().unwrap().join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let tmux = chat(
        &sb,
        &server,
        &["--allow", "Bash"],
        &[("TMPDIR", &tmp.display().to_string())],
    );
    tmux.type_text("/sandbox");
    tmux.keys(&["Enter"]);
    tmux.wait_for_text("● workspace-write");
    tmux.type_text("/sandbox read-only");
    tmux.keys(&["Enter"]);
    tmux.wait_for_text("Sandbox: read-only.");
    tmux.type_text("write the file");
    tmux.keys(&["Enter"]);
    tmux.wait_for("the answer", |s| s.contains("Tried.") && idle(s));
    assert!(!sb.project().join("inside.txt").exists());
    let result = tool_result_in(&server, 1);
    assert!(result.contains("in the read-only sandbox"), "{result}");
}

#[test]
fn a_chat_left_without_a_message_stores_no_session() {
    let sb = sandbox();
    let server = MockModelServer::start_blocking([MockTurn::Reply(MockReply::text("Stored now."))]);
    let empty = chat(&sb, &server, &[], &[]);
    empty.keys(&["C-c"]);
    empty.wait_for_text("Press Ctrl-C again to leave");
    empty.keys(&["C-c"]);
    empty.wait_for_text("[exited 0]");
    drop(empty);
    let listed = sb.run(&["sessions", "--json"]).json();
    assert_eq!(listed, json!([]), "an empty chat was stored");

    let used = chat(&sb, &server, &[], &[]);
    used.type_text("Keep this one");
    used.keys(&["Enter"]);
    used.wait_for("the answer", |s| s.contains("Stored now.") && idle(s));
    let listed = sb.run(&["sessions", "--json"]).json();
    let sessions = listed.as_array().unwrap();
    assert_eq!(sessions.len(), 1, "{listed}");
    assert_eq!(sessions[0]["title"], "Keep this one", "{listed}");
}

#[test]
fn the_status_line_shows_what_the_chat_costs_and_cost_lists_the_session_by_model() {
    let sb = sandbox();
    sb.write("project/notes.md", "hello\n");
    // Each answer: a million prompt tokens, $2 on GPT-4.1; the second is slow to finish, so
    // the status line is read while it streams.
    let mut call = MockReply::tool_call("call_1", "Read", json!({"file_path": "notes.md"}));
    call.usage = [1_000_000, 0, 0, 0];
    let mut answer = MockReply::text("The notes say hello.");
    answer.usage = [1_000_000, 0, 0, 0];
    answer.piece = 5;
    answer.pause_before_last = Some(std::time::Duration::from_millis(2_500));
    let server = MockModelServer::start_blocking([MockTurn::Reply(call), MockTurn::Reply(answer)]);
    let tmux = chat(&sb, &server, &[], &[]);
    tmux.type_text("What do the notes say?");
    tmux.keys(&["Enter"]);
    let running = tmux.wait_for("the status line with the first answer's cost", |s| {
        s.contains("tokens · $2.00)")
    });
    assert!(running.contains("↑ 1.0M"), "{running}");
    tmux.wait_for("the answer", |s| {
        s.contains("The notes say hello.") && idle(s)
    });
    tmux.type_text("/cost");
    tmux.keys(&["Enter"]);
    let cost = tmux.wait_for("the session's cost", |s| s.contains("Total: $4.00"));
    assert!(
        cost.contains("openai/gpt-4.1") && cost.contains("$4.00 · 2 requests · ↑ 2.0M"),
        "{cost}"
    );
}

#[test]
fn compact_with_instructions_summarises_and_says_what_it_kept() {
    let sb = sandbox();
    let server = MockModelServer::start_blocking([
        MockTurn::Reply(MockReply::text("The parser lives in src/parse.rs.")),
        MockTurn::Reply(MockReply::text("We found the parser in src/parse.rs.")),
    ]);
    let tmux = chat(&sb, &server, &[], &[]);
    tmux.type_text("Where is the parser?");
    tmux.keys(&["Enter"]);
    tmux.wait_for("the answer", |s| s.contains("src/parse.rs.") && idle(s));
    tmux.type_text("/compact Keep the file names.");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("the compaction's report", |s| {
        s.contains("The conversation was compacted as asked") && idle(s)
    });
    assert!(
        screen.contains("2 earlier messages were summarised"),
        "{screen}"
    );
    let asked = server.requests()[1].body["messages"].to_string();
    assert!(
        asked.contains("The user's instructions for this summary: Keep the file names."),
        "{asked}"
    );
}

#[test]
fn an_automatic_compaction_is_shown_with_what_it_kept() {
    let sb = sandbox();
    let server = crate::compaction::pruning_in_a_small_window(&sb, "openai");
    let tmux = chat(&sb, &server, &[], &[]);
    tmux.type_text("What is in big.txt?");
    tmux.keys(&["Enter"]);
    tmux.wait_for("the first answer", |s| {
        s.contains("It repeats one line.") && idle(s)
    });
    tmux.type_text("And now?");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("the second answer", |s| {
        s.contains("Still one line.") && idle(s)
    });
    assert!(
        screen.contains("The conversation was compacted: 1 older tool results were replaced"),
        "{screen}"
    );
}
