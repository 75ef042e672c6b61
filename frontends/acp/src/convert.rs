//! The ACP projection of agentry's event model (the table in `agentry::event`), and ACP prompt
//! content as agentry content. Pure functions: no connection; what they need of earlier events
//! (which turns and calls are a sub-agent's) comes in a [`ToolCallBook`] the caller keeps.
//!
//! Sub-agents, shown [inline](SubAgentView::Inline): their text and thinking stay inside them
//! (the Agent call's result carries their answer); their tool calls are the session's tool
//! calls, titled `AGENT CALL › CALL` and carrying the Agent call's id in
//! `_meta.agentry.parentToolCallId`. Shown as [child sessions](SubAgentView::ChildSessions),
//! their updates are as the main loop's (the caller sends them to the child's session).

use agent_client_protocol::v1::schema as acp;
use agentry::event::{
    AgentEvent, CHAT_INTERRUPTED, ChatSummary, PlanEntry, PlanPriority, PlanStatus, StopReason,
    ToolCallBook, ToolCallSnapshot, ToolCallStatus, ToolCallUpdate,
};
use agentry::ids::ToolCallId;
use agentry::permission::{PermissionOption, PermissionOptionKind};
use agentry::tool::ContentBlock;
use agentry::tool::{ToolCallLocation, ToolContent, ToolKind};

/// How a session's sub-agents are shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SubAgentView {
    /// As tool calls of the session, saying which sub-agent made them.
    Inline,
    /// As child sessions of their own (for clients that advertise ACP's `subagents`).
    ChildSessions,
}

/// The `session/update` an event becomes, if any. `book` has taken in the event already;
/// `context_window` (the model's, in tokens) sizes `usage_update`; without it no usage is
/// reported; `view` says how sub-agents are shown.
pub fn session_update(
    event: &AgentEvent,
    context_window: Option<u64>,
    book: &ToolCallBook,
    view: SubAgentView,
) -> Option<acp::SessionUpdate> {
    match event {
        AgentEvent::TextDelta { turn_id, .. } | AgentEvent::ThinkingDelta { turn_id, .. }
            if view == SubAgentView::Inline && book.fork_of_turn(turn_id).is_some() =>
        {
            None
        }
        AgentEvent::TextDelta { text, .. } => Some(acp::SessionUpdate::AgentMessageChunk(
            acp::ContentChunk::new(text_block(text)),
        )),
        AgentEvent::ThinkingDelta { text, .. } => Some(acp::SessionUpdate::AgentThoughtChunk(
            acp::ContentChunk::new(text_block(text)),
        )),
        AgentEvent::Plan { entries } => Some(acp::SessionUpdate::Plan(plan(entries))),
        // ACP has no update of its own for it: a thought of the agent's, not its answer.
        AgentEvent::Compacted(compaction) => Some(acp::SessionUpdate::AgentThoughtChunk(
            acp::ContentChunk::new(text_block(&format!("{}\n", compaction.describe()))),
        )),
        AgentEvent::ToolCall(call) => {
            let fork = Fork::of(book, &call.tool_call_id, view);
            let mut shown = tool_call(call).meta(fork.as_ref().map(Fork::meta));
            if let Some(fork) = &fork {
                shown.title = fork.title(&call.title);
            }
            Some(acp::SessionUpdate::ToolCall(shown))
        }
        AgentEvent::ToolCallUpdate(update) => {
            let fork = Fork::of(book, &update.tool_call_id, view);
            let mut shown = tool_call_update(update).meta(fork.as_ref().map(Fork::meta));
            if let (Some(fork), Some(title)) = (&fork, &update.title) {
                shown.fields.title = Some(fork.title(title));
            }
            Some(acp::SessionUpdate::ToolCallUpdate(shown))
        }
        AgentEvent::Usage {
            usage,
            session_cost_usd,
            ..
        } => context_window.map(|size| {
            let used = usage.input_tokens
                + usage.cache_read_tokens
                + usage.cache_write_tokens
                + usage.output_tokens;
            let cost = session_cost_usd.map(|amount| acp::Cost::new(amount, "USD"));
            acp::SessionUpdate::UsageUpdate(acp::UsageUpdate::new(used, size).cost(cost))
        }),
        AgentEvent::ChatStarted { .. }
        | AgentEvent::TurnStarted { .. }
        | AgentEvent::TurnEnded { .. }
        | AgentEvent::UserMessage { .. }
        | AgentEvent::PermissionResolved { .. }
        | AgentEvent::QuestionPending(_)
        | AgentEvent::QuestionAnswered { .. }
        | AgentEvent::Notice { .. }
        | AgentEvent::ChatEnded(_)
        | AgentEvent::ChatFailed { .. }
        | AgentEvent::ChatInterrupted { .. } => None,
    }
}

