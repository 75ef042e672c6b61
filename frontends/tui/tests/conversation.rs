//! The conversation's projection of the event stream: what is kept in the scrollback and what
//! stays live, without a terminal.
#![allow(clippy::unwrap_used, missing_docs)]

use agentry::event::{
    AgentEvent, Role, ToolCallSnapshot, ToolCallStatus, ToolCallUpdate, TurnStatus,
};
use agentry::tool::{ToolContent, ToolKind};
use agentry_tui::Palette;
use agentry_tui::conversation::Conversation;
use serde_json::json;
use std::time::Duration;

fn text(lines: &[ratatui::text::Line<'static>]) -> String {
    lines.iter().map(|l| format!("{l}\n")).collect()
}

fn turn(id: &str, parent: Option<&str>) -> AgentEvent {
    AgentEvent::TurnStarted {
        turn_id: id.into(),
        role: Role::Assistant,
        status: TurnStatus::Streaming,
        parent_fork_tool_call_id: parent.map(Into::into),
        loop_id: parent.map_or("root".to_owned(), |p| format!("loop_{p}")),
        started_at: None,
    }
}

fn call(
    id: &str,
    turn: &str,
    name: &str,
    title: &str,
    kind: ToolKind,
    input: serde_json::Value,
) -> AgentEvent {
    AgentEvent::ToolCall(ToolCallSnapshot {
        tool_call_id: id.into(),
        turn_id: turn.into(),
        tool_name: name.into(),
        title: title.into(),
        kind,
        status: ToolCallStatus::Pending,
        raw_input: input,
        locations: Vec::new(),
    })
}

fn update(id: &str, status: ToolCallStatus, content: Vec<ToolContent>) -> AgentEvent {
    AgentEvent::ToolCallUpdate(ToolCallUpdate {
        content: Some(content),
        ..ToolCallUpdate::status(id.into(), status)
    })
}

#[test]
fn thinking_is_folded_and_an_edit_shows_its_diff() {
    let mut conversation = Conversation::new(Palette::new(false), 60);
    conversation.apply(&turn("t1", None));
    let thinking =
        "First I read the file.\nThen I find the bug.\nThen I fix it.\nThen I test.\nDone.";
    conversation.apply(&AgentEvent::ThinkingDelta {
        turn_id: "t1".into(),
        text: thinking.into(),
    });
    conversation.apply(&AgentEvent::TextDelta {
        turn_id: "t1".into(),
        text: "Fixing it.".into(),
    });
    conversation.apply(&call(
        "e1",
        "t1",
        "Edit",
        "Edit src/lib.rs",
        ToolKind::Edit,
        json!({"file_path": "src/lib.rs"}),
    ));
    conversation.apply(&update("e1", ToolCallStatus::InProgress, Vec::new()));
    conversation.apply(&update(
        "e1",
        ToolCallStatus::Completed,
        vec![ToolContent::Diff {
            path: "/p/src/lib.rs".into(),
            old_text: Some("fn a() {}\nfn b() { 1 }\n".into()),
            new_text: "fn a() {}\nfn b() { 2 }\n".into(),
        }],
    ));
    assert_eq!(
        text(&conversation.take_done()),
        "✻ Thinking\n  First I read the file.\n  Then I find the bug.\n  Then I fix it.\n  … 2 more lines of reasoning\n\n\
         Fixing it.\n\n\
         ● Edit src/lib.rs · edit\n  ⎿ Updated /p/src/lib.rs (+1 -1)\n      fn a() {}\n    - fn b() { 1 }\n    + fn b() { 2 }\n"
    );
}

#[test]
fn a_sub_agents_calls_show_under_its_agent_call() {
    let mut conversation = Conversation::new(Palette::new(false), 60);
    conversation.apply(&turn("t1", None));
    conversation.apply(&call(
        "fork",
        "t1",
        "Agent",
        "Explore the parser",
        ToolKind::Other,
        json!({}),
    ));
    conversation.apply(&update("fork", ToolCallStatus::InProgress, Vec::new()));
    conversation.apply(&turn("child", Some("fork")));
    conversation.apply(&AgentEvent::TextDelta {
        turn_id: "child".into(),
        text: "not shown".into(),
    });
    conversation.apply(&call(
        "r1",
        "child",
        "Read",
        "Read parser.rs",
        ToolKind::Read,
        json!({}),
    ));
    conversation.apply(&call(
        "g1",
        "child",
        "Grep",
        "Grep lex",
        ToolKind::Search,
        json!({}),
    ));
    conversation.apply(&update("r1", ToolCallStatus::InProgress, Vec::new()));
    conversation.apply(&update(
        "r1",
        ToolCallStatus::Completed,
        vec![ToolContent::text("a\nb")],
    ));
    let live = text(&conversation.live(Duration::ZERO));
    assert!(live.contains("⠋ Explore the parser · other"), "{live}");
    assert!(
        live.contains("  ⎿ ● Read parser.rs\n    ⠋ Grep lex\n"),
        "{live}"
    );
    assert!(conversation.take_done().is_empty(), "nothing is done yet");
    conversation.apply(&update("g1", ToolCallStatus::InProgress, Vec::new()));
    conversation.apply(&update(
        "g1",
        ToolCallStatus::Failed,
        vec![ToolContent::text("no match")],
    ));
    conversation.apply(&update(
        "fork",
        ToolCallStatus::Completed,
        vec![ToolContent::text("The parser is fine.")],
    ));
    assert_eq!(
        text(&conversation.take_done()),
        "● Explore the parser · other\n  ⎿ The parser is fine.\n    ● Read parser.rs\n    ✗ Grep lex\n"
    );
}

#[test]
fn a_running_command_shows_its_lines_so_far_and_its_tail() {
    let mut conversation = Conversation::new(Palette::new(false), 60);
    conversation.apply(&turn("t1", None));
    conversation.apply(&call(
        "b1",
        "t1",
        "Bash",
        "Build",
        ToolKind::Execute,
        json!({"command": "make"}),
    ));
    conversation.apply(&update("b1", ToolCallStatus::InProgress, Vec::new()));
    let tail: String = (4990..=5000).map(|i| format!("line {i}\n")).collect();
    conversation.apply(&AgentEvent::ToolCallUpdate(ToolCallUpdate {
        content: Some(vec![ToolContent::text(tail)]),
        raw_output: Some(json!({"output_lines": 5000, "output_bytes": 48_000})),
        tool_call_id: "b1".into(),
        ..ToolCallUpdate::default()
    }));
    let live = text(&conversation.live(Duration::ZERO));
    assert!(
        live.contains("⠋ Build · execute\n  ⎿ $ make\n    5000 lines so far\n    line 4996\n"),
        "{live}"
    );
    assert!(live.contains("line 5000"), "{live}");
}
