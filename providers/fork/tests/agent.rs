//! The Agent tool in whole chats over a scripted model: definitions from disk, the sub-agent's
//! own prompt and tools, and what the model is shown.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use agentry::agent::{Agent, ChatIo, ChatOptions, SessionOptions};
use agentry::event::AgentEvent;
use agentry::model::Message;
use agentry::model::scripted::{ScriptedModel, ScriptedResponse};
use agentry::provider::SimpleProvider;
use agentry::tool::ContentBlock;
use agentry::tool::{ToolError, ToolKind, tool_fn};
use agentry_fork::Forks;
use serde_json::json;
use std::sync::Arc;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct PathInput {
    /// A path.
    path: String,
}

/// Stand-ins for the file tools: `Read` and `Grep` answer with what they were asked.
fn file_tools() -> SimpleProvider {
    let tool = |name: &'static str| {
        tool_fn(
            name,
            "A test tool.",
            ToolKind::Read,
            move |input: PathInput, _| async move {
                Ok::<_, ToolError>(format!("{name} {}", input.path))
            },
        )
    };
    SimpleProvider::new("files", "Test tools.")
        .with_tool(tool("Read"))
        .with_tool(tool("Grep"))
        .with_tool(tool("Write"))
}

fn call(id: &str, name: &str, arguments: serde_json::Value) -> ScriptedResponse {
    ScriptedResponse::tool_call_with_id(id, name, arguments)
}

struct Run {
    model: Arc<ScriptedModel>,
    events: Vec<AgentEvent>,
}

async fn run(project: &std::path::Path, script: Vec<ScriptedResponse>) -> Run {
    let (forks, problems) = Forks::load(project, None);
    assert!(problems.is_empty(), "{problems:?}");
    let model = Arc::new(ScriptedModel::new(script));
    let agent = Agent::builder(model.clone())
        .provider(file_tools())
        .provider(forks)
        .build()
        .unwrap();
    let mut session = agent.new_session(SessionOptions::new(project)).unwrap();
    let (sender, mut receiver) = tokio::sync::mpsc::unbounded_channel();
    let io = ChatIo::new(sender);
    session
        .prompt_with(
            vec![ContentBlock::text("Review the code")],
            &ChatOptions::default(),
            &io,
        )
        .await
        .unwrap();
    let mut events = Vec::new();
    while let Ok(event) = receiver.try_recv() {
        events.push(event);
    }
    Run { model, events }
}

#[tokio::test]
async fn a_claude_code_definition_runs_unchanged_with_its_own_prompt_and_tools() {
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(project.path().join(".claude/agents")).unwrap();
    std::fs::write(
        project.path().join(".claude/agents/reviewer.md"),
        "---\nname: code-reviewer\ndescription: Reviews code for bugs.\ntools: Read, Grep, WebSearch\nmodel: sonnet\n---\nYou are a meticulous code reviewer.\n",
    )
    .unwrap();
    let run = run(
        project.path(),
        vec![
            call(
                "a1",
                "Agent",
                json!({"description": "Review main.rs", "prompt": "Review src/main.rs", "subagent_type": "code-reviewer"}),
            ),
            call("r1", "Read", json!({"path": "src/main.rs"})),
            ScriptedResponse::text("One bug: the loop never ends."),
            ScriptedResponse::text("The reviewer found one bug."),
        ],
    )
    .await;
    let requests = run.model.requests();
    // The root model is offered the sub-agents.
    let agent_tool = requests[0]
        .tools
        .iter()
        .find(|t| t.name == "Agent")
        .unwrap();
    assert!(agent_tool.description.contains("- general-purpose: "));
    assert!(
        agent_tool
            .description
            .contains("- code-reviewer: Reviews code for bugs. (tools: Read, Grep, WebSearch)")
    );
    // The sub-agent: its prompt, a fresh history, only the tools it names that exist.
    let child = &requests[1];
    assert!(
        child
            .system
            .starts_with("You are a meticulous code reviewer.")
    );
    assert_eq!(child.messages, [Message::user_text("Review src/main.rs")]);
    let names: Vec<&str> = child.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["Grep", "Read"]);
    // Its answer (with its usage) is the Agent call's result.
    let Some(Message::ToolResults { results }) = requests[3].messages.last() else {
        panic!("no tool results");
    };
    assert!(
        results[0].text().starts_with(
            "One bug: the loop never ends.\n\n[code-reviewer sub-agent: 2 model requests"
        ),
        "{}",
        results[0].text()
    );
    // The call is titled with its description, and the sub-agent's call hangs under it.
    let title = run.events.iter().find_map(|e| match e {
        AgentEvent::ToolCall(s) if s.tool_call_id.as_str() == "a1" => Some(s.title.clone()),
        _ => None,
    });
    assert_eq!(title.as_deref(), Some("Review main.rs"));
    let parents: Vec<Option<String>> = run
        .events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::TurnStarted {
                parent_fork_tool_call_id,
                ..
            } => Some(parent_fork_tool_call_id.as_ref().map(|id| id.to_string())),
            _ => None,
        })
        .collect();
    assert_eq!(
        parents,
        [
            None,
            None,
            Some("a1".into()),
            Some("a1".into()),
            Some("a1".into()),
            None
        ]
    );
}

