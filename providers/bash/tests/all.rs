//! The shell tools, called through agentry's executor, with the process table checked.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use agentry::event::ToolCallStatus::*;
use agentry::permission::{PermissionMode, PermissionPolicy, PermissionRule, RuleAction};
use agentry::testing::{CallOutcome, ToolHarness};
use agentry::tool::ToolContent;
use agentry_bash::Shell;
use serde_json::json;
use std::time::{Duration, Instant};

#[path = "all/corpus.rs"]
mod corpus;
#[path = "all/rules.rs"]
mod rules;

fn harness(dir: &tempfile::TempDir) -> ToolHarness {
    ToolHarness::new(&Shell::default(), dir.path()).unwrap()
}

async fn bash(h: &ToolHarness, command: &str) -> CallOutcome {
    h.call("Bash", json!({"command": command})).await
}

/// Processes whose command line contains `marker` (other than this test process).
fn processes_with(marker: &str) -> Vec<String> {
    let me = std::process::id().to_string();
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let pid = entry.file_name().into_string().ok()?;
            if !pid.chars().all(|c| c.is_ascii_digit()) || pid == me {
                return None;
            }
            let cmdline = std::fs::read(entry.path().join("cmdline")).ok()?;
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            cmdline
                .contains(marker)
                .then(|| format!("{pid}: {cmdline}"))
        })
        .collect()
}

/// Waits (at most 3 s) until no process carries `marker`.
async fn assert_none_left(marker: &str) {
    for _ in 0..300 {
        if processes_with(marker).is_empty() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("processes left running: {:?}", processes_with(marker));
}

#[tokio::test]
async fn exit_1_of_grep_diff_and_test_is_an_answer_not_a_failed_call() {
    let dir = tempfile::tempdir().unwrap();
    let h = harness(&dir);
    std::fs::write(dir.path().join("a.txt"), "one\n").unwrap();
    std::fs::write(dir.path().join("b.txt"), "two\n").unwrap();
    let none = bash(&h, "grep zebra a.txt").await;
    assert_eq!(none.statuses(), [Pending, InProgress, Completed]);
    assert_eq!(none.text(), "(no output)\nExit code 1 (no lines matched)");
    let differ = bash(&h, "diff a.txt b.txt > /dev/null").await;
    assert_eq!(differ.statuses(), [Pending, InProgress, Completed]);
    assert!(
        differ.text().ends_with("Exit code 1 (the files differ)"),
        "{}",
        differ.text()
    );
    let test = bash(&h, "[ -d a.txt ]").await;
    assert!(
        test.text()
            .ends_with("Exit code 1 (the condition is false)")
    );
    // Exit 2 from grep is an error, and exit 1 from anything else a failure.
    let missing = bash(&h, "grep zebra nowhere.txt").await;
    assert_eq!(missing.statuses(), [Pending, InProgress, Failed]);
    assert!(
        missing.text().ends_with("Exit code 2"),
        "{}",
        missing.text()
    );
    let other = bash(&h, "false").await;
    assert_eq!(other.statuses(), [Pending, InProgress, Failed]);
}

#[tokio::test]
async fn exit_codes_end_the_output_and_a_failure_is_a_failed_call() {
    let dir = tempfile::tempdir().unwrap();
    let h = harness(&dir);
    let ok = bash(&h, "echo hello").await;
    assert_eq!(ok.statuses(), [Pending, InProgress, Completed]);
    assert_eq!(ok.text(), "hello\nExit code 0");
    let failed = bash(&h, "echo partial; exit 3").await;
    assert_eq!(failed.statuses(), [Pending, InProgress, Failed]);
    assert_eq!(failed.text(), "partial\nExit code 3");
    assert!(matches!(
        failed.content().first(),
        Some(ToolContent::Terminal { .. })
    ));
}

#[tokio::test]
async fn commands_run_in_a_real_terminal_with_a_quiet_environment() {
    let dir = tempfile::tempdir().unwrap();
    let h = harness(&dir);
    let text = bash(&h, "test -t 1 && echo is-a-tty; echo \"$TERM $NO_COLOR $PAGER $GIT_PAGER\"; printf '\\033[31mred\\033[0m\\r\\n'").await.text();
    assert_eq!(text, "is-a-tty\ndumb 1 cat cat\nred\nExit code 0");
}

#[tokio::test]
async fn the_working_directory_persists_and_the_environment_does_not() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    let h = harness(&dir);
    bash(&h, "cd sub && export FOO=bar").await;
    let text = bash(&h, "pwd; echo ${FOO:-unset}").await.text();
    let sub = dir.path().canonicalize().unwrap().join("sub");
    assert_eq!(text, format!("{}\nunset\nExit code 0", sub.display()));
    // A failing command still moves the directory it reached.
    bash(&h, "cd .. && false").await;
    assert!(bash(&h, "pwd").await.text().starts_with(&format!(
        "{}\n",
        dir.path().canonicalize().unwrap().display()
    )));
    // So does one that exits, with its own exit code.
    let exited = bash(&h, "cd sub && exit 3").await.text();
    assert!(exited.ends_with("Exit code 3"), "{exited}");
    assert!(
        bash(&h, "pwd")
            .await
            .text()
            .starts_with(&format!("{}\n", sub.display()))
    );
    // A here-document left open reads nothing of the tool's own.
    let open = bash(&h, "cd .. && cat <<EOF\nbody").await.text();
    assert!(!open.contains("agentry"), "{open}");
    assert!(bash(&h, "pwd").await.text().starts_with(&format!(
        "{}\n",
        dir.path().canonicalize().unwrap().display()
    )));
}

