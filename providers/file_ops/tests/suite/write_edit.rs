//! Write, Edit and MultiEdit: read-before-write, staleness, atomicity, diffs.

use super::*;
use serde_json::json;
use std::os::unix::fs::{MetadataExt, PermissionsExt};

#[tokio::test]
async fn writing_a_new_file_creates_its_folders_and_reports_a_diff_from_nothing() {
    let ws = Workspace::new();
    let outcome = ws
        .call(
            "Write",
            json!({"file_path": "deep/er/new.txt", "content": "hello\n"}),
        )
        .await;
    assert!(ok(&outcome).starts_with("Created"));
    assert_eq!(ws.read("deep/er/new.txt"), "hello\n");
    assert_eq!(
        diff(&outcome),
        (
            ws.root().join("deep/er/new.txt"),
            None,
            "hello\n".to_owned()
        )
    );
    let mode = std::fs::metadata(ws.root().join("deep/er/new.txt"))
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(
        mode & 0o600,
        0o600,
        "the owner can read and write a new file: {mode:o}"
    );
    assert_ne!(
        mode, 0o600,
        "a new file is not left private like a temporary file: {mode:o}"
    );
}

#[tokio::test]
async fn overwriting_needs_a_read_and_an_unchanged_file() {
    let ws = Workspace::new();
    ws.write("a.txt", "one\n");
    let refused = err(&ws
        .call("Write", json!({"file_path": "a.txt", "content": "two\n"}))
        .await);
    assert!(
        refused.contains("has not been read in this session"),
        "{refused}"
    );
    assert_eq!(ws.read("a.txt"), "one\n");

    ok(&ws.call("Read", json!({"file_path": "a.txt"})).await);
    let written = ws
        .call("Write", json!({"file_path": "a.txt", "content": "two\n"}))
        .await;
    assert_eq!(diff(&written).1.as_deref(), Some("one\n"));
    assert_eq!(ws.read("a.txt"), "two\n");

    // Another program changes it: the session must read it again.
    ws.write("a.txt", "changed elsewhere, and longer\n");
    let stale = err(&ws
        .call("Write", json!({"file_path": "a.txt", "content": "three\n"}))
        .await);
    assert!(
        stale.contains("changed on disk since it was last read"),
        "{stale}"
    );
    let stale_edit = err(&ws
        .call(
            "Edit",
            json!({"file_path": "a.txt", "old_string": "changed", "new_string": "x"}),
        )
        .await);
    assert!(stale_edit.contains("changed on disk"), "{stale_edit}");
    assert_eq!(ws.read("a.txt"), "changed elsewhere, and longer\n");
}

#[tokio::test]
async fn writes_replace_the_file_atomically_and_keep_its_mode() {
    let ws = Workspace::new();
    let path = ws.write("run.sh", "#!/bin/sh\necho old\n");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o751)).unwrap();
    // A second name for the old file: an in-place write would change it too.
    std::fs::hard_link(&path, ws.root().join("old-link")).unwrap();
    let inode = std::fs::metadata(&path).unwrap().ino();
    ok(&ws.call("Read", json!({"file_path": "run.sh"})).await);
    ok(&ws
        .call(
            "Write",
            json!({"file_path": "run.sh", "content": "#!/bin/sh\necho new\n"}),
        )
        .await);
    assert_eq!(ws.read("run.sh"), "#!/bin/sh\necho new\n");
    assert_eq!(ws.read("old-link"), "#!/bin/sh\necho old\n");
    assert_ne!(
        std::fs::metadata(&path).unwrap().ino(),
        inode,
        "replaced by a rename"
    );
    assert_eq!(
        std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
        0o751
    );
    let leftovers: Vec<_> = std::fs::read_dir(ws.root())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with(".agentry-write-"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// Run in a child process of this test binary: a file-size limit makes the write fail halfway.
const FAILING_WRITE: &str = "AGENTRY_FAILING_WRITE_DIR";

#[tokio::test]
async fn a_write_that_fails_halfway_leaves_the_old_file_whole() {
    if let Ok(dir) = std::env::var(FAILING_WRITE) {
        use nix::sys::resource::{Resource, setrlimit};
        use nix::sys::signal::{SigHandler, Signal, signal};
        // SAFETY: ignoring SIGXFSZ makes an over-limit write fail with EFBIG instead of
        // killing the process; nothing else in this child process handles that signal.
        #[allow(unsafe_code)]
        unsafe {
            signal(Signal::SIGXFSZ, SigHandler::SigIgn).unwrap();
        }
        let harness = ToolHarness::new(&FileOps::default(), &dir).unwrap();
        ok(&harness.call("Read", json!({"file_path": "data.txt"})).await);
        setrlimit(Resource::RLIMIT_FSIZE, 4096, 4096).unwrap();
        let failed = err(&harness
            .call(
                "Write",
                json!({"file_path": "data.txt", "content": "n".repeat(100_000)}),
            )
            .await);
        assert!(failed.contains("cannot write"), "{failed}");
        return;
    }
    let ws = Workspace::new();
    ws.write("data.txt", "precious old content\n");
    let status = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "suite::write_edit::a_write_that_fails_halfway_leaves_the_old_file_whole",
            "--nocapture",
        ])
        .env(FAILING_WRITE, ws.root())
        .status()
        .unwrap();
    assert!(
        status.success(),
        "the child's write did not fail as expected"
    );
    assert_eq!(ws.read("data.txt"), "precious old content\n");
    let names: Vec<_> = std::fs::read_dir(ws.root())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["data.txt"], "the temporary file was not cleaned up");
}