/// The sub-agent a call belongs to: the Agent call that started it.
struct Fork {
    parent_id: String,
    parent_title: String,
}

impl Fork {
    /// The sub-agent of call `id`, if a sub-agent made it and it is shown inline.
    fn of(book: &ToolCallBook, id: &ToolCallId, view: SubAgentView) -> Option<Fork> {
        if view == SubAgentView::ChildSessions {
            return None;
        }
        let parent = book.fork_of_call(id)?;
        Some(Fork {
            parent_id: parent.to_string(),
            parent_title: book
                .get(parent)
                .map_or_else(|| parent.to_string(), |call| call.title.clone()),
        })
    }

    /// A sub-agent's call's title, saying which sub-agent made it.
    fn title(&self, own: &str) -> String {
        format!("{} \u{203a} {own}", self.parent_title)
    }

    /// `_meta` naming the Agent call.
    fn meta(&self) -> acp::Meta {
        let mut meta = acp::Meta::new();
        meta.insert(
            "agentry".to_owned(),
            serde_json::json!({"parentToolCallId": self.parent_id}),
        );
        meta
    }
}

/// The updates that replay a stored event in `session/load`: as [`session_update`], plus the
/// user's messages (`user_message_chunk`), which a live turn does not echo. `book` has taken in
/// the event already.
pub fn replayed_updates(
    event: &AgentEvent,
    book: &ToolCallBook,
    view: SubAgentView,
) -> Vec<acp::SessionUpdate> {
    match event {
        AgentEvent::UserMessage { content, .. } => content
            .iter()
            .map(|block| {
                acp::SessionUpdate::UserMessageChunk(acp::ContentChunk::new(content_block(block)))
            })
            .collect(),
        // The prompt's answer, as far as it went, ends with the mark.
        AgentEvent::ChatInterrupted { .. } => vec![acp::SessionUpdate::AgentMessageChunk(
            acp::ContentChunk::new(text_block(&format!("\n\n[{CHAT_INTERRUPTED}]"))),
        )],
        other => session_update(other, None, book, view)
            .into_iter()
            .collect(),
    }
}

fn text_block(text: &str) -> acp::ContentBlock {
    acp::ContentBlock::Text(acp::TextContent::new(text))
}

/// An agentry content block as ACP's.
pub fn content_block(block: &ContentBlock) -> acp::ContentBlock {
    match block {
        ContentBlock::Text { text } => text_block(text),
        ContentBlock::Image { data, mime_type } => {
            acp::ContentBlock::Image(acp::ImageContent::new(data, mime_type))
        }
        ContentBlock::Audio { data, mime_type } => {
            acp::ContentBlock::Audio(acp::AudioContent::new(data, mime_type))
        }
        ContentBlock::ResourceLink {
            uri,
            name,
            mime_type,
            description,
        } => acp::ContentBlock::ResourceLink(
            acp::ResourceLink::new(name, uri)
                .mime_type(mime_type.clone())
                .description(description.clone()),
        ),
        ContentBlock::Resource {
            uri,
            mime_type,
            text,
        } => acp::ContentBlock::Resource(acp::EmbeddedResource::new(
            acp::EmbeddedResourceResource::TextResourceContents(
                acp::TextResourceContents::new(text.clone().unwrap_or_default(), uri)
                    .mime_type(mime_type.clone()),
            ),
        )),
        // Content of a kind newer than this front-end: as the text models read.
        other => text_block(&agentry::model::resource_text(other)),
    }
}