#[tokio::test]
async fn a_timeout_stops_the_whole_process_group_including_background_children_and_pipes() {
    let dir = tempfile::tempdir().unwrap();
    let h = harness(&dir);
    let started = Instant::now();
    let outcome = h
        .call(
            "Bash",
            json!({"command": "echo started; sleep 987651 & sleep 987652 | cat", "timeout": 400}),
        )
        .await;
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(outcome.statuses(), [Pending, InProgress, Failed]);
    let text = outcome.text();
    assert!(
        text.contains("started") && text.contains("timed out after 400 ms"),
        "{text}"
    );
    assert_none_left("98765").await;
}

#[tokio::test]
async fn cancelling_stops_the_command_and_everything_it_started() {
    let dir = tempfile::tempdir().unwrap();
    let h = harness(&dir);
    let cancel = tokio_util::sync::CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        trigger.cancel();
    });
    let outcome = h
        .call_with(
            "Bash",
            json!({"command": "sleep 987653 & sleep 987654 | cat"}),
            cancel,
        )
        .await;
    assert_eq!(outcome.statuses(), [Pending, InProgress, Failed]);
    assert!(
        outcome
            .text()
            .contains("Cancelled by the user while running")
    );
    assert_none_left("98765").await;
}

#[tokio::test]
async fn leftover_background_children_do_not_outlive_a_finished_command() {
    let dir = tempfile::tempdir().unwrap();
    let h = harness(&dir);
    let started = Instant::now();
    let outcome = bash(&h, "sleep 987655 & echo done").await;
    assert_eq!(outcome.text(), "done\nExit code 0");
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_none_left("987655").await;
}

#[tokio::test]
async fn huge_output_reaches_the_model_as_head_and_tail_within_the_cap() {
    let dir = tempfile::tempdir().unwrap();
    let h = harness(&dir);
    let text = bash(&h, "seq 1 2000000").await.text();
    assert!(text.len() < 31_000, "{} characters", text.len());
    assert!(text.starts_with("1\n2\n3\n"));
    assert!(text.ends_with("1999999\n2000000\nExit code 0"));
    // The rest is not lost: it is in a file in the session's temporary folder.
    let marker = "the whole output is in ";
    let path = text[text.find(marker).unwrap() + marker.len()..]
        .split(" (Read it")
        .next()
        .unwrap();
    assert!(path.starts_with(h.state().existing_temp_dir().unwrap().to_str().unwrap()));
    let saved = std::fs::read_to_string(path).unwrap();
    let expected: String = (1..=2_000_000).map(|i| format!("{i}\n")).collect();
    assert!(
        saved == expected,
        "the saved output differs ({} bytes)",
        saved.len()
    );
}

#[tokio::test]
async fn a_commands_saved_output_and_the_sessions_folder_are_the_users_alone_whatever_the_umask() {
    use std::os::unix::fs::PermissionsExt;
    // Each test is a process of its own (nextest), so the umask is this test's.
    nix::sys::stat::umask(nix::sys::stat::Mode::empty());
    let dir = tempfile::tempdir().unwrap();
    let h = harness(&dir);
    let text = bash(&h, "seq 1 200000").await.text();
    let marker = "the whole output is in ";
    let path = text[text.find(marker).unwrap() + marker.len()..]
        .split(" (Read it")
        .next()
        .unwrap();
    let mode =
        |path: &std::path::Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(std::path::Path::new(path)), 0o600, "{path}");
    let folder = h.state().existing_temp_dir().unwrap();
    assert_eq!(mode(&folder), 0o700, "{}", folder.display());
}

