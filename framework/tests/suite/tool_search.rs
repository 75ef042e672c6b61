//! Tool search: a provider's many tools held back from requests, found with `ToolSearch`,
//! then sent and called.

use super::support::*;
use agentry::agent::tool_search::{TOOL_SEARCH, ToolSearchMode, ToolSearchSettings};
use agentry::agent::{Agent, AgentConfig, ChatIo, SessionOptions};
use agentry::model::ModelRequest;
use agentry::model::scripted::{ScriptedModel, ScriptedResponse};
use agentry::provider::{Provider, SimpleProvider};
use agentry::tool::{DynTool, Tool, ToolContext, ToolError, ToolKind, erase};
use serde_json::json;
use std::sync::Arc;

/// One of a catalogue's tools: answers with its own name.
struct Catalogued(String);

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Anything {
    /// What to act on.
    #[allow(dead_code)]
    target: Option<String>,
}

impl Tool for Catalogued {
    type Input = Anything;
    type Output = String;

    fn name(&self) -> &str {
        &self.0
    }
    fn description(&self) -> String {
        format!(
            "Runs the catalogue's operation {}. {}",
            self.0,
            "It takes a target and does what its name says, carefully. ".repeat(4)
        )
    }
    fn kind(&self) -> ToolKind {
        ToolKind::Read
    }
    async fn call(&self, _: Anything, _: ToolContext) -> Result<String, ToolError> {
        Ok(format!("{} ran", self.0))
    }
}

/// A provider of 30 tools that says they may wait to be searched for.
struct Catalogue;

impl Provider for Catalogue {
    fn name(&self) -> &str {
        "catalogue"
    }
    fn description(&self) -> String {
        "Thirty operations.".to_owned()
    }
    fn tools(&self) -> Vec<Arc<dyn DynTool>> {
        (0..30)
            .map(|i| erase(Catalogued(format!("catalogue_op_{i}"))))
            .collect()
    }
    fn defers_tools(&self) -> bool {
        true
    }
}

fn tool_names(request: &ModelRequest) -> Vec<&str> {
    request
        .tools
        .iter()
        .map(|tool| tool.name.as_str())
        .collect()
}

async fn run(mode: ToolSearchMode, responses: Vec<ScriptedResponse>) -> Arc<ScriptedModel> {
    let model = Arc::new(ScriptedModel::new(responses).with_context_window(1_000_000));
    let everyday = SimpleProvider::new("everyday", "Everyday tools.")
        .with_dyn_tool(erase(Catalogued("Everyday".to_owned())));
    let agent = Agent::builder(model.clone())
        .provider(everyday)
        .provider(Catalogue)
        .config(AgentConfig {
            tool_search: ToolSearchSettings {
                mode,
                ..ToolSearchSettings::default()
            },
            ..AgentConfig::default()
        })
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut session = agent.new_session(SessionOptions::new(dir.path())).unwrap();
    let (events, _) = tokio::sync::mpsc::unbounded_channel();
    let io = ChatIo::new(events);
    let content = vec![agentry::tool::ContentBlock::text("run op 7")];
    let summary = session
        .prompt_with(content, &Default::default(), &io)
        .await
        .unwrap();
    assert_eq!(summary.answer(), "Done.");
    model
}

#[tokio::test]
async fn held_back_tools_are_found_by_tool_search_then_sent_and_called() {
    let model = run(
        ToolSearchMode::Always,
        vec![
            response([call(
                "s1",
                TOOL_SEARCH,
                json!({"query": "op 7", "max_results": 1}),
            )]),
            response([call("c1", "catalogue_op_7", json!({}))]),
            ScriptedResponse::text("Done."),
        ],
    )
    .await;
    let requests = model.requests();
    assert_eq!(tool_names(&requests[0]), ["Everyday", TOOL_SEARCH]);
    assert!(
        requests[0]
            .system
            .contains("find them with ToolSearch (words or a regular expression), then call them.\n- catalogue: 30 tools\n"),
        "{}",
        requests[0].system
    );
    assert_eq!(
        results_sent(&model, 1),
        [(
            "s1".to_owned(),
            false,
            "1 tool found, offered from your next response on:\n- catalogue_op_7: Runs the catalogue's operation catalogue_op_7. It takes a target and does what its name says, carefully. It takes a target and does what its name says, carefully. It takes a target and does what its name says, carefully. It takes a target and does what its name says, carefully. \n".to_owned()
        )]
    );
    assert_eq!(
        tool_names(&requests[1]),
        ["Everyday", TOOL_SEARCH, "catalogue_op_7"]
    );
    assert_eq!(
        requests[0].system, requests[1].system,
        "the system prompt holds still"
    );
    assert_eq!(
        results_sent(&model, 2),
        [("c1".to_owned(), false, "catalogue_op_7 ran".to_owned())]
    );
}

#[tokio::test]
async fn below_the_threshold_or_with_search_off_every_tool_is_sent_and_tool_search_is_not() {
    for mode in [ToolSearchMode::Auto, ToolSearchMode::Never] {
        let model = run(
            mode,
            vec![
                response([call("c1", "catalogue_op_7", json!({}))]),
                ScriptedResponse::text("Done."),
            ],
        )
        .await;
        let request = &model.requests()[0];
        assert_eq!(tool_names(request).len(), 31, "{mode:?}");
        assert!(!tool_names(request).contains(&TOOL_SEARCH), "{mode:?}");
        assert!(!request.system.contains("ToolSearch"), "{mode:?}");
    }
}
