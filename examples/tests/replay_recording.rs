//! A team's regression test for its own agent: a real session, recorded once, replayed offline
//! through the same agent, with assertions on its events.
//!
//! Replaying needs nothing but the committed recording (`recordings/reverse.jsonl`). To record it
//! again (after changing the agent's tools or prompt, or to take a new model's answers), run the
//! test with the model to record against:
//!
//! ```text
//! RECORD_WITH=openai/gpt-4.1 cargo test -p agentry-examples --test replay_recording
//! ```
//!
//! The committed file was recorded with `RECORD_WITH=scripted:scripts/reverse.json` (cargo runs
//! the test in `examples/`), a stand-in for a hosted model so that it could be made offline.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use agentry::event::{ToolCallStatus, ToolCallUpdate};
use agentry::model::Model;
use agentry::model::record::Redactor;
use agentry::model::replay::ReplayModel;
use agentry::prelude::*;
use agentry_models::catalog::ModelCatalog;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// The agent under test: its own tool and instructions.
struct Reverse;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct ReverseInput {
    /// The text to reverse.
    text: String,
}

impl Tool for Reverse {
    type Input = ReverseInput;
    type Output = String;
    fn name(&self) -> &str {
        "Reverse"
    }
    fn description(&self) -> String {
        "Reverses a text, character by character.".into()
    }
    fn kind(&self) -> ToolKind {
        ToolKind::Think
    }
    async fn call(&self, input: ReverseInput, _: ToolContext) -> Result<String, ToolError> {
        Ok(input.text.chars().rev().collect())
    }
}

fn recording() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("recordings/reverse.jsonl")
}

/// The recording, or with `RECORD_WITH=MODEL` that model (the session is then recorded).
fn model() -> (Arc<dyn Model>, bool) {
    match std::env::var("RECORD_WITH") {
        Ok(spec) => {
            let providers = BTreeMap::new();
            let env = |name: &str| std::env::var(name).ok();
            let model = ModelCatalog::new(&providers, &env).open(&spec).unwrap();
            (model, true)
        }
        Err(_) => (
            Arc::new(ReplayModel::from_file(&recording()).unwrap()),
            false,
        ),
    }
}

#[tokio::test]
async fn the_recorded_session_replays_through_the_agent_with_the_same_events() {
    let (model, recording_now) = model();
    let agent = Agent::builder(model)
        .provider(SimpleProvider::new("text", "Text tools.").with_tool(Reverse))
        .config(AgentConfig {
            base_prompt: "You reverse texts for the user, with the Reverse tool.".to_owned(),
            ..AgentConfig::default()
        })
        .build()
        .unwrap();
    let mut session = agent
        .new_session(SessionOptions::new(std::env::temp_dir()))
        .unwrap();
    if recording_now {
        // The system prompt's working directory, platform and date are left out: the test
        // replays on any machine, any day.
        let redactor = Redactor::default().blank_environment();
        session.record_to(&recording(), redactor).unwrap();
    }
    let events = Arc::new(Mutex::new(Vec::new()));
    let seen = events.clone();
    let io = ChatIo::new(move |event: AgentEvent| seen.lock().unwrap().push(event));
    let summary = session
        .prompt_with(
            vec![ContentBlock::text(
                "Reverse the word agentry, with the tool.",
            )],
            &ChatOptions::default(),
            &io,
        )
        .await
        .unwrap();

    assert_eq!(summary.stop_reason, StopReason::EndTurn);
    assert!(summary.answer().contains("yrtnega"), "{}", summary.answer());
    let events = events.lock().unwrap();
    let completed: Vec<&ToolCallUpdate> = events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::ToolCallUpdate(update)
                if update.status == Some(ToolCallStatus::Completed) =>
            {
                Some(update)
            }
            _ => None,
        })
        .collect();
    assert_eq!(completed.len(), 1, "one Reverse call completed");
    let output = serde_json::to_string(&completed[0].content).unwrap();
    assert!(output.contains("yrtnega"), "{output}");
}