#[tokio::test]
async fn the_general_purpose_agent_is_the_default_and_unknown_types_are_named() {
    let project = tempfile::tempdir().unwrap();
    let run = run(
        project.path(),
        vec![
            call(
                "a1",
                "Task",
                json!({"description": "Find tests", "prompt": "List the tests"}),
            ),
            ScriptedResponse::text("There are none."),
            call(
                "a2",
                "Agent",
                json!({"description": "x", "prompt": "y", "subagent_type": "wizard"}),
            ),
            ScriptedResponse::text("ok"),
        ],
    )
    .await;
    let requests = run.model.requests();
    assert!(requests[1].system.starts_with("You are a sub-agent"));
    // Every tool of the caller, the Agent tool too (the depth limit bounds nesting).
    let names: Vec<&str> = requests[1].tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["Agent", "Grep", "Read", "Write"]);
    let Some(Message::ToolResults { results }) = requests[3].messages.last() else {
        panic!("no tool results");
    };
    assert!(results[0].is_error);
    assert!(
        results[0]
            .text()
            .contains("there is no sub-agent `wizard`; there are: general-purpose"),
        "{}",
        results[0].text()
    );
}

#[test]
fn bad_definitions_are_reported_with_file_and_line_and_skipped() {
    let project = tempfile::tempdir().unwrap();
    let folder = project.path().join(".agentry/agents");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(
        folder.join("good.md"),
        "---\nname: good\ndescription: Works.\n---\nPrompt.\n",
    )
    .unwrap();
    std::fs::write(
        folder.join("bad.md"),
        "---\nname: bad\ndescription: Broken.\nmaxTurns: [1\n---\nPrompt.\n",
    )
    .unwrap();
    let (forks, problems) = Forks::load(project.path(), None);
    let names: Vec<&str> = forks
        .definitions()
        .iter()
        .map(|d| d.name.as_str())
        .collect();
    assert_eq!(names, ["general-purpose", "good"]);
    assert_eq!(problems.len(), 1);
    let shown = problems[0].to_string();
    assert!(
        shown.starts_with(&format!("{}:", folder.join("bad.md").display())),
        "{shown}"
    );
    assert!(problems[0].line.is_some_and(|line| line >= 4), "{shown}");
}

#[test]
fn the_agent_tool_as_the_model_sees_it() {
    let project = tempfile::tempdir().unwrap();
    let (forks, _) = Forks::load(project.path(), None);
    for (name, shown) in agentry::testing::tool_definitions(Arc::new(forks)).unwrap() {
        insta::with_settings!({sort_maps => true, prepend_module_to_snapshot => false}, {
            insta::assert_json_snapshot!(name, shown);
        });
    }
}
