//! Read, Write and Edit through the front-end client's files (an editor with unsaved buffers),
//! when the client offers them.

use super::*;
use agentry::tool::{ClientFiles, ClientServices};
use futures::future::BoxFuture;
use serde_json::json;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// An editor's buffers: what the client would answer `fs/*` with.
#[derive(Default)]
struct Buffers(Mutex<HashMap<PathBuf, String>>);

impl Buffers {
    fn set(&self, path: PathBuf, text: &str) {
        self.0.lock().unwrap().insert(path, text.to_owned());
    }
    fn get(&self, path: &Path) -> Option<String> {
        self.0.lock().unwrap().get(path).cloned()
    }
}

struct Editor(Arc<Buffers>);

impl ClientFiles for Editor {
    fn read_text_file(&self, path: PathBuf) -> BoxFuture<'static, Result<String, String>> {
        let text = self
            .0
            .get(&path)
            .ok_or_else(|| format!("{} is not open", path.display()));
        Box::pin(async move { text })
    }
    fn write_text_file(
        &self,
        path: PathBuf,
        text: String,
    ) -> BoxFuture<'static, Result<(), String>> {
        self.0.set(path, &text);
        Box::pin(async { Ok(()) })
    }
}

fn editor_workspace() -> (Workspace, Arc<Buffers>) {
    let dir = tempfile::tempdir().unwrap();
    let buffers = Arc::new(Buffers::default());
    let client = ClientServices {
        files: Some(Arc::new(Editor(buffers.clone()))),
        ..ClientServices::default()
    };
    let harness = ToolHarness::new(&FileOps::default(), dir.path())
        .unwrap()
        .with_client(client);
    (Workspace { dir, harness }, buffers)
}

#[tokio::test]
async fn reads_see_the_editors_unsaved_text_and_edits_go_to_the_editor() {
    let (ws, buffers) = editor_workspace();
    let file = ws.write("main.rs", "fn main() {}\n");
    buffers.set(file.clone(), "fn main() {\n    todo()\n}\n");
    let read = ok(&ws.call("Read", json!({"file_path": "main.rs"})).await);
    assert!(read.contains("     2\t    todo()"), "{read}");
    let edit = ws
        .call(
            "Edit",
            json!({"file_path": "main.rs", "old_string": "todo()", "new_string": "run()"}),
        )
        .await;
    ok(&edit);
    assert_eq!(buffers.get(&file).unwrap(), "fn main() {\n    run()\n}\n");
    assert_eq!(
        ws.read("main.rs"),
        "fn main() {}\n",
        "the disk is the editor's business"
    );
    assert_eq!(diff(&edit).1.unwrap(), "fn main() {\n    todo()\n}\n");
}

#[tokio::test]
async fn a_buffer_changed_since_it_was_read_is_not_overwritten() {
    let (ws, buffers) = editor_workspace();
    let file = ws.write("notes.md", "old\n");
    buffers.set(file.clone(), "draft\n");
    ok(&ws.call("Read", json!({"file_path": "notes.md"})).await);
    buffers.set(file.clone(), "typed meanwhile\n");
    let stale = err(&ws
        .call(
            "Write",
            json!({"file_path": "notes.md", "content": "mine\n"}),
        )
        .await);
    assert!(stale.contains("changed in the editor"), "{stale}");
    assert_eq!(buffers.get(&file).unwrap(), "typed meanwhile\n");
}

#[tokio::test]
async fn new_files_are_created_through_the_editor() {
    let (ws, buffers) = editor_workspace();
    let outcome = ws
        .call(
            "Write",
            json!({"file_path": "fresh.txt", "content": "hi\n"}),
        )
        .await;
    assert!(ok(&outcome).starts_with("Created"));
    assert_eq!(buffers.get(&ws.root().join("fresh.txt")).unwrap(), "hi\n");
}
