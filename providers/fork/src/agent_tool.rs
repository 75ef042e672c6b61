//! **Agent**: hands a task to a sub-agent, which works in its own loop and answers once.

use crate::definition::{GENERAL_PURPOSE, SubAgentDefinition};
use agentry::tool::{SubAgentTask, Tool, ToolContext, ToolError, ToolKind, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;
use std::fmt::Write as _;
use std::sync::Arc;

/// Runs a sub-agent.
#[derive(Clone)]
pub struct AgentTool {
    definitions: Arc<Vec<SubAgentDefinition>>,
}

impl AgentTool {
    /// The tool over these sub-agents; a definition's `model` is opened by the agent (one
    /// that cannot be opened leaves that sub-agent the caller's model).
    pub fn new(definitions: Arc<Vec<SubAgentDefinition>>) -> Self {
        Self { definitions }
    }
}

/// Agent's input.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentInput {
    /// What the sub-agent will do, in 3–5 words (shown to the user).
    pub description: String,
    /// The task, with everything the sub-agent needs to know: it sees nothing of this
    /// conversation.
    pub prompt: String,
    /// Which sub-agent (default "general-purpose").
    pub subagent_type: Option<String>,
}

impl Tool for AgentTool {
    type Input = AgentInput;
    type Output = ToolOutput;

    fn name(&self) -> &str {
        "Agent"
    }

    fn aliases(&self) -> Vec<String> {
        vec!["Task".to_owned()]
    }

    fn description(&self) -> String {
        let mut text = "Hands a task to a sub-agent that works on its own (with its own tools and \
                        a fresh context) and answers once with a report. Use it for broad \
                        searches and self-contained tasks, to keep this conversation focused; \
                        several Agent calls in one response run at the same time. The \
                        sub-agent sees only `prompt`, so make it complete.\n\nSub-agents \
                        (`subagent_type`):"
            .to_owned();
        for definition in self.definitions.iter() {
            let _ = write!(text, "\n- {}: {}", definition.name, definition.description);
            if let Some(tools) = &definition.tools {
                let _ = write!(text, " (tools: {})", tools.join(", "));
            }
        }
        text
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Think
    }

    fn title(&self, input: &AgentInput) -> String {
        let description = input.description.trim();
        if description.is_empty() {
            "Sub-agent".to_owned()
        } else {
            description.to_owned()
        }
    }

    async fn call(&self, input: AgentInput, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let runner = ctx
            .host
            .sub_agents
            .clone()
            .ok_or_else(|| ToolError::failed("sub-agents cannot run here"))?;
        let wanted = input.subagent_type.as_deref().unwrap_or(GENERAL_PURPOSE);
        let definition = self
            .definitions
            .iter()
            .find(|d| d.name == wanted)
            .ok_or_else(|| {
                let known: Vec<&str> = self.definitions.iter().map(|d| d.name.as_str()).collect();
                ToolError::InvalidInput(format!(
                    "there is no sub-agent `{wanted}`; there are: {}",
                    known.join(", ")
                ))
            })?;
        let report = runner.run(&ctx, task(definition, input.prompt)).await?;
        let tokens = |kind: &str| report.usage[kind].as_u64().unwrap_or_default();
        let text = format!(
            "{}\n\n[{} sub-agent: {} model requests, {} input and {} output tokens]",
            report.answer.trim_end(),
            definition.name,
            report.model_requests,
            tokens("input_tokens"),
            tokens("output_tokens")
        );
        Ok(ToolOutput::text(report.answer.clone())
            .with_model_text(text)
            .with_raw_output(serde_json::json!({
                "subagent_type": definition.name,
                "loop_id": report.loop_id,
                "stop_reason": report.stop_reason,
                "model_requests": report.model_requests,
                "usage": report.usage,
            })))
    }
}

/// What the agent runs for a definition: the agent leaves out the tools it lacks and keeps the
/// caller's model when the definition's cannot be opened (definitions written for another
/// agent may name either).
fn task(definition: &SubAgentDefinition, prompt: String) -> SubAgentTask {
    let mut task = SubAgentTask::new(definition.system_prompt.clone(), prompt);
    task.max_requests = definition.max_turns;
    task.permission_mode = definition
        .permission_mode
        .map(|mode| mode.as_str().to_owned());
    task.tools = definition.tools.clone();
    task.model = definition.model.clone();
    task.agent_type = Some(definition.name.clone());
    task
}
