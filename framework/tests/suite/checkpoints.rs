//! Checkpoints taken by chats (before their first change, never for a chat that only reads),
//! kept with the session, and what a rewind to them plans: the files to restore and those
//! changed by hand since.

use super::support::*;
use agentry::agent::RewindScope;
use agentry::checkpoint::Change;
use agentry::model::scripted::ScriptedResponse;
use agentry::permission::{PermissionMode, PermissionPolicy};
use agentry::session::{MemoryStore, SessionStore};
use agentry::tool::{Tool, ToolContext, ToolError, ToolKind, ToolOutput, erase};
use agentry_checkpoint::CheckpointSettings;
use serde_json::json;
use std::sync::Arc;

/// An edit tool that writes `changed by the agent` to its path.
struct Scribble;

impl Tool for Scribble {
    type Input = PathInput;
    type Output = ToolOutput;

    fn name(&self) -> &str {
        "Scribble"
    }
    fn description(&self) -> String {
        "Writes to a file.".into()
    }
    fn kind(&self) -> ToolKind {
        ToolKind::Edit
    }
    fn title(&self, input: &PathInput) -> String {
        format!("Scribble {}", input.path)
    }
    async fn call(&self, input: PathInput, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        std::fs::write(ctx.cwd.join(&input.path), "changed by the agent\n")
            .map_err(|e| ToolError::failed(e.to_string()))?;
        Ok(ToolOutput::text("written"))
    }
}

#[tokio::test]
async fn a_chat_checkpoints_before_its_first_change_and_a_rewind_plan_names_hand_edits() {
    let data = tempfile::tempdir().unwrap();
    let store: Arc<dyn SessionStore> = Arc::new(MemoryStore::new());
    let mut h = harness([
        response([call("l", "Look", json!({"path": "a.txt"}))]),
        ScriptedResponse::text("looked"),
        response([call("s", "Scribble", json!({"path": "a.txt"}))]),
        ScriptedResponse::text("scribbled"),
    ])
    .store(store.clone())
    .tool(erase(Scribble))
    .policy(PermissionPolicy {
        mode: PermissionMode::Bypass,
        ..PermissionPolicy::default()
    })
    .checkpoints(CheckpointSettings::in_folder(
        data.path().join("checkpoints"),
    ))
    .build();
    std::fs::write(h.dir.path().join("a.txt"), "as it was\n").unwrap();
    h.prompt("look").await.unwrap();
    h.prompt("scribble").await.unwrap();
    let id = h.session.id().clone();
    let chats = store.load(&id).unwrap().chats;
    assert_eq!(chats.len(), 2);
    assert_eq!(
        chats[0].checkpoint, None,
        "a chat that only reads takes none"
    );
    let checkpoint = chats[1].checkpoint.clone().expect("the changing chat's");
    assert!(checkpoint.after.is_some());
    assert_ne!(Some(&checkpoint.before), checkpoint.after.as_ref());

    let points = h.session.rewind_points().unwrap();
    let prompts: Vec<(&str, bool)> = points
        .iter()
        .map(|p| (p.prompt.as_str(), p.files_changed))
        .collect();
    assert_eq!(prompts, [("look", true), ("scribble", true)]);
    let plan = h.session.plan_rewind(&points[1].chat).await.unwrap();
    assert_eq!(plan.files.len(), 1);
    assert_eq!(plan.files[0].path, "a.txt");
    assert_eq!(plan.files[0].change, Change::Modified);
    assert!(plan.hand_edited.is_empty());

    // A hand edit after the chat: planned as such, and kept by a rewind that is not told
    // to overwrite it; the conversation is cut all the same.
    std::fs::write(h.dir.path().join("a.txt"), "by hand\n").unwrap();
    let plan = h.session.plan_rewind(&points[1].chat).await.unwrap();
    assert!(plan.files.is_empty());
    assert_eq!(plan.hand_edited.len(), 1);
    let rewound = h
        .session
        .rewind(&points[1].chat, RewindScope::BOTH, false)
        .await
        .unwrap();
    assert!(rewound.conversation);
    assert!(rewound.files.is_empty());
    assert_eq!(
        std::fs::read_to_string(h.dir.path().join("a.txt")).unwrap(),
        "by hand\n"
    );
    assert_eq!(
        h.session.history().len(),
        4,
        "the first chat's four messages"
    );
    assert_eq!(h.session.rewind_points().unwrap().len(), 1);
}
