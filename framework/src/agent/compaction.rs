//! Keeping a conversation inside the model's context window: when a request would not fit,
//! older turns are summarised by the model and the summary takes their place.

use crate::error::AgentError;
use crate::event::Usage;
use crate::model::side::answer_text;
use crate::model::{Message, Model, ModelError, ModelRequest, ToolDefinition};
use crate::tool::ContentBlock;

/// The share of the window a request may fill before compaction (the rest is for the answer).
const FILL_LIMIT: f64 = 0.75;
/// The share of the window the kept recent turns may take after compaction.
const KEEP_SHARE: f64 = 0.25;

/// What the summary message starts with.
pub const SUMMARY_HEADING: &str = "[Summary of the earlier conversation]";

const SUMMARY_REQUEST: &str = "The conversation above is about to be cut short to fit your \
context window. Write a summary of it for your own later use: the user's goals and instructions, \
decisions made, files and facts learned, the state of the work, and what was about to happen \
next. Keep every detail needed to continue; leave out pleasantries. Answer with the summary only.";

/// A rough token count of a request (about four bytes of JSON a token); good enough to decide
/// when to compact, and cheap.
pub fn estimate_tokens(system: &str, messages: &[Message], tools: &[ToolDefinition]) -> u64 {
    let bytes = system.len()
        + messages
            .iter()
            .map(|m| serde_json::to_string(m).map_or(0, |s| s.len()))
            .sum::<usize>()
        + tools
            .iter()
            .map(|t| serde_json::to_string(t).map_or(0, |s| s.len()))
            .sum::<usize>();
    (bytes as u64).div_ceil(4)
}

/// Whether a request of `tokens` needs compacting for a window of `window`.
pub fn needs_compaction(tokens: u64, window: u64) -> bool {
    tokens as f64 > window as f64 * FILL_LIMIT
}

/// Where the kept recent part of `messages` starts: at a user message (so tool calls stay with
/// their results), as early as fits in the keep share of `window`. `None` when nothing before it
/// could be summarised.
pub fn split_point(messages: &[Message], window: u64) -> Option<usize> {
    let keep_budget = (window as f64 * KEEP_SHARE) as u64;
    let mut kept = 0u64;
    let mut split = None;
    for (index, message) in messages.iter().enumerate().rev() {
        kept += estimate_tokens("", std::slice::from_ref(message), &[]);
        if kept > keep_budget && split.is_some() {
            break;
        }
        if matches!(message, Message::User { .. }) {
            split = Some(index);
        }
    }
    split.filter(|&index| index > 0)
}

/// Asks the model for a summary of `older` and returns the message that replaces it.
pub async fn summarise(
    model: &dyn Model,
    system: &str,
    older: &[Message],
    tools: &[ToolDefinition],
    usage: &mut Usage,
) -> Result<Message, AgentError> {
    let mut messages = older.to_vec();
    messages.push(Message::user_text(SUMMARY_REQUEST));
    // The older turns hold tool calls; APIs want the tools defined to read them.
    let request = ModelRequest::for_model(model, system.to_owned(), messages, tools.to_vec());
    let summary = answer_text(model, request, usage).await?;
    if summary.trim().is_empty() {
        return Err(ModelError::Protocol(
            "the model gave an empty summary when compacting".to_owned(),
        )
        .into());
    }
    Ok(Message::User {
        content: vec![ContentBlock::text(format!(
            "{SUMMARY_HEADING}\n{}",
            summary.trim()
        ))],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{AssistantContent, ToolResult};

    fn turn(i: usize) -> [Message; 3] {
        [
            Message::user_text(format!("question {i} {}", "x".repeat(400))),
            Message::Assistant {
                content: vec![AssistantContent::ToolCall {
                    id: format!("c{i}").into(),
                    name: "Read".into(),
                    arguments: serde_json::json!({}),
                }],
                origin: None,
            },
            Message::ToolResults {
                results: vec![ToolResult {
                    tool_call_id: format!("c{i}").into(),
                    content: vec![ContentBlock::text("y".repeat(400))],
                    is_error: false,
                }],
            },
        ]
    }

    #[test]
    fn the_split_falls_on_a_user_message_within_the_keep_share() {
        let messages: Vec<Message> = (0..10).flat_map(turn).collect();
        let total = estimate_tokens("", &messages, &[]);
        let window = total; // keep share: a quarter of it, so roughly the last two turns
        let split = split_point(&messages, window).unwrap();
        assert!(matches!(messages[split], Message::User { .. }));
        assert!(split > 0 && split < messages.len());
        let kept = estimate_tokens("", &messages[split..], &[]);
        assert!(kept <= window / 4 + estimate_tokens("", &messages[split..split + 3], &[]));
        assert!(needs_compaction(total, total * 4 / 3 - 1));
        assert!(!needs_compaction(total, total * 2));
    }

    #[test]
    fn nothing_to_summarise_when_only_one_user_message_exists() {
        let messages: Vec<Message> = turn(0).into_iter().collect();
        assert_eq!(split_point(&messages, 10), None);
    }
}
