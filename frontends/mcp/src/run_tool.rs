//! `agentry_run`: a prompt run through the agent, for MCP hosts that use agentry as a
//! sub-agent. The agent's tool calls are reported as progress notifications when the caller
//! asks for progress; cancelling the request cancels the turn.

use agentry::agent::{Agent, ChatIo, ChatOptions, SessionOptions};
use agentry::event::{AgentEvent, EventSink, StopReason};
use agentry::permission::{PermissionPolicy, RejectWhenAsked};
use agentry::tool::ContentBlock;
use rmcp::ErrorData;
use rmcp::model::{CallToolResult, JsonObject, ProgressNotificationParam, ProgressToken, Tool};
use rmcp::service::{Peer, RequestContext, RoleServer};
use serde::Deserialize;
use serde_json::json;
use std::path::PathBuf;
use std::sync::Arc;
use tokio::sync::mpsc;

/// The tool's name.
pub(crate) const NAME: &str = "agentry_run";

/// How `agentry_run` runs prompts.
pub struct RunSettings {
    /// The agent, or why there is none (no model configured, say): the tool then fails with
    /// that reason.
    pub agent: Result<Agent, String>,
    /// The permission policy of its sessions; anything that would ask is refused, as there is
    /// nobody to ask.
    pub policy: PermissionPolicy,
    /// The folder prompts run in unless the call names another.
    pub cwd: PathBuf,
}

/// The tool's input.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RunInput {
    prompt: String,
    cwd: Option<PathBuf>,
}

/// The tool as listed.
pub(crate) fn definition() -> Tool {
    let schema = json!({
        "type": "object",
        "properties": {
            "prompt": {"type": "string", "description": "The task, as you would tell the agent."},
            "cwd": {"type": "string", "description": "The absolute folder to work in (the server's own by default)."}
        },
        "required": ["prompt"],
        "additionalProperties": false
    });
    let schema = schema.as_object().cloned().unwrap_or_default();
    Tool::new(
        NAME,
        "Runs a task through the agentry coding agent (reading, editing and running commands in the folder, as its permissions allow) and answers with its final answer.",
        Arc::new(schema),
    )
}

/// Runs `agentry_run` calls.
pub(crate) struct Runner(RunSettings);

impl Runner {
    pub(crate) fn new(settings: RunSettings) -> Self {
        Self(settings)
    }

    /// One call: the agent's answer, or a failed result saying why there is none. Bad input
    /// is -32602.
    pub(crate) async fn run(
        &self,
        arguments: Option<JsonObject>,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let input: RunInput =
            serde_json::from_value(serde_json::Value::Object(arguments.unwrap_or_default()))
                .map_err(|e| ErrorData::invalid_params(format!("{NAME}: {e}"), None))?;
        let cwd = input.cwd.unwrap_or_else(|| self.0.cwd.clone());
        if !cwd.is_absolute() || !cwd.is_dir() {
            return Err(ErrorData::invalid_params(
                format!(
                    "{NAME}: `cwd` must be an existing absolute folder, not {}",
                    cwd.display()
                ),
                None,
            ));
        }
        // A client works in the server's workspace, not wherever it likes: its own folder, or
        // one inside it or inside the policy's additional folders (links resolved).
        let cwd = agentry_plugin::paths::canonical_path(&cwd);
        let inside = self.roots().iter().any(|root| cwd.starts_with(root));
        if !inside {
            return Err(ErrorData::invalid_params(
                format!(
                    "{NAME}: `cwd` must be {} or a folder inside it, not {}",
                    self.0.cwd.display(),
                    cwd.display()
                ),
                None,
            ));
        }
        let agent = match &self.0.agent {
            Ok(agent) => agent,
            Err(why) => return Ok(failed(format!("agentry cannot run prompts: {why}"))),
        };
        let mut options = SessionOptions::new(cwd);
        options.policy = self.0.policy.clone();
        // Its rules mean in the session's folder what they mean in the server's.
        options.policy.relative_to = Some(agentry_plugin::paths::canonical_path(&self.0.cwd));
        let mut session = agent
            .new_session(options)
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        let (events, reported) = mpsc::unbounded_channel();
        let reporter = context
            .meta
            .get_progress_token()
            .map(|token| tokio::spawn(report_progress(reported, context.peer.clone(), token)));
        let io = ChatIo {
            events: Arc::new(Progress(events)),
            permissions: Arc::new(RejectWhenAsked),
            cancel: context.ct.clone(),
            questions: None,
        };
        let outcome = session
            .prompt_with(
                vec![ContentBlock::text(input.prompt)],
                &ChatOptions::default(),
                &io,
            )
            .await;
        drop(io);
        if let Some(reporter) = reporter {
            let _ = reporter.await;
        }
        Ok(match outcome {
            Ok(summary) if summary.stop_reason == StopReason::EndTurn => {
                CallToolResult::success(vec![rmcp::model::ContentBlock::text(summary.answer())])
            }
            Ok(summary) => failed(format!(
                "the agent stopped early ({}); its last words: {}",
                summary.stop_reason,
                summary.answer()
            )),
            Err(error) => failed(format!("the agent failed: {error}")),
        })
    }
}

impl Runner {
    /// The server's workspace roots, canonical: its folder and the policy's additional ones.
    fn roots(&self) -> Vec<PathBuf> {
        std::iter::once(&self.0.cwd)
            .chain(&self.0.policy.additional_directories)
            .map(|root| agentry_plugin::paths::canonical_path(&self.0.cwd.join(root)))
            .collect()
    }
}

fn failed(message: String) -> CallToolResult {
    CallToolResult::error(vec![rmcp::model::ContentBlock::text(message)])
}

/// Hands the agent's events to the progress reporter.
struct Progress(mpsc::UnboundedSender<AgentEvent>);

impl EventSink for Progress {
    fn emit(&self, event: AgentEvent) {
        let _ = self.0.send(event);
    }
}

/// Sends a progress notification for each tool call the agent starts.
async fn report_progress(
    mut events: mpsc::UnboundedReceiver<AgentEvent>,
    peer: Peer<RoleServer>,
    token: ProgressToken,
) {
    let mut calls = 0.0;
    while let Some(event) = events.recv().await {
        if let AgentEvent::ToolCall(call) = event {
            calls += 1.0;
            let progress =
                ProgressNotificationParam::new(token.clone(), calls).with_message(call.title);
            let _ = peer.notify_progress(progress).await;
        }
    }
}
