//! Keeping a conversation inside the model's context window: when a request would pass the
//! threshold ([`CompactionSettings`]), the older turns are made smaller — their tool results
//! pruned to a note, or summarised by the model, whose summary takes their place — and the
//! recent ones kept as they are.

mod bounded;
mod hooked;
mod settings;

pub use crate::event::{Compaction, CompactionStrategy, CompactionTrigger};
pub(crate) use bounded::bounded;
pub(crate) use hooked::compact_with_hooks;
pub use settings::{CompactionSettings, KeepRecent};

use crate::error::AgentError;
use crate::event::Usage;
use crate::model::side::answer_text;
use crate::model::{Message, Model, ModelError, ModelRequest, ToolDefinition};
use crate::tool::ContentBlock;

/// What the summary message starts with.
pub const SUMMARY_HEADING: &str = "[Summary of the earlier conversation]";

/// What a pruned tool result says instead.
pub const PRUNED_NOTE: &str = "[Tool output removed to save context";

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

/// Whether a request of `tokens` passes the `threshold` share of a window of `window`.
pub fn needs_compaction(tokens: u64, window: u64, threshold: f64) -> bool {
    tokens as f64 > window as f64 * threshold
}

/// Where the kept recent part of `messages` starts: at a user message (so tool calls stay with
/// their results), as early as `keep` allows for a window of `window`. `None` when nothing
/// before it could be made smaller.
pub fn split_point(messages: &[Message], window: u64, keep: KeepRecent) -> Option<usize> {
    let is_user = |message: &Message| matches!(message, Message::User { .. });
    let budget = match keep {
        KeepRecent::Turns(turns) => {
            return messages
                .iter()
                .enumerate()
                .rev()
                .filter(|(_, message)| is_user(message))
                .map(|(index, _)| index)
                .nth(turns.max(1) as usize - 1)
                .filter(|&index| index > 0);
        }
        KeepRecent::Share(share) => (window as f64 * share) as u64,
        KeepRecent::Tokens(tokens) => tokens,
    };
    let mut kept = 0u64;
    let mut split = None;
    for (index, message) in messages.iter().enumerate().rev() {
        kept += estimate_tokens("", std::slice::from_ref(message), &[]);
        if kept > budget && split.is_some() {
            break;
        }
        if is_user(message) {
            split = Some(index);
        }
    }
    split.filter(|&index| index > 0)
}

/// Replaces the tool results of `messages` by a one-line note each; returns how many.
fn prune_tool_outputs(messages: &mut [Message]) -> usize {
    let mut pruned = 0;
    for message in messages {
        let Message::ToolResults { results } = message else {
            continue;
        };
        for result in results {
            let size = result.text().chars().count();
            if result.content.len() == 1 && result.text().starts_with(PRUNED_NOTE) {
                continue;
            }
            result.content = vec![ContentBlock::text(format!(
                "{PRUNED_NOTE}: {size} characters. Run the tool again if it is needed.]"
            ))];
            pruned += 1;
        }
    }
    pruned
}

/// Asks the model for a summary of `older` (following the user's `instructions`, when given)
/// and returns the message that replaces it.
pub async fn summarise(
    model: &dyn Model,
    system: &str,
    older: &[Message],
    tools: &[ToolDefinition],
    instructions: Option<&str>,
    usage: &mut Usage,
) -> Result<Message, AgentError> {
    let mut messages = older.to_vec();
    let request = match instructions.map(str::trim).filter(|i| !i.is_empty()) {
        Some(instructions) => {
            format!("{SUMMARY_REQUEST}\n\nThe user's instructions for this summary: {instructions}")
        }
        None => SUMMARY_REQUEST.to_owned(),
    };
    messages.push(Message::user_text(request));
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

/// What a compaction made of a conversation: `head` takes the place of its first `split`
/// messages.
pub(crate) struct Compacted {
    pub(crate) split: usize,
    pub(crate) head: Vec<Message>,
    pub(crate) report: Compaction,
}

/// What the request a compaction serves sends besides the conversation.
pub(crate) struct RequestShape<'a> {
    pub(crate) model: &'a dyn Model,
    pub(crate) system: &'a str,
    pub(crate) tools: &'a [ToolDefinition],
}

