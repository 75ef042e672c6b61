//! **Agent**: hands a task to a sub-agent, which works in its own loop and answers once.

use crate::definition::{GENERAL_PURPOSE, SubAgentDefinition};
use agentry::subagent::{SubAgentSpec, SubAgents};
use agentry::tool::{Tool, ToolContext, ToolError, ToolKind, ToolOutput};
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
        let runner =
            SubAgents::of(&ctx).ok_or_else(|| ToolError::failed("sub-agents cannot run here"))?;
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
        let spec = self.spec(definition, &runner);
        let outcome = runner.run(&ctx, spec, input.prompt).await?;
        let usage = outcome.usage;
        let text = format!(
            "{}\n\n[{} sub-agent: {} model requests, {} input and {} output tokens]",
            outcome.answer.trim_end(),
            definition.name,
            outcome.model_requests,
            usage.input_tokens,
            usage.output_tokens
        );
        Ok(ToolOutput::text(outcome.answer.clone())
            .with_model_text(text)
            .with_raw_output(serde_json::json!({
                "subagent_type": definition.name,
                "loop_id": outcome.loop_id,
                "stop_reason": outcome.stop_reason,
                "model_requests": outcome.model_requests,
                "usage": usage,
            })))
    }
}

impl AgentTool {
    /// What the framework runs for a definition.
    fn spec(&self, definition: &SubAgentDefinition, runner: &SubAgents) -> SubAgentSpec {
        let mut spec = SubAgentSpec::new(definition.system_prompt.clone());
        spec.max_requests = definition.max_turns;
        spec.permission_mode = definition.permission_mode;
        spec.tools = definition.tools.as_ref().map(|wanted| {
            // Definitions written for another agent may name tools this one lacks.
            let have = runner.tool_names();
            let (kept, missing): (Vec<String>, Vec<String>) =
                wanted.iter().cloned().partition(|name| have.contains(name));
            if !missing.is_empty() {
                tracing::warn!(
                    "sub-agent `{}` names tools this agent does not have: {}",
                    definition.name,
                    missing.join(", ")
                );
            }
            kept
        });
        spec.model = match &definition.model {
            Some(name) => match runner.open_model(name) {
                Ok(model) => Some(model),
                Err(problem) => {
                    tracing::warn!(
                        "sub-agent `{}` uses the calling model: its model `{name}` cannot be opened: {problem}",
                        definition.name
                    );
                    None
                }
            },
            None => None,
        };
        spec
    }
}