#[tokio::test]
async fn a_command_longer_than_one_argument_may_be_is_refused_with_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let h = harness(&dir);
    let long = format!("echo {}", "x".repeat(200_000));
    for command in [
        json!({"command": long}),
        json!({"command": long, "run_in_background": true}),
    ] {
        let outcome = h.call("Bash", command).await;
        assert_eq!(outcome.statuses().last(), Some(&Failed));
        assert!(
            outcome
                .text()
                .contains("more than the 131072 one program argument may hold"),
            "{}",
            outcome.text()
        );
    }
}

#[tokio::test]
async fn output_streams_to_the_front_end_while_the_command_runs() {
    let dir = tempfile::tempdir().unwrap();
    let h = harness(&dir);
    let outcome = bash(&h, "for i in 1 2 3; do echo line$i; sleep 0.4; done").await;
    let progress = outcome.progress();
    assert!(matches!(
        progress[0].content.as_deref(),
        Some([ToolContent::Terminal { .. }])
    ));
    let partial = progress.iter().any(|u| {
        u.content.iter().flatten().any(
            |c| matches!(c.model_text(), Some(t) if t.contains("line1") && !t.contains("line3")),
        )
    });
    assert!(partial, "no update showed output before the command ended");
    // Each update also counts the lines so far, for front-ends to show as progress.
    let counts: Vec<u64> = progress
        .iter()
        .filter_map(|u| u.raw_output.as_ref()?.get("output_lines")?.as_u64())
        .collect();
    assert!(counts.contains(&1), "{counts:?}");
    assert!(counts.windows(2).all(|w| w[0] <= w[1]), "{counts:?}");
}

#[tokio::test]
async fn background_commands_report_new_output_and_stop_on_request_or_with_the_session() {
    let dir = tempfile::tempdir().unwrap();
    let h = harness(&dir);
    let started = h
        .call("Bash", json!({"command": "for i in $(seq 1 40); do echo tick$i; sleep 0.05; done; sleep 987656", "run_in_background": true}))
        .await;
    assert!(
        started
            .text()
            .starts_with("Started bash_1 in the background."),
        "{}",
        started.text()
    );
    tokio::time::sleep(Duration::from_millis(600)).await;
    let first = h
        .call("TaskOutput", json!({"task_id": "bash_1", "block": false}))
        .await
        .text();
    assert!(
        first.contains("tick1\n")
            && first.contains("[bash_1 is still running; its whole output is in "),
        "{first}"
    );
    tokio::time::sleep(Duration::from_millis(1800)).await;
    // The earlier name and field, which never waited, still do not.
    let asked = Instant::now();
    let second = h
        .call(
            "BashOutput",
            json!({"bash_id": "bash_1", "filter": "^tick4"}),
        )
        .await
        .text();
    assert!(asked.elapsed() < Duration::from_secs(5));
    assert!(!second.contains("tick1\n"), "already read: {second}");
    assert!(second.contains("tick40"), "{second}");
    assert!(
        second
            .lines()
            .all(|l| l.starts_with("tick4") || l.starts_with('[')),
        "{second}"
    );
    let stopped = h.call("KillShell", json!({"shell_id": "bash_1"})).await;
    assert!(
        stopped.text().starts_with("Stopped bash_1"),
        "{}",
        stopped.text()
    );
    assert_none_left("987656").await;
    let gone = h.call("TaskOutput", json!({"task_id": "bash_1"})).await;
    assert!(gone.result.is_error);
    assert!(
        gone.text()
            .contains("There is no background command `bash_1`"),
        "{}",
        gone.text()
    );
    // Stopped by the model: nothing to tell it.
    assert!(h.state().notices().take().is_empty());

    h.call(
        "Bash",
        json!({"command": "sleep 987657", "run_in_background": true}),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!processes_with("987657").is_empty());
    drop(h);
    assert_none_left("987657").await;
}