/// A prompt's ACP content block as agentry's. Binary embedded resources keep their URI and
/// type (models cannot read the bytes).
pub fn prompt_block(block: acp::ContentBlock) -> ContentBlock {
    match block {
        acp::ContentBlock::Text(text) => ContentBlock::Text { text: text.text },
        acp::ContentBlock::Image(image) => ContentBlock::Image {
            data: image.data,
            mime_type: image.mime_type,
        },
        acp::ContentBlock::Audio(audio) => ContentBlock::Audio {
            data: audio.data,
            mime_type: audio.mime_type,
        },
        acp::ContentBlock::ResourceLink(link) => ContentBlock::ResourceLink {
            uri: link.uri,
            name: link.name,
            mime_type: link.mime_type,
            description: link.description,
        },
        acp::ContentBlock::Resource(embedded) => match embedded.resource {
            acp::EmbeddedResourceResource::TextResourceContents(text) => ContentBlock::Resource {
                uri: text.uri,
                mime_type: text.mime_type,
                text: Some(text.text),
            },
            acp::EmbeddedResourceResource::BlobResourceContents(blob) => ContentBlock::Resource {
                uri: blob.uri,
                mime_type: blob.mime_type,
                text: None,
            },
            other => unknown_block(&other),
        },
        other => unknown_block(&other),
    }
}

/// Content of a kind newer than this agent, kept as its JSON so the model still sees it.
fn unknown_block(content: &impl serde::Serialize) -> ContentBlock {
    ContentBlock::Text {
        text: serde_json::to_string(content).unwrap_or_default(),
    }
}

/// A tool call as announced.
pub fn tool_call(call: &ToolCallSnapshot) -> acp::ToolCall {
    acp::ToolCall::new(call.tool_call_id.to_string(), &call.title)
        .kind(tool_kind(call.kind))
        .status(tool_status(call.status))
        .raw_input(call.raw_input.clone())
        .locations(call.locations.iter().map(location).collect())
}

/// A change to a tool call (only the fields that changed).
pub fn tool_call_update(update: &ToolCallUpdate) -> acp::ToolCallUpdate {
    let fields = acp::ToolCallUpdateFields::new()
        .status(update.status.map(tool_status))
        .title(update.title.clone())
        .content(
            update
                .content
                .as_ref()
                .map(|content| content.iter().map(tool_content).collect::<Vec<_>>()),
        )
        .locations(
            update
                .locations
                .as_ref()
                .map(|locations| locations.iter().map(location).collect::<Vec<_>>()),
        )
        .raw_output(update.raw_output.clone());
    acp::ToolCallUpdate::new(update.tool_call_id.to_string(), fields)
}

/// The tool call a permission request is about, with everything the client needs to show it
/// (a sub-agent's call says which sub-agent asks, as its updates do).
pub fn permission_subject(
    call: &ToolCallSnapshot,
    book: &ToolCallBook,
    view: SubAgentView,
) -> acp::ToolCallUpdate {
    let fork = Fork::of(book, &call.tool_call_id, view);
    let title = match &fork {
        Some(fork) => fork.title(&call.title),
        None => call.title.clone(),
    };
    let fields = acp::ToolCallUpdateFields::new()
        .title(title)
        .kind(tool_kind(call.kind))
        .status(tool_status(call.status))
        .raw_input(call.raw_input.clone())
        .locations(call.locations.iter().map(location).collect::<Vec<_>>());
    acp::ToolCallUpdate::new(call.tool_call_id.to_string(), fields)
        .meta(fork.as_ref().map(Fork::meta))
}

