//! What the Messages and Converse APIs share in laying out a conversation: alternating user and
//! assistant turns (consecutive messages of one role merged into one turn, tool results being
//! the user's, empty ones left out), each message's parts as the API's blocks, and tool-call
//! arguments as an object.

use agentry::model::{AssistantContent, Message, ToolResult};
use agentry::tool::ContentBlock;
use serde_json::{Value, json};

/// How one API writes each kind of part as a block (`None`: left out).
pub(crate) struct Blocks {
    /// A part of a user's message, or of a tool's result.
    pub user: fn(&ContentBlock) -> Option<Value>,
    /// A part of an answer.
    pub assistant: fn(&AssistantContent) -> Option<Value>,
    /// A tool's result.
    pub tool_result: fn(&ToolResult) -> Value,
}

/// The conversation as `{"role", "content"}` turns of `blocks`, alternating.
pub(crate) fn alternating(history: &[Message], blocks: &Blocks) -> Vec<Value> {
    let turns = history.iter().map(|message| match message {
        Message::User { content } => ("user", content.iter().filter_map(blocks.user).collect()),
        Message::Assistant { content, .. } => (
            "assistant",
            content.iter().filter_map(blocks.assistant).collect(),
        ),
        Message::ToolResults { results } => {
            ("user", results.iter().map(blocks.tool_result).collect())
        }
    });
    merged(turns)
        .into_iter()
        .map(|(role, content)| json!({"role": role, "content": content}))
        .collect()
}

/// Turns of one role in a row made one, and empty ones left out.
pub(crate) fn merged<R: PartialEq>(
    turns: impl IntoIterator<Item = (R, Vec<Value>)>,
) -> Vec<(R, Vec<Value>)> {
    let mut merged: Vec<(R, Vec<Value>)> = Vec::new();
    for (role, content) in turns {
        if content.is_empty() {
            continue;
        }
        match merged.last_mut() {
            Some((last_role, last_blocks)) if *last_role == role => last_blocks.extend(content),
            _ => merged.push((role, content)),
        }
    }
    merged
}

/// A call's arguments as APIs that take only an object want them: arguments that were not one
/// are passed on wrapped, so the model sees what it sent (its call already failed with the
/// reason).
pub(crate) fn object_arguments(arguments: &Value) -> Value {
    if arguments.is_object() {
        arguments.clone()
    } else {
        json!({"invalid_arguments": arguments})
    }
}
