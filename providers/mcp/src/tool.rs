//! One MCP tool as an agentry tool.

use crate::connection::Session;
use crate::content::tool_output;
use agentry::tool::{
    DynTool, PreparedCall, ToolCallLocation, ToolContext, ToolError, ToolKind, ToolOutput,
};
use futures::future::BoxFuture;
use rmcp::model::CallToolResponse;
use rmcp::model::{CallToolRequestParams, JsonObject, ToolAnnotations};
use serde_json::Value;
use std::path::Path;
use std::sync::Arc;

/// The name the model calls a server's tool by: `mcp__SERVER__TOOL`, with every character
/// model APIs refuse in tool names (anything but letters, digits, `_` and `-`) made `_`.
pub fn tool_name(server: &str, tool: &str) -> String {
    let clean = |text: &str| -> String {
        text.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    };
    format!("mcp__{}__{}", clean(server), clean(tool))
}

/// The kind a tool's annotations suggest: read-only tools read, destructive ones delete,
/// anything else is `other` (which asks before running in the default mode).
fn kind(annotations: Option<&ToolAnnotations>) -> ToolKind {
    match annotations {
        Some(hints) if hints.read_only_hint == Some(true) => ToolKind::Read,
        Some(hints) if hints.destructive_hint == Some(true) => ToolKind::Delete,
        _ => ToolKind::Other,
    }
}

/// A tool of an MCP server.
pub(crate) struct McpTool {
    name: String,
    remote_name: String,
    title: String,
    description: String,
    kind: ToolKind,
    input_schema: Value,
    session: Arc<Session>,
}

impl McpTool {
    pub(crate) fn new(server: &str, tool: rmcp::model::Tool, session: Arc<Session>) -> Self {
        let title = tool
            .annotations
            .as_ref()
            .and_then(|hints| hints.title.clone())
            .or_else(|| tool.title.clone())
            .unwrap_or_else(|| tool.name.to_string());
        Self {
            name: tool_name(server, &tool.name),
            title,
            description: tool.description.as_deref().unwrap_or_default().to_owned(),
            kind: kind(tool.annotations.as_ref()),
            input_schema: Value::Object((*tool.input_schema).clone()),
            remote_name: tool.name.into_owned(),
            session,
        }
    }
}

impl DynTool for McpTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> String {
        self.description.clone()
    }

    fn kind(&self) -> ToolKind {
        self.kind
    }

    fn input_schema(&self) -> Value {
        self.input_schema.clone()
    }

    fn prepare(&self, input: Value, _cwd: &Path) -> Result<Box<dyn PreparedCall>, ToolError> {
        let arguments = match input {
            Value::Object(arguments) => arguments,
            Value::Null => JsonObject::new(),
            other => {
                return Err(ToolError::InvalidInput(format!(
                    "the arguments must be a JSON object, not {other}"
                )));
            }
        };
        Ok(Box::new(McpCall {
            title: self.title.clone(),
            remote_name: self.remote_name.clone(),
            arguments,
            session: self.session.clone(),
        }))
    }
}

/// One call of an MCP tool.
struct McpCall {
    title: String,
    remote_name: String,
    arguments: JsonObject,
    session: Arc<Session>,
}

impl PreparedCall for McpCall {
    fn title(&self) -> String {
        self.title.clone()
    }

    fn locations(&self) -> Vec<ToolCallLocation> {
        Vec::new()
    }

    fn run(self: Box<Self>, ctx: ToolContext) -> BoxFuture<'static, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let params =
                CallToolRequestParams::new(self.remote_name.clone()).with_arguments(self.arguments);
            // Dropping the request (on cancellation) sends `notifications/cancelled` for it.
            let response = tokio::select! {
                response = self.session.peer().call_tool_once(params) => response,
                () = ctx.cancel.cancelled() => return Err(ToolError::Cancelled),
            };
            match response {
                Ok(CallToolResponse::Complete(result)) => tool_output(result),
                Ok(_) => Err(ToolError::failed(format!(
                    "`{}` asked for more input or started a background task, which agentry does not support yet",
                    self.remote_name
                ))),
                Err(error) => Err(ToolError::failed(format!(
                    "the MCP server failed the call of `{}`: {error}",
                    self.remote_name
                ))),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_prefixed_and_safe_for_model_apis() {
        assert_eq!(tool_name("everything", "echo"), "mcp__everything__echo");
        assert_eq!(
            tool_name("my server", "get.thing/2"),
            "mcp__my_server__get_thing_2"
        );
    }

    #[test]
    fn kinds_follow_the_annotations() {
        let mut hints = ToolAnnotations::default();
        assert_eq!(kind(None), ToolKind::Other);
        assert_eq!(kind(Some(&hints)), ToolKind::Other);
        hints.destructive_hint = Some(true);
        assert_eq!(kind(Some(&hints)), ToolKind::Delete);
        hints.read_only_hint = Some(true);
        assert_eq!(kind(Some(&hints)), ToolKind::Read);
    }
}