#[tokio::test]
async fn task_output_waits_for_the_end_or_its_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let h = harness(&dir);
    h.call(
        "Bash",
        json!({"command": "sleep 0.5; echo finished; exit 3", "run_in_background": true}),
    )
    .await;
    let waited = h.call("TaskOutput", json!({"task_id": "bash_1"})).await;
    assert_eq!(waited.statuses(), [Pending, InProgress, Completed]);
    let text = waited.text();
    assert!(
        text.starts_with("finished\n[bash_1 exited with code 3; its whole output is in "),
        "{text}"
    );
    let raw = waited
        .final_update()
        .and_then(|u| u.raw_output.clone())
        .unwrap();
    assert_eq!(raw["exit_code"], 3);
    // The model read the ending itself: no notice repeats it.
    assert!(h.state().notices().take().is_empty());

    h.call(
        "Bash",
        json!({"command": "echo begun; sleep 987658", "run_in_background": true}),
    )
    .await;
    let asked = Instant::now();
    let waited = h
        .call("TaskOutput", json!({"task_id": "bash_2", "timeout": "400"}))
        .await;
    assert!(asked.elapsed() >= Duration::from_millis(400));
    assert!(
        waited.text().starts_with("begun\n[bash_2 is still running"),
        "{}",
        waited.text()
    );
    let stopped = h.call("TaskStop", json!({"task_id": "bash_2"})).await;
    assert!(stopped.text().starts_with("Stopped bash_2"));
    assert_none_left("987658").await;
}

#[tokio::test]
async fn the_model_is_told_when_a_background_command_it_did_not_wait_for_ends() {
    let dir = tempfile::tempdir().unwrap();
    let h = harness(&dir);
    h.call(
        "Bash",
        json!({"command": "echo built; exit 0", "run_in_background": true}),
    )
    .await;
    let mut notices = Vec::new();
    for _ in 0..300 {
        notices = h.state().notices().take();
        if !notices.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(
        notices,
        [
            "Background command bash_1 (`echo built; exit 0`) exited with code 0. Read its output \
          with TaskOutput (task_id: \"bash_1\")."
        ]
    );
    let stopped = h.call("TaskStop", json!({"task_id": "bash_1"})).await;
    assert_eq!(
        stopped.text(),
        "bash_1 had already ended: it exited with code 0 (echo built; exit 0)."
    );
}

#[tokio::test]
async fn a_background_commands_whole_output_is_in_its_file() {
    let dir = tempfile::tempdir().unwrap();
    let h = harness(&dir);
    h.call(
        "Bash",
        json!({"command": "seq 1 300000", "run_in_background": true}),
    )
    .await;
    let text = h
        .call("TaskOutput", json!({"task_id": "bash_1"}))
        .await
        .text();
    assert!(text.contains(" characters omitted …]"), "{text:.200}");
    let path = text
        .rsplit_once("its whole output is in ")
        .unwrap()
        .1
        .trim_end_matches(']');
    let saved = std::fs::read_to_string(path).unwrap();
    let expected: String = (1..=300_000).map(|i| format!("{i}\n")).collect();
    assert!(
        saved == expected,
        "the saved output differs ({} bytes)",
        saved.len()
    );
}

#[tokio::test]
async fn bash_always_goes_through_the_policy_where_prefixes_can_be_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let policy =
        |rules: Vec<PermissionRule>| PermissionPolicy::new(PermissionMode::AcceptEdits, rules);
    let asking = harness(&dir).with_policy(policy(vec![]));
    let refused = asking
        .call(
            "Bash",
            json!({"command": "echo hi", "description": "Say hi"}),
        )
        .await;
    assert!(refused.result.is_error && refused.text().contains("nobody can be asked"));
    assert!(!refused.text().contains("rejected"), "{}", refused.text());
    assert_eq!(refused.announced().unwrap().title, "echo hi — Say hi");
    // What the user is asked about is the command, whatever the model calls it.
    let disguised = asking
        .call(
            "Bash",
            json!({"command": "rm -f victim", "description": "List files"}),
        )
        .await;
    assert!(
        disguised
            .announced()
            .unwrap()
            .title
            .starts_with("rm -f victim")
    );
    let allowed = harness(&dir).with_policy(policy(vec![
        PermissionRule::parse(RuleAction::Allow, "Bash(echo:*)").unwrap(),
    ]));
    assert_eq!(
        allowed
            .call("Bash", json!({"command": "echo hi"}))
            .await
            .text(),
        "hi\nExit code 0"
    );
    assert!(
        allowed
            .call("Bash", json!({"command": "echo hi && touch x"}))
            .await
            .result
            .is_error
    );
    assert!(!dir.path().join("x").exists());
}