/// Compacts `messages` as `settings` say: automatically, the part before the kept recent turns
/// (pruned first with `prune_tool_outputs`, summarised when that is not enough); by hand, all
/// of it, summarised (with the user's `instructions`). `None` when there is nothing to compact.
pub(crate) async fn compact(
    request: &RequestShape<'_>,
    messages: &[Message],
    settings: &CompactionSettings,
    trigger: CompactionTrigger,
    instructions: Option<&str>,
    usage: &mut Usage,
) -> Result<Option<Compacted>, AgentError> {
    let estimate = |messages: &[Message]| estimate_tokens(request.system, messages, request.tools);
    let tokens_before = estimate(messages);
    let window = request.model.context_window();
    let split = match (trigger, window) {
        (CompactionTrigger::Manual, _) => messages.len(),
        (CompactionTrigger::Auto, Some(window)) => {
            match split_point(messages, window, settings.keep_recent) {
                Some(split) => split,
                None => return Ok(None),
            }
        }
        (CompactionTrigger::Auto, None) => return Ok(None),
    };
    if split == 0 {
        return Ok(None);
    }
    let kept = &messages[split..];
    let mut older = messages[..split].to_vec();
    let mut report = Compaction {
        trigger,
        strategy: settings.strategy,
        tokens_before,
        tokens_after: tokens_before,
        messages_summarised: 0,
        tool_outputs_pruned: 0,
        messages_kept: kept.len(),
    };
    if trigger == CompactionTrigger::Auto
        && settings.strategy == CompactionStrategy::PruneToolOutputs
    {
        report.tool_outputs_pruned = prune_tool_outputs(&mut older);
        let after: Vec<Message> = older.iter().chain(kept).cloned().collect();
        report.tokens_after = estimate(&after);
        let fits = window.is_some_and(|window| {
            !needs_compaction(report.tokens_after, window, settings.threshold)
        });
        if fits {
            return Ok(Some(Compacted {
                split,
                head: older,
                report,
            }));
        }
    }
    let summary = summarise(
        request.model,
        request.system,
        &older,
        request.tools,
        instructions,
        usage,
    )
    .await?;
    report.strategy = CompactionStrategy::Summarise;
    report.messages_summarised = split;
    let after: Vec<Message> = std::iter::once(summary.clone())
        .chain(kept.iter().cloned())
        .collect();
    report.tokens_after = estimate(&after);
    Ok(Some(Compacted {
        split,
        head: vec![summary],
        report,
    }))
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

    /// An automatic compaction of `messages` that compacts something.
    async fn auto(
        request: &RequestShape<'_>,
        messages: &[Message],
        settings: &CompactionSettings,
        usage: &mut Usage,
    ) -> Compacted {
        compact(
            request,
            messages,
            settings,
            CompactionTrigger::Auto,
            None,
            usage,
        )
        .await
        .unwrap()
        .unwrap()
    }

    #[test]
    fn the_split_falls_on_a_user_message_within_the_keep_share() {
        let messages: Vec<Message> = (0..10).flat_map(turn).collect();
        let total = estimate_tokens("", &messages, &[]);
        let window = total; // keep share: a quarter of it, so roughly the last two turns
        let split = split_point(&messages, window, KeepRecent::Share(0.25)).unwrap();
        assert!(matches!(messages[split], Message::User { .. }));
        assert!(split > 0 && split < messages.len());
        let kept = estimate_tokens("", &messages[split..], &[]);
        assert!(kept <= window / 4 + estimate_tokens("", &messages[split..split + 3], &[]));
        assert!(needs_compaction(total, total * 4 / 3 - 1, 0.75));
        assert!(!needs_compaction(total, total * 2, 0.75));
        assert!(needs_compaction(total, total * 2, 0.4));
    }

    #[test]
    fn turns_or_tokens_say_what_is_kept() {
        let messages: Vec<Message> = (0..10).flat_map(turn).collect();
        assert_eq!(
            split_point(&messages, 1_000_000, KeepRecent::Turns(3)),
            Some(21)
        );
        assert_eq!(
            split_point(&messages, 1_000_000, KeepRecent::Turns(10)),
            None,
            "all of it"
        );
        let three_turns = estimate_tokens("", &messages[21..], &[]);
        assert_eq!(
            split_point(&messages, 1_000_000, KeepRecent::Tokens(three_turns)),
            Some(21)
        );
    }

    #[test]
    fn nothing_to_summarise_when_only_one_user_message_exists() {
        let messages: Vec<Message> = turn(0).into_iter().collect();
        assert_eq!(split_point(&messages, 10, KeepRecent::Share(0.25)), None);
    }

    #[tokio::test]
    async fn pruning_tool_outputs_is_enough_when_they_were_the_bulk_and_a_summary_otherwise() {
        use crate::model::scripted::{ScriptedModel, ScriptedResponse};
        let messages: Vec<Message> = (0..10).flat_map(turn).collect();
        let total = estimate_tokens("", &messages, &[]);
        let model = ScriptedModel::new([ScriptedResponse::text("We read ten files.")])
            .with_context_window(total);
        let request = RequestShape {
            model: &model,
            system: "",
            tools: &[],
        };
        let mut usage = Usage::default();
        // At 90% of a window the conversation fills: pruning eight results is enough.
        let settings = CompactionSettings {
            threshold: 0.9,
            keep_recent: KeepRecent::Turns(2),
            strategy: CompactionStrategy::PruneToolOutputs,
            ..CompactionSettings::default()
        };
        let pruned = auto(&request, &messages, &settings, &mut usage).await;
        assert_eq!((pruned.split, pruned.head.len()), (24, 24));
        assert_eq!(pruned.report.tool_outputs_pruned, 8);
        assert_eq!(pruned.report.messages_summarised, 0);
        assert_eq!(pruned.report.strategy, CompactionStrategy::PruneToolOutputs);
        assert!(pruned.report.tokens_after < pruned.report.tokens_before);
        let Message::ToolResults { results } = &pruned.head[2] else {
            panic!("{:?}", pruned.head[2]);
        };
        assert_eq!(
            results[0].text(),
            "[Tool output removed to save context: 400 characters. Run the tool again if it is needed.]"
        );
        assert!(model.requests().is_empty(), "no summary was needed");
        // A threshold the pruned conversation still passes: summarised after all.
        let tight = CompactionSettings {
            threshold: 0.05,
            ..settings
        };
        let summarised = auto(&request, &messages, &tight, &mut usage).await;
        assert_eq!(summarised.head.len(), 1);
        assert_eq!(summarised.report.messages_summarised, 24);
        assert_eq!(summarised.report.strategy, CompactionStrategy::Summarise);
        assert_eq!(summarised.report.messages_kept, 6);
        let asked = &model.requests()[0];
        assert!(
            serde_json::to_string(&asked.messages[2])
                .unwrap()
                .contains(PRUNED_NOTE),
            "the summariser read the pruned turns"
        );
    }

    #[tokio::test]
    async fn a_manual_compaction_summarises_everything_with_the_users_instructions() {
        use crate::model::scripted::{ScriptedModel, ScriptedResponse};
        let messages: Vec<Message> = (0..2).flat_map(turn).collect();
        let model = ScriptedModel::new([ScriptedResponse::text("Two reads.")]);
        let request = RequestShape {
            model: &model,
            system: "",
            tools: &[],
        };
        let mut usage = Usage::default();
        let done = compact(
            &request,
            &messages,
            &CompactionSettings::default(),
            CompactionTrigger::Manual,
            Some("Keep the file names."),
            &mut usage,
        )
        .await
        .unwrap()
        .unwrap();
        assert_eq!((done.split, done.report.messages_kept), (6, 0));
        assert!(
            serde_json::to_string(&done.head[0])
                .unwrap()
                .contains("Two reads.")
        );
        let asked = serde_json::to_string(model.requests()[0].messages.last().unwrap()).unwrap();
        assert!(
            asked.contains("The user's instructions for this summary: Keep the file names."),
            "{asked}"
        );
        assert!(done.report.describe().starts_with("The conversation was compacted as asked: 6 earlier messages were summarised, 0 messages kept"), "{}", done.report.describe());
    }
}