fn tool_content(content: &ToolContent) -> acp::ToolCallContent {
    match content {
        ToolContent::Content { content } => {
            acp::ToolCallContent::Content(acp::Content::new(content_block(content)))
        }
        ToolContent::Diff {
            path,
            old_text,
            new_text,
        } => acp::ToolCallContent::Diff(acp::Diff::new(path, new_text).old_text(old_text.clone())),
        ToolContent::Terminal { terminal_id } => {
            acp::ToolCallContent::Terminal(acp::Terminal::new(terminal_id.clone()))
        }
        // Content of a kind newer than this front-end: its JSON, as text.
        other => acp::ToolCallContent::Content(acp::Content::new(text_block(
            &serde_json::to_string(other).unwrap_or_default(),
        ))),
    }
}

fn location(location: &ToolCallLocation) -> acp::ToolCallLocation {
    acp::ToolCallLocation::new(&location.path).line(location.line)
}

/// A tool kind as ACP's.
pub fn tool_kind(kind: ToolKind) -> acp::ToolKind {
    match kind {
        ToolKind::Read => acp::ToolKind::Read,
        ToolKind::Edit => acp::ToolKind::Edit,
        ToolKind::Delete => acp::ToolKind::Delete,
        ToolKind::Move => acp::ToolKind::Move,
        ToolKind::Search => acp::ToolKind::Search,
        ToolKind::Execute => acp::ToolKind::Execute,
        ToolKind::Think => acp::ToolKind::Think,
        ToolKind::Fetch => acp::ToolKind::Fetch,
        ToolKind::SwitchMode => acp::ToolKind::SwitchMode,
        _ => acp::ToolKind::Other,
    }
}

fn tool_status(status: ToolCallStatus) -> acp::ToolCallStatus {
    match status {
        ToolCallStatus::Pending => acp::ToolCallStatus::Pending,
        ToolCallStatus::InProgress => acp::ToolCallStatus::InProgress,
        ToolCallStatus::Completed => acp::ToolCallStatus::Completed,
        ToolCallStatus::Failed => acp::ToolCallStatus::Failed,
        // ACP asks its questions at once; a call shown from a session paused by another
        // front-end has not finished.
        ToolCallStatus::AwaitingAnswer => acp::ToolCallStatus::Pending,
    }
}

fn plan(entries: &[PlanEntry]) -> acp::Plan {
    acp::Plan::new(
        entries
            .iter()
            .map(|entry| {
                let priority = match entry.priority {
                    PlanPriority::High => acp::PlanEntryPriority::High,
                    PlanPriority::Medium => acp::PlanEntryPriority::Medium,
                    PlanPriority::Low => acp::PlanEntryPriority::Low,
                };
                let status = match entry.status {
                    PlanStatus::Pending => acp::PlanEntryStatus::Pending,
                    PlanStatus::InProgress => acp::PlanEntryStatus::InProgress,
                    PlanStatus::Completed => acp::PlanEntryStatus::Completed,
                };
                acp::PlanEntry::new(&entry.content, priority, status)
            })
            .collect(),
    )
}

/// A finished chat as ACP's answer to `session/prompt`: its stop reason, and in `_meta.agentry`
/// agentry's own (`stopReason`, which tells `max_budget` from `max_turn_requests`) and what the
/// chat cost (`costUsd`, when its models have prices).
pub fn prompt_response(summary: &ChatSummary) -> acp::PromptResponse {
    let mut ours = serde_json::Map::new();
    ours.insert("stopReason".into(), summary.stop_reason.as_str().into());
    if let Some(cost) = summary.cost_usd() {
        ours.insert("costUsd".into(), cost.into());
    }
    let mut meta = serde_json::Map::new();
    meta.insert("agentry".into(), ours.into());
    acp::PromptResponse::new(stop_reason(summary.stop_reason)).meta(meta)
}

