//! The session store failing while a turn is written — the disk full (a file size limit), the
//! store read-only, the database locked by another process — is a clear error, and the store
//! keeps what it had: the next run finds the earlier chats whole and goes on.

use crate::sandbox;
use agentry_tests::{Outcome, Sandbox};
use serde_json::json;

/// A session with one finished chat (`first` → `first answer`); its id.
fn session_with_one_chat(sb: &Sandbox) -> String {
    let script = sb.script(
        "first",
        &json!({"responses": [{"events": [{"text": "first answer"}]}]}),
    );
    let out = sb.run_scripted(&script, &["--output-format", "json", "first"]);
    assert_eq!(out.code, Some(0), "{out:?}");
    out.json()["session_id"].as_str().unwrap().to_owned()
}

/// `agentry run --resume ID PROMPT` with a model that answers `answer`, its command changed by
/// `fault` before it runs.
fn resume(
    sb: &Sandbox,
    id: &str,
    prompt: &str,
    answer: &str,
    fault: impl FnOnce(&mut std::process::Command),
) -> Outcome {
    let script = sb.script(
        "next",
        &json!({"responses": [{"events": [{"text": answer}]}]}),
    );
    let model = format!("scripted:{}", script.display());
    let mut command = sb.agentry(&[
        "run",
        "--model",
        &model,
        "--resume",
        id,
        "--output-format",
        "json",
        prompt,
    ]);
    fault(&mut command);
    Outcome::of(command)
}

/// The stored prompts and answers of session `id`, in order, after an integrity check.
fn stored_texts(sb: &Sandbox, id: &str) -> Vec<String> {
    let db = rusqlite::Connection::open(sb.database()).unwrap();
    let check: String = db
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok");
    let mut rows = db
        .prepare(
            "SELECT m.body FROM messages m JOIN chats c ON c.id = m.chat_id \
             WHERE c.session_id = ?1 ORDER BY c.id, m.seq",
        )
        .unwrap();
    rows.query_map([id], |r| r.get::<_, String>(0))
        .unwrap()
        .map(|content| {
            let content: serde_json::Value = serde_json::from_str(&content.unwrap()).unwrap();
            content.to_string().chars().take(60).collect()
        })
        .collect()
}

/// Checks the failed run said `expected` and left the store as it was (but for the failed
/// chat's prompt, recorded before the failure); then a sound run goes on.
fn failed_cleanly(sb: &Sandbox, id: &str, out: &Outcome, before: &[String], expected: &str) {
    assert_eq!(
        out.code,
        Some(1),
        "the store failing is an internal error: {out:?}"
    );
    assert!(
        out.stderr.contains("session store") && out.stderr.contains(expected),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
    let kept = stored_texts(sb, id);
    assert_eq!(kept[..before.len()], *before, "the store kept what it had");
    assert!(
        kept[before.len()..]
            .iter()
            .all(|text| text.contains("second")),
        "{kept:?}"
    );
    let next = resume(sb, id, "third", "third answer", |_| {});
    assert_eq!(next.code, Some(0), "{next:?}");
    assert_eq!(next.json()["result"], "third answer");
    let after = stored_texts(sb, id);
    assert_eq!(after[..kept.len()], *kept);
    assert_eq!(after.len(), kept.len() + 2);
}

#[test]
fn a_full_disk_while_writing_a_turn_is_a_clear_error_and_loses_nothing() {
    let sb = sandbox();
    let id = session_with_one_chat(&sb);
    let before = stored_texts(&sb, &id);
    let largest = ["sessions.db", "sessions.db-wal"]
        .iter()
        .filter_map(|file| std::fs::metadata(sb.database().with_file_name(file)).ok())
        .map(|meta| meta.len())
        .max()
        .unwrap();
    assert!(largest < 1 << 20, "{largest}");
    // No file may grow past its current size plus a little: the prompt is written, the 2 MB
    // answer cannot be. (With SIGXFSZ ignored, as a process that handles it does, a write past
    // the limit fails with EFBIG as it would with ENOSPC on a full disk.)
    let limit = format!("--fsize={0}:{0}", largest + 64 * 1024);
    let answer = "a long answer ".repeat(150_000);
    let out = resume(&sb, &id, "second", &answer, |command| {
        launched_by(
            &sb,
            command,
            &[
                "sh",
                "-c",
                "trap '' XFSZ; exec prlimit \"$0\" \"$@\"",
                &limit,
            ],
        );
    });
    // SQLite says "database or disk is full" (ENOSPC) or "disk I/O error" (EFBIG).
    failed_cleanly(&sb, &id, &out, &before, "disk");
}

#[test]
fn a_locked_store_is_a_clear_error_and_loses_nothing() {
    let sb = sandbox();
    let id = session_with_one_chat(&sb);
    let before = stored_texts(&sb, &id);
    let holder = rusqlite::Connection::open(sb.database()).unwrap();
    holder.execute_batch("BEGIN EXCLUSIVE").unwrap();
    let out = resume(&sb, &id, "second", "never stored", |_| {});
    holder.execute_batch("ROLLBACK").unwrap();
    drop(holder);
    failed_cleanly(&sb, &id, &out, &before, "locked");
}

#[test]
fn a_read_only_store_is_a_clear_error_and_loses_nothing() {
    let sb = sandbox();
    let id = session_with_one_chat(&sb);
    let before = stored_texts(&sb, &id);
    // The data folder mounted read-only for this run (a mount namespace of its own, so root
    // is refused too).
    let data = sb.database().parent().unwrap().display().to_string();
    let remount = "mount --bind \"$0\" \"$0\" && mount -o remount,bind,ro \"$0\" && exec \"$@\"";
    let out = resume(&sb, &id, "second", "never stored", |command| {
        launched_by(
            &sb,
            command,
            &[
                "unshare",
                "--user",
                "--map-root-user",
                "--mount",
                "sh",
                "-c",
                remount,
                &data,
            ],
        );
    });
    failed_cleanly(&sb, &id, &out, &before, "not writable");
}

/// Replaces `command` (an `agentry` command of `sb`) by `launcher` followed by it: the launcher
/// changes the process's conditions, then runs the binary with its arguments.
fn launched_by(sb: &Sandbox, command: &mut std::process::Command, launcher: &[&str]) {
    let mut launched = std::process::Command::new(launcher[0]);
    launched
        .args(&launcher[1..])
        .arg(command.get_program())
        .args(command.get_args())
        .current_dir(sb.project())
        .env_clear()
        .envs(sb.environment())
        .stdin(std::process::Stdio::null());
    *command = launched;
}