#[tokio::test]
async fn edit_errors_say_what_went_wrong_and_how_many_matches_there_were() {
    let ws = Workspace::new();
    ws.write("f.py", "x = 1\ny = 2\nx = 1\n");
    assert!(
        err(&ws
            .call(
                "Edit",
                json!({"file_path": "f.py", "old_string": "x", "new_string": "z"})
            )
            .await)
        .contains("has not been read")
    );
    ok(&ws.call("Read", json!({"file_path": "f.py"})).await);
    let cases = [
        (
            json!({"old_string": "q = 9", "new_string": "z"}),
            "was not found",
        ),
        (
            json!({"old_string": "x = 1", "new_string": "x = 2"}),
            "occurs 2 times",
        ),
        (
            json!({"old_string": "y = 2", "new_string": "y = 2"}),
            "the same",
        ),
        (
            json!({"old_string": "", "new_string": "y"}),
            "old_string is empty",
        ),
    ];
    for (mut input, expected) in cases {
        input["file_path"] = json!("f.py");
        let message = err(&ws.call("Edit", input).await);
        assert!(message.contains(expected), "{expected}: {message}");
    }
    assert!(
        err(&ws
            .call(
                "Edit",
                json!({"file_path": "missing.py", "old_string": "a", "new_string": "b"})
            )
            .await)
        .contains("use Write")
    );
    assert_eq!(ws.read("f.py"), "x = 1\ny = 2\nx = 1\n");
}

#[tokio::test]
async fn edits_replace_report_a_diff_and_point_at_the_first_changed_line() {
    let ws = Workspace::new();
    ws.write("f.py", "a = 0\nx = 1\ny = 2\nx = 1\n");
    ok(&ws.call("Read", json!({"file_path": "f.py"})).await);
    let edited = ws
        .call(
            "Edit",
            json!({"file_path": "f.py", "old_string": "y = 2", "new_string": "y = 3"}),
        )
        .await;
    let text = ok(&edited);
    assert!(text.contains("     3\ty = 3"), "{text}");
    assert_eq!(edited.announced().unwrap().locations[0].line, Some(3));
    assert_eq!(
        diff(&edited),
        (
            ws.root().join("f.py"),
            Some("a = 0\nx = 1\ny = 2\nx = 1\n".into()),
            "a = 0\nx = 1\ny = 3\nx = 1\n".into()
        )
    );
    // Our own write keeps the file fresh for the next edit.
    ok(&ws.call("Edit", json!({"file_path": "f.py", "old_string": "x = 1", "new_string": "x = 5", "replace_all": true})).await);
    assert_eq!(ws.read("f.py"), "a = 0\nx = 5\ny = 3\nx = 5\n");
}

#[tokio::test]
async fn multi_edit_applies_in_order_and_is_all_or_nothing() {
    let ws = Workspace::new();
    ws.write("m.txt", "alpha beta gamma\n");
    ok(&ws.call("Read", json!({"file_path": "m.txt"})).await);
    let failing = err(&ws
        .call(
            "MultiEdit",
            json!({"file_path": "m.txt", "edits": [
                {"old_string": "alpha", "new_string": "ALPHA"},
                {"old_string": "delta", "new_string": "DELTA"}
            ]}),
        )
        .await);
    assert!(
        failing.contains("edit 2 of 2") && failing.contains("No edit was applied"),
        "{failing}"
    );
    assert_eq!(ws.read("m.txt"), "alpha beta gamma\n");
    let done = ws
        .call(
            "MultiEdit",
            json!({"file_path": "m.txt", "edits": [
                {"old_string": "alpha", "new_string": "beta"},
                {"old_string": "beta beta", "new_string": "two betas"}
            ]}),
        )
        .await;
    ok(&done);
    assert_eq!(ws.read("m.txt"), "two betas gamma\n");
    assert_eq!(done.announced().unwrap().title, "Edit m.txt (2 changes)");
}

