//! Glob and Grep.

use super::*;
use serde_json::json;
use std::time::{Duration, SystemTime};

fn touch(path: &Path, seconds_ago: u64) {
    let file = std::fs::File::options().write(true).open(path).unwrap();
    file.set_modified(SystemTime::now() - Duration::from_secs(seconds_ago))
        .unwrap();
}

/// A small repository: sources, an ignored build folder, a hidden file, a binary, and git's
/// own folder with a file that would match.
fn project() -> Workspace {
    let ws = Workspace::new();
    ws.write(".git/hooks/answer.rs", "fn answer() {}\n");
    ws.write(".gitignore", "target/\n*.log\n");
    ws.write(
        "src/main.rs",
        "fn main() {\n    let answer = 42;\n    println!(\"{answer}\");\n}\n",
    );
    ws.write(
        "src/lib.rs",
        "pub fn Answer() -> u32 {\n    42\n}\n\npub fn other() {}\n",
    );
    ws.write(
        "src/util/mod.rs",
        "// helpers\npub fn answer_twice() -> u32 { 84 }\n",
    );
    ws.write("docs/notes.md", "The answer is 42.\n");
    ws.write("target/debug/gen.rs", "fn answer() {}\n");
    ws.write("debug.log", "answer in a log\n");
    ws.write(".hidden.rs", "fn answer() {}\n");
    ws.write("data.bin", b"answer\x00\x01\x02");
    for (file, age) in [
        (".hidden.rs", 50),
        ("src/main.rs", 300),
        ("src/lib.rs", 100),
        ("src/util/mod.rs", 200),
        ("docs/notes.md", 400),
    ] {
        touch(&ws.root().join(file), age);
    }
    ws
}

#[tokio::test]
async fn glob_lists_newest_first_with_hidden_files_and_honours_ignore_files() {
    let ws = project();
    let text = ok(&ws.call("Glob", json!({"pattern": "**/*.rs"})).await);
    let root = ws.root();
    // The hidden file is listed; git's folder and the ignored build folder are not.
    let expected = [".hidden.rs", "src/lib.rs", "src/util/mod.rs", "src/main.rs"]
        .map(|p| rel(&root, p))
        .join("\n")
        + "\n";
    assert_eq!(text, expected);
    let in_src = ok(&ws
        .call("Glob", json!({"pattern": "*.rs", "path": "src"}))
        .await);
    assert_eq!(
        in_src,
        ["src/lib.rs", "src/main.rs"]
            .map(|p| rel(&root, p))
            .join("\n")
            + "\n",
        "`*` does not cross folders"
    );
    assert!(
        ok(&ws.call("Glob", json!({"pattern": "**/*.zig"})).await).starts_with("No files found")
    );
    assert!(
        err(&ws.call("Glob", json!({"pattern": "src/[oops"})).await).contains("not a valid glob")
    );
}

#[tokio::test]
async fn gitignore_counts_inside_a_repository_and_dot_ignore_everywhere() {
    let ws = Workspace::new();
    ws.write(".gitignore", "/*\n");
    ws.write(".ignore", "skip.txt\n");
    ws.write("keep.txt", "x");
    ws.write("skip.txt", "x");
    let text = ok(&ws.call("Glob", json!({"pattern": "*.txt"})).await);
    assert_eq!(
        text,
        format!("{}\n", rel(&ws.root(), "keep.txt")),
        "outside a repository .gitignore is not git's"
    );
    std::fs::create_dir(ws.root().join(".git")).unwrap();
    assert!(ok(&ws.call("Glob", json!({"pattern": "*.txt"})).await).starts_with("No files found"));
}

#[tokio::test]
async fn glob_caps_its_list_and_says_how_many_were_left_out() {
    let ws = Workspace::with_config(agentry_file_ops::FileOpsConfig {
        max_glob_results: 3,
        ..Default::default()
    });
    for i in 0..10 {
        ws.write(&format!("f{i}.txt"), "x");
    }
    let text = ok(&ws.call("Glob", json!({"pattern": "*.txt"})).await);
    assert_eq!(text.lines().count(), 4);
    assert!(text.ends_with("(7 more files not shown: narrow the pattern or the path.)\n"));
}

#[tokio::test]
async fn grep_files_with_matches_is_the_default_newest_first_with_hidden_skipping_ignored_vcs_and_binary()
 {
    let ws = project();
    let text = ok(&ws.call("Grep", json!({"pattern": "answer"})).await);
    let root = ws.root();
    let newest_first = [
        ".hidden.rs",
        "src/util/mod.rs",
        "src/main.rs",
        "docs/notes.md",
    ];
    assert_eq!(text, newest_first.map(|p| rel(&root, p)).join("\n") + "\n");
    let insensitive = ok(&ws
        .call("Grep", json!({"pattern": "answer", "-i": true}))
        .await);
    let with_lib = [
        ".hidden.rs",
        "src/lib.rs",
        "src/util/mod.rs",
        "src/main.rs",
        "docs/notes.md",
    ];
    assert_eq!(
        insensitive,
        with_lib.map(|p| rel(&root, p)).join("\n") + "\n"
    );
}

