//! Read.

use super::*;
use agentry::permission::{PermissionMode, PermissionPolicy};
use agentry::tool::ContentBlock;
use serde_json::json;

#[tokio::test]
async fn lines_come_numbered_like_cat_n_with_the_location_at_the_first_line() {
    let ws = Workspace::new();
    ws.write("src/a.rs", "fn main() {\n\tprintln!(\"hi\");\n}\n");
    let outcome = ws.call("Read", json!({"file_path": "src/a.rs"})).await;
    assert_eq!(
        ok(&outcome),
        "     1\tfn main() {\n     2\t\tprintln!(\"hi\");\n     3\t}\n"
    );
    let announced = outcome.announced().unwrap();
    assert_eq!(announced.title, "Read src/a.rs");
    assert_eq!(announced.locations[0].path, ws.root().join("src/a.rs"));
    assert_eq!(announced.locations[0].line, Some(1));
}

#[tokio::test]
async fn offset_and_limit_page_through_and_say_where_they_are() {
    let ws = Workspace::new();
    let text: String = (1..=10).map(|i| format!("line {i}\n")).collect();
    ws.write("ten.txt", &text);
    let outcome = ws
        .call(
            "Read",
            json!({"file_path": "ten.txt", "offset": 4, "limit": 3}),
        )
        .await;
    assert_eq!(
        ok(&outcome),
        "     4\tline 4\n     5\tline 5\n     6\tline 6\n(Showing lines 4–6 of 10; read on with offset 7.)\n"
    );
    assert_eq!(outcome.announced().unwrap().locations[0].line, Some(4));
    let past = ws
        .call("Read", json!({"file_path": "ten.txt", "offset": 50}))
        .await;
    assert!(ok(&past).contains("has 10 lines; offset 50 is past its end"));
    ws.write("empty.txt", "");
    assert!(ok(&ws.call("Read", json!({"file_path": "empty.txt"})).await).contains("is empty"));
}

#[tokio::test]
async fn long_lines_are_cut_and_2000_lines_is_the_default() {
    let ws = Workspace::new();
    ws.write("wide.txt", format!("{}\n", "x".repeat(2500)));
    let text = ok(&ws.call("Read", json!({"file_path": "wide.txt"})).await);
    assert!(text.contains(&format!(
        "{}… [line cut: 500 more characters]",
        "x".repeat(2000)
    )));
    let many: String = (1..=2500).map(|i| format!("{i}\n")).collect();
    ws.write("many.txt", &many);
    let text = ok(&ws.call("Read", json!({"file_path": "many.txt"})).await);
    assert!(
        text.contains("  2000\t2000\n(Showing lines 1–2000 of 2500; read on with offset 2001.)")
    );
}

#[tokio::test]
async fn images_come_back_as_image_content_the_model_sees() {
    let ws = Workspace::new();
    // A 1x1 PNG.
    let png: &[u8] = &[
        0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48, 0x44, 0x52, 0,
        0, 0, 1, 0, 0, 0, 1, 8, 6, 0, 0, 0, 0x1f, 0x15, 0xc4, 0x89, 0, 0, 0, 0x0a, 0x49, 0x44,
        0x41, 0x54, 0x78, 0x9c, 0x63, 0, 1, 0, 0, 5, 0, 1, 0x0d, 0x0a, 0x2d, 0xb4, 0, 0, 0, 0,
        0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
    ];
    ws.write("dot.png", png);
    let outcome = ws.call("Read", json!({"file_path": "dot.png"})).await;
    assert!(ok(&outcome).contains("image/png"));
    let image = outcome.result.content.iter().find_map(|c| match c {
        ContentBlock::Image { data, mime_type } => Some((data.clone(), mime_type.clone())),
        _ => None,
    });
    let (data, mime_type) = image.expect("the model gets the image");
    assert_eq!(mime_type, "image/png");
    assert!(data.starts_with("iVBORw0KGgo"));
}

#[tokio::test]
async fn binaries_directories_missing_and_huge_files_are_clear_errors() {
    let ws = Workspace::with_config(agentry_file_ops::FileOpsConfig {
        max_read_bytes: 1024,
        ..Default::default()
    });
    ws.write("blob.bin", [0u8, 159, 146, 150, 0, 1]);
    assert!(err(&ws.call("Read", json!({"file_path": "blob.bin"})).await).contains("binary file"));
    std::fs::create_dir(ws.root().join("dir")).unwrap();
    assert!(err(&ws.call("Read", json!({"file_path": "dir"})).await).contains("is a directory"));
    assert!(
        err(&ws.call("Read", json!({"file_path": "nope.txt"})).await).contains("does not exist")
    );
    ws.write("big.txt", "y\n".repeat(2000));
    let refused = err(&ws.call("Read", json!({"file_path": "big.txt"})).await);
    assert!(refused.contains("offset and limit"), "{refused}");
    assert!(
        ok(&ws
            .call("Read", json!({"file_path": "big.txt", "offset": 1990}))
            .await)
        .contains("  2000\ty")
    );
}

#[tokio::test]
async fn a_symlink_out_of_the_workspace_is_seen_for_what_it_is_and_asks() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), "secret").unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), dir.path().join("escape")).unwrap();
    // The default policy lets reads inside the workspace run; this one points outside.
    let harness = ToolHarness::new(&FileOps::default(), dir.path())
        .unwrap()
        .with_policy(PermissionPolicy::new(PermissionMode::Default, vec![]));
    let outcome = harness
        .call("Read", json!({"file_path": "escape/secret.txt"}))
        .await;
    let announced = outcome.announced().unwrap();
    assert_eq!(
        announced.locations[0].path,
        outside.path().canonicalize().unwrap().join("secret.txt")
    );
    assert!(
        outcome
            .events
            .iter()
            .any(|e| matches!(e, agentry::event::AgentEvent::PermissionResolved { .. }))
    );
    assert!(err(&outcome).contains("nobody can be asked"));
    assert!(!outcome.text().contains("secret\n"));
    let inside = harness
        .call("Read", json!({"file_path": "escape/../escape"}))
        .await;
    assert!(
        inside
            .events
            .iter()
            .any(|e| matches!(e, agentry::event::AgentEvent::PermissionResolved { .. }))
    );
}