#[tokio::test]
async fn a_crlf_file_is_edited_as_read_shows_it_and_keeps_its_line_endings() {
    let ws = Workspace::new();
    ws.write("win.txt", "first\r\nsecond\r\nthird\r\n");
    let read = ok(&ws.call("Read", json!({"file_path": "win.txt"})).await);
    assert!(
        !read.contains('\r'),
        "Read shows no carriage returns: {read:?}"
    );
    // A multi-line old_string copied from Read (LF only).
    let edited = ws
        .call(
            "Edit",
            json!({"file_path": "win.txt", "old_string": "first\nsecond", "new_string": "one\ntwo\nthree"}),
        )
        .await;
    assert!(ok(&edited).starts_with("Edited"), "{}", ok(&edited));
    assert_eq!(ws.read("win.txt"), "one\r\ntwo\r\nthree\r\nthird\r\n");
    let multi = ws
        .call(
            "MultiEdit",
            json!({"file_path": "win.txt", "edits": [
                {"old_string": "two\nthree", "new_string": "2\n3"},
                {"old_string": "third\n", "new_string": "last\n"}
            ]}),
        )
        .await;
    ok(&multi);
    assert_eq!(ws.read("win.txt"), "one\r\n2\r\n3\r\nlast\r\n");
    // A file that mixes endings is matched byte for byte and left as it was elsewhere.
    ws.write("mixed.txt", "a\r\nb\nc\r\n");
    ok(&ws.call("Read", json!({"file_path": "mixed.txt"})).await);
    ok(&ws
        .call(
            "Edit",
            json!({"file_path": "mixed.txt", "old_string": "b", "new_string": "B"}),
        )
        .await);
    assert_eq!(ws.read("mixed.txt"), "a\r\nB\nc\r\n");
}

#[tokio::test]
async fn straight_quotes_match_curly_ones_when_the_exact_text_is_absent_and_the_result_says_so() {
    let ws = Workspace::new();
    ws.write(
        "note.md",
        "He said \u{201C}hello\u{201D} and it\u{2019}s fine.\n",
    );
    ok(&ws.call("Read", json!({"file_path": "note.md"})).await);
    let edited = ws
        .call(
            "Edit",
            json!({"file_path": "note.md", "old_string": "\"hello\" and it's", "new_string": "\"bye\" and it's"}),
        )
        .await;
    let text = ok(&edited);
    assert!(
        text.contains("quotes are curly where yours were straight"),
        "{text}"
    );
    assert_eq!(ws.read("note.md"), "He said \"bye\" and it's fine.\n");
    // Where the exact text is there, nothing is said.
    let exact = ws
        .call(
            "Edit",
            json!({"file_path": "note.md", "old_string": "fine", "new_string": "good"}),
        )
        .await;
    assert!(!ok(&exact).contains("curly"));
}

#[tokio::test]
async fn an_empty_old_string_creates_a_missing_file_and_is_refused_on_an_existing_one() {
    let ws = Workspace::new();
    let created = ws
        .call(
            "Edit",
            json!({"file_path": "new/made.rs", "old_string": "", "new_string": "fn main() {}\n"}),
        )
        .await;
    assert!(ok(&created).starts_with("Created"), "{}", ok(&created));
    assert_eq!(ws.read("new/made.rs"), "fn main() {}\n");
    assert_eq!(diff(&created).1, None, "a diff from nothing");
    // The file was written by this session, so it may be edited at once.
    ok(&ws
        .call(
            "Edit",
            json!({"file_path": "new/made.rs", "old_string": "main", "new_string": "start"}),
        )
        .await);
    let refused = err(&ws
        .call(
            "Edit",
            json!({"file_path": "new/made.rs", "old_string": "", "new_string": "x"}),
        )
        .await);
    assert!(
        refused.contains("old_string is empty") && refused.contains("exists"),
        "{refused}"
    );
    assert_eq!(ws.read("new/made.rs"), "fn start() {}\n");
}

#[tokio::test]
async fn edit_takes_old_str_new_str_and_path_as_claude_code_does() {
    let ws = Workspace::new();
    ws.write("a.txt", "alpha\n");
    ok(&ws.call("Read", json!({"file_path": "a.txt"})).await);
    ok(&ws
        .call(
            "Edit",
            json!({"path": "a.txt", "old_str": "alpha", "new_str": "beta", "replace_all": "false"}),
        )
        .await);
    assert_eq!(ws.read("a.txt"), "beta\n");
}