#[tokio::test]
async fn grep_content_mode_with_line_numbers_and_context() {
    let ws = project();
    let root = ws.root();
    let text = ok(&ws
        .call(
            "Grep",
            json!({"pattern": "42", "output_mode": "content", "-C": 1, "type": "rust"}),
        )
        .await);
    let lib = rel(&root, "src/lib.rs");
    let main = rel(&root, "src/main.rs");
    let expected = format!(
        "{lib}-1-pub fn Answer() -> u32 {{\n{lib}:2:    42\n{lib}-3-}}\n--\n{main}-1-fn main() {{\n{main}:2:    let answer = 42;\n{main}-3-    println!(\"{{answer}}\");\n"
    );
    assert_eq!(text, expected);
    let plain = ok(&ws
        .call(
            "Grep",
            json!({"pattern": "42", "output_mode": "content", "-n": false, "glob": "*.md"}),
        )
        .await);
    assert_eq!(
        plain,
        format!("{}:The answer is 42.\n", rel(&root, "docs/notes.md"))
    );
    let single = ok(&ws
        .call(
            "Grep",
            json!({"pattern": "fn", "path": "src/lib.rs", "output_mode": "content", "-A": 1}),
        )
        .await);
    assert_eq!(
        single,
        "1:pub fn Answer() -> u32 {\n2-    42\n--\n5:pub fn other() {}\n"
    );
}

#[tokio::test]
async fn grep_counts_pages_and_matches_across_lines() {
    let ws = project();
    let root = ws.root();
    let counts = ok(&ws
        .call("Grep", json!({"pattern": "pub fn", "output_mode": "count"}))
        .await);
    assert_eq!(
        counts,
        format!(
            "{}:2\n{}:1\n",
            rel(&root, "src/lib.rs"),
            rel(&root, "src/util/mod.rs")
        )
    );
    let page = ok(&ws.call("Grep", json!({"pattern": "answer", "-i": true, "output_mode": "content", "head_limit": 2, "offset": 1})).await);
    assert_eq!(page.lines().count(), 3, "{page}");
    // Six matching lines by path: .hidden.rs:1, notes.md:1, lib.rs:1, main.rs:2, main.rs:3,
    // util/mod.rs:2.
    assert!(
        page.starts_with(&format!(
            "{}:1:The answer is 42.",
            rel(&root, "docs/notes.md")
        )),
        "{page}"
    );
    assert!(
        page.ends_with("(3 more lines not shown: page on with offset 3.)\n"),
        "{page}"
    );
    let across = ok(&ws
        .call(
            "Grep",
            json!({"pattern": r"u32 \{\n\s+42", "multiline": true, "output_mode": "content"}),
        )
        .await);
    assert_eq!(
        across,
        format!(
            "{lib}:1:pub fn Answer() -> u32 {{\n{lib}:2:    42\n",
            lib = rel(&root, "src/lib.rs")
        )
    );
}

#[tokio::test]
async fn grep_rejects_bad_patterns_and_types_clearly() {
    let ws = project();
    assert!(
        err(&ws.call("Grep", json!({"pattern": "(unclosed"})).await).contains("not a valid regex")
    );
    assert!(
        err(&ws
            .call("Grep", json!({"pattern": "x", "type": "klingon"}))
            .await)
        .contains("not a known file type")
    );
    assert!(
        ok(&ws.call("Grep", json!({"pattern": "zebra"})).await).starts_with("No matches found")
    );
}

#[tokio::test]
async fn an_absolute_glob_searches_from_its_fixed_folder() {
    let ws = project();
    let root = ws.root();
    let pattern = format!("{}/src/**/*.rs", root.display());
    let text = ok(&ws.call("Glob", json!({"pattern": pattern})).await);
    assert_eq!(
        text,
        ["src/lib.rs", "src/util/mod.rs", "src/main.rs"]
            .map(|p| rel(&root, p))
            .join("\n")
            + "\n"
    );
    // It names where it looks, for the permission check and the editor.
    let outcome = ws.call("Glob", json!({"pattern": pattern})).await;
    assert_eq!(
        outcome.announced().unwrap().locations[0].path,
        root.canonicalize().unwrap().join("src")
    );
    let exact = format!("{}/docs/notes.md", root.display());
    assert_eq!(
        ok(&ws.call("Glob", json!({"pattern": exact})).await),
        format!("{}\n", rel(&root, "docs/notes.md"))
    );
}

#[tokio::test]
async fn grep_takes_claude_codes_spellings_strings_for_numbers_and_several_globs() {
    let ws = project();
    let root = ws.root();
    let text = ok(&ws
        .call(
            "Grep",
            json!({"pattern": "42", "output_mode": "content", "context": "1", "-i": "true", "glob": "*.md, lib.rs", "head_limit": "3"}),
        )
        .await);
    let notes = rel(&root, "docs/notes.md");
    let lib = rel(&root, "src/lib.rs");
    assert_eq!(
        text,
        format!(
            "{notes}:1:The answer is 42.\n--\n{lib}-1-pub fn Answer() -> u32 {{\n(2 more lines not shown: page on with offset 3.)\n"
        )
    );
    let unknown = err(&ws
        .call("Grep", json!({"pattern": "42", "contexts": 1}))
        .await);
    assert!(
        unknown.contains("Grep takes no `contexts`; its fields are: -A, -B, -C, -i, -n, glob"),
        "{unknown}"
    );
}