/// A stop reason as ACP's.
pub fn stop_reason(reason: StopReason) -> acp::StopReason {
    match reason {
        StopReason::EndTurn => acp::StopReason::EndTurn,
        StopReason::MaxTokens => acp::StopReason::MaxTokens,
        // ACP has no budget of its own: the turn ended at a limit on its requests (the
        // response's `_meta` names the budget).
        StopReason::MaxTurnRequests | StopReason::MaxBudget => acp::StopReason::MaxTurnRequests,
        StopReason::Refusal => acp::StopReason::Refusal,
        StopReason::Cancelled => acp::StopReason::Cancelled,
        // ACP's questions never pause a chat; a chat that stops waiting has ended its turn.
        StopReason::Paused => acp::StopReason::EndTurn,
        // A hook ended the turn (the response's `_meta` says so).
        StopReason::HookStopped => acp::StopReason::EndTurn,
    }
}

/// A permission option as ACP's (the option's id is its kind's wire name).
pub fn permission_option(option: &PermissionOption) -> acp::PermissionOption {
    let kind = match option.kind {
        PermissionOptionKind::AllowOnce => acp::PermissionOptionKind::AllowOnce,
        PermissionOptionKind::AllowAlways => acp::PermissionOptionKind::AllowAlways,
        PermissionOptionKind::RejectOnce => acp::PermissionOptionKind::RejectOnce,
        PermissionOptionKind::RejectAlways => acp::PermissionOptionKind::RejectAlways,
    };
    acp::PermissionOption::new(option.option_id.clone(), &option.name, kind)
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentry::event::Usage;
    use serde_json::json;

    fn wire(update: &acp::SessionUpdate) -> serde_json::Value {
        serde_json::to_value(update).unwrap()
    }

    #[test]
    fn tool_calls_carry_every_field_acp_names() {
        let call = ToolCallSnapshot {
            tool_call_id: "call_1".into(),
            turn_id: "turn_1".into(),
            tool_name: "Edit".into(),
            title: "Edit src/main.rs".into(),
            kind: ToolKind::Edit,
            status: ToolCallStatus::Pending,
            raw_input: json!({"file_path": "/p/src/main.rs"}),
            locations: vec![ToolCallLocation::line("/p/src/main.rs", 3)],
        };
        let announced = wire(
            &session_update(
                &AgentEvent::ToolCall(call),
                None,
                &ToolCallBook::new(),
                SubAgentView::Inline,
            )
            .unwrap(),
        );
        assert_eq!(
            announced,
            // `pending` is the default status, which the SDK leaves out of the wire.
            json!({"sessionUpdate": "tool_call", "toolCallId": "call_1", "title": "Edit src/main.rs",
                   "kind": "edit", "rawInput": {"file_path": "/p/src/main.rs"},
                   "locations": [{"path": "/p/src/main.rs", "line": 3}]})
        );
        let update = ToolCallUpdate {
            tool_call_id: "call_1".into(),
            status: Some(ToolCallStatus::Completed),
            content: Some(vec![
                ToolContent::Diff {
                    path: "/p/src/main.rs".into(),
                    old_text: Some("a".into()),
                    new_text: "b".into(),
                },
                ToolContent::Terminal {
                    terminal_id: "term_1".into(),
                },
                ToolContent::text("done"),
            ]),
            raw_output: Some(json!({"ok": true})),
            ..ToolCallUpdate::default()
        };
        let updated = wire(
            &session_update(
                &AgentEvent::ToolCallUpdate(update),
                None,
                &ToolCallBook::new(),
                SubAgentView::Inline,
            )
            .unwrap(),
        );
        assert_eq!(
            updated,
            json!({"sessionUpdate": "tool_call_update", "toolCallId": "call_1", "status": "completed",
                   "content": [
                       {"type": "diff", "path": "/p/src/main.rs", "oldText": "a", "newText": "b"},
                       {"type": "terminal", "terminalId": "term_1"},
                       {"type": "content", "content": {"type": "text", "text": "done"}}],
                   "rawOutput": {"ok": true}})
        );
    }

    #[test]
    fn text_thoughts_plans_and_usage_project_and_the_rest_does_not() {
        let text = AgentEvent::TextDelta {
            turn_id: "t".into(),
            text: "Hi".into(),
        };
        assert_eq!(
            wire(&session_update(&text, None, &ToolCallBook::new(), SubAgentView::Inline).unwrap()),
            json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "Hi"}})
        );
        let thought = AgentEvent::ThinkingDelta {
            turn_id: "t".into(),
            text: "hm".into(),
        };
        assert_eq!(
            wire(
                &session_update(&thought, None, &ToolCallBook::new(), SubAgentView::Inline)
                    .unwrap()
            )["sessionUpdate"],
            "agent_thought_chunk"
        );
        let plan = AgentEvent::Plan {
            entries: vec![PlanEntry {
                content: "Check".into(),
                priority: PlanPriority::High,
                status: PlanStatus::InProgress,
            }],
        };
        assert_eq!(
            wire(&session_update(&plan, None, &ToolCallBook::new(), SubAgentView::Inline).unwrap()),
            json!({"sessionUpdate": "plan", "entries": [{"content": "Check", "priority": "high", "status": "in_progress"}]})
        );
        let usage = AgentEvent::Usage {
            turn_id: "t".into(),
            usage: Usage {
                input_tokens: 100,
                output_tokens: 20,
                cache_read_tokens: 30,
                cache_write_tokens: 0,
            },
            model: "anthropic/claude-sonnet-4".into(),
            cost_usd: Some(0.0006),
            session_cost_usd: Some(0.25),
        };
        assert!(
            session_update(&usage, None, &ToolCallBook::new(), SubAgentView::Inline).is_none(),
            "no window, no usage"
        );
        let projected = wire(
            &session_update(
                &usage,
                Some(1000),
                &ToolCallBook::new(),
                SubAgentView::Inline,
            )
            .unwrap(),
        );
        assert_eq!(projected["used"], 150);
        assert_eq!(projected["size"], 1000);
        assert_eq!(
            projected["cost"],
            json!({"amount": 0.25, "currency": "USD"}),
            "the session's cost so far"
        );
        let notice = AgentEvent::Notice {
            message: "retrying".into(),
        };
        assert!(
            session_update(&notice, Some(1), &ToolCallBook::new(), SubAgentView::Inline).is_none()
        );
    }

    #[test]
    fn prompt_content_round_trips_every_kind() {
        let blocks = vec![
            ContentBlock::Text { text: "t".into() },
            ContentBlock::Image {
                data: "aW1n".into(),
                mime_type: "image/png".into(),
            },
            ContentBlock::Audio {
                data: "YXU=".into(),
                mime_type: "audio/wav".into(),
            },
            ContentBlock::ResourceLink {
                uri: "file:///p/a.rs".into(),
                name: "a.rs".into(),
                mime_type: Some("text/x-rust".into()),
                description: None,
            },
            ContentBlock::Resource {
                uri: "file:///p/b.py".into(),
                mime_type: Some("text/x-python".into()),
                text: Some("print(1)".into()),
            },
        ];
        for block in blocks {
            assert_eq!(prompt_block(content_block(&block)), block);
        }
    }

    #[test]
    fn replay_includes_the_users_messages() {
        let event = AgentEvent::UserMessage {
            turn_id: "t".into(),
            content: vec![ContentBlock::Text {
                text: "hello".into(),
            }],
        };
        let updates = replayed_updates(&event, &ToolCallBook::new(), SubAgentView::Inline);
        assert_eq!(
            wire(&updates[0]),
            json!({"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": "hello"}})
        );
        assert!(
            session_update(&event, None, &ToolCallBook::new(), SubAgentView::Inline).is_none(),
            "live turns do not echo the prompt"
        );
    }
}
