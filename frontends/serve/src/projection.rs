//! The chat-flow projection of a session's [`AgentEvent`]s: turns as [`TurnProjection`]s, and
//! the events a client sees as they change (`chat:start`, `turn:start`, `turn:patch`,
//! `turn:end`, `chat:end`).
//!
//! | `AgentEvent` | chat-flow |
//! |---|---|
//! | `ChatStarted` | `chat:start` |
//! | `TurnStarted` | `turn:start` (a paused turn taken up again: `turn:patch` `set_status` `streaming`) |
//! | `UserMessage`, `QuestionAnswered` | the user turn's blocks (`text`, `image`, `file`, `ask_user_answer`) |
//! | `TextDelta` / `ThinkingDelta` | `turn:patch` `add_content` (`text_delta` and the block's whole `content`) |
//! | `ToolCall` | `turn:patch` `add_tool_call` (status `pending`) and a `tool_use` block |
//! | `ToolCallUpdate` to `awaiting_answer` or back to running | `turn:patch` `set_tool_status` |
//! | `ToolCallUpdate` to `completed` / `failed` | `turn:patch` `tool_result` (`done`, `error`, `cancelled`) and a `tool_result` block |
//! | `QuestionPending` | the call's `arguments` gain `source_loop`; a sub-agent's question is also added to the main loop's turn, so it bubbles up |
//! | `Usage` | the turn's `usage` (with its `cost_usd`), and the session's spending |
//! | `Notice`, `Compacted` | a `system` turn |
//! | `Plan` | `plan:update` |
//! | `TurnEnded` | `turn:end` |
//! | `ChatEnded` / `ChatFailed` | `chat:end` |
//! | `ChatInterrupted` (stored sessions only) | a `system` turn, status `interrupted` |
//!
//! Every event carries the session's next `sequence`; a turn's `sequence` is that of the last
//! event that changed it, so a client that fetched the turns can skip what it already has.

use crate::protocol::{
    Block, BlockType, ChatEnd, ServerEvent, ToolCallView, ToolState, TurnProjection, TurnRole,
    TurnState, UsageView,
};
use agentry::cost::Spending;
use agentry::event::Refusal;
use agentry::event::{
    AgentEvent, CHAT_INTERRUPTED, ChatSummary, Role, StopReason, ToolCallStatus, TurnStatus, Usage,
};
use agentry::question::PendingQuestion;
use agentry::tool::ContentBlock;
use agentry::tool::ToolContent;
use serde_json::{Value, json};
use std::collections::HashMap;

/// Projects one session's events.
#[derive(Debug, Clone)]
pub struct Projector {
    session_id: String,
    /// The name of the model the session's chats use.
    model: Option<String>,
    /// The schema of the running chat's answer, if it asked for one.
    output_schema: Option<Value>,
    /// The last sequence number given out.
    sequence: u64,
    turns: Vec<TurnProjection>,
    /// Turn index by turn id.
    turn_index: HashMap<String, usize>,
    /// Where each tool call is shown: (turn index, call index), the first the turn that made it.
    call_places: HashMap<String, Vec<(usize, usize)>>,
    /// Where the chat's notices go: the number of system turns so far.
    notices: u64,
    /// The data of the last `chat:end`.
    last_chat_end: Option<Value>,
    /// What the session's model requests used and cost, by model.
    spending: Spending,
}

impl Projector {
    /// The projection of session `session_id`, numbering its events after `last_sequence`.
    pub fn new(session_id: impl Into<String>, last_sequence: u64) -> Self {
        Self {
            session_id: session_id.into(),
            model: None,
            output_schema: None,
            sequence: last_sequence,
            turns: Vec::new(),
            turn_index: HashMap::new(),
            call_places: HashMap::new(),
            notices: 0,
            last_chat_end: None,
            spending: Spending::default(),
        }
    }

    /// Names the model of the chats that follow.
    pub fn set_model(&mut self, model: impl Into<String>) {
        self.model = Some(model.into());
    }

    /// Sets the schema the next chat's answer must satisfy (`chat:end` repeats it).
    pub fn set_output_schema(&mut self, schema: Option<Value>) {
        self.output_schema = schema;
    }

    /// The data of the last `chat:end`, taken.
    pub fn take_chat_end(&mut self) -> Option<Value> {
        self.last_chat_end.take()
    }

    /// Every turn so far, in order.
    pub fn turns(&self) -> &[TurnProjection] {
        &self.turns
    }

    /// What the session's model requests used and cost so far, by model.
    pub fn spending(&self) -> &Spending {
        &self.spending
    }

    /// The last sequence number given out.
    pub fn last_sequence(&self) -> u64 {
        self.sequence
    }

    /// Numbers the events that follow after `last` (when it is above the last given out): a
    /// chat claimed from a store shared with other servers numbers after all of theirs.
    pub fn number_after(&mut self, last: u64) {
        self.sequence = self.sequence.max(last);
    }

    /// Gives every turn the number `last`, and numbers later events after it: the turns as
    /// read back from a store shared with other servers, which last numbered the session's
    /// events `last`. A client that saw that far has them all; one that saw less takes them.
    pub fn settle_at(&mut self, last: u64) {
        for turn in &mut self.turns {
            turn.sequence = last;
        }
        self.sequence = last;
    }

    /// The running chat, found abandoned (its server died or was cut off), as its clients see
    /// it end: its open turns end interrupted, a `system` turn says so, and `chat:end` has
    /// the status `interrupted`.
    pub fn interrupt(&mut self) -> Vec<ServerEvent> {
        let mut events = self.end_open_turns(TurnState::Interrupted, None);
        events.extend(self.system_turn(CHAT_INTERRUPTED, TurnState::Interrupted));
        let end = self.unfinished_end("interrupted", "interrupted", None);
        events.push(ServerEvent {
            event: "chat:end",
            data: json!(end),
        });
        events
    }

    /// Ends the open turns with `status` (and `reason`, for a failure): their `turn:end`s.
    fn end_open_turns(&mut self, status: TurnState, reason: Option<&str>) -> Vec<ServerEvent> {
        let open: Vec<usize> = (0..self.turns.len())
            .filter(|&i| self.turns[i].status == TurnState::Streaming)
            .collect();
        open.into_iter()
            .map(|index| {
                self.turns[index].status = status;
                self.turns[index].failure_reason = reason.map(str::to_owned);
                self.turn_event("turn:end", index)
            })
            .collect()
    }

    /// The `chat:end` of a chat that did not finish: no result, no usage.
    fn unfinished_end(
        &mut self,
        status: &str,
        finish_reason: &str,
        error: Option<&str>,
    ) -> ChatEnd {
        self.output_schema = None;
        ChatEnd {
            session_id: self.session_id.clone(),
            sequence: self.next_sequence(),
            status: status.to_owned(),
            result: None,
            finish_reason: finish_reason.to_owned(),
            usage: None,
            session_cost_usd: self.spending.cost_usd(),
            duration_ms: None,
            error: error.map(str::to_owned),
        }
    }

    /// The turns still open (streaming or paused), for a client that subscribes mid-chat.
    pub fn open_turns(&self) -> impl Iterator<Item = &TurnProjection> {
        self.turns
            .iter()
            .filter(|t| t.status == TurnState::Streaming)
    }

    /// Takes in one event and returns what clients see of it.
    pub fn apply(&mut self, event: &AgentEvent) -> Vec<ServerEvent> {
        match event {
            AgentEvent::ChatStarted { .. } => {
                let data = json!({"session_id": self.session_id});
                vec![self.chat_event("chat:start", data)]
            }
            AgentEvent::TurnStarted {
                turn_id,
                role,
                status,
                parent_fork_tool_call_id,
                loop_id,
                started_at,
            } => {
                if let Some(&index) = self.turn_index.get(turn_id.as_str()) {
                    // A paused turn taken up again.
                    self.turns[index].status = turn_state(*status);
                    let data = json!({"status": self.turns[index].status});
                    return vec![self.patch(index, "set_status", data)];
                }
                let role = match role {
                    Role::User => TurnRole::User,
                    _ => TurnRole::Assistant,
                };
                let turn = TurnProjection {
                    id: turn_id.to_string(),
                    sequence: 0,
                    turn_id: turn_id.to_string(),
                    loop_id: loop_id.clone(),
                    role,
                    status: turn_state(*status),
                    blocks: Vec::new(),
                    tool_calls: Vec::new(),
                    model: (role == TurnRole::Assistant)
                        .then(|| self.model.clone())
                        .flatten(),
                    usage: None,
                    duration_ms: None,
                    started_at: started_at.clone(),
                    parent_fork_tool_call_id: parent_fork_tool_call_id
                        .as_ref()
                        .map(ToString::to_string),
                    failure_reason: None,
                };
                vec![self.open_turn(turn)]
            }
            AgentEvent::UserMessage { turn_id, content } => {
                let Some(index) = self.index_of(turn_id.as_str()) else {
                    return Vec::new();
                };
                self.turns[index]
                    .blocks
                    .extend(content.iter().map(user_block));
                Vec::new()
            }
            AgentEvent::QuestionAnswered { turn_id, answer } => {
                let Some(index) = self.index_of(turn_id.as_str()) else {
                    return Vec::new();
                };
                self.turns[index].blocks.push(Block {
                    kind: BlockType::AskUserAnswer,
                    content: json!(answer),
                    tool_call_id: Some(answer.tool_call_id.to_string()),
                    tool_name: None,
                    display_name: None,
                });
                Vec::new()
            }
            AgentEvent::TextDelta { turn_id, text } => {
                self.add_content(turn_id.as_str(), BlockType::Text, text)
            }
            AgentEvent::ThinkingDelta { turn_id, text } => {
                self.add_content(turn_id.as_str(), BlockType::Thinking, text)
            }
            AgentEvent::ToolCall(call) => {
                let Some(index) = self.index_of(call.turn_id.as_str()) else {
                    return Vec::new();
                };
                let view = ToolCallView {
                    id: call.tool_call_id.to_string(),
                    tool_name: call.tool_name.clone(),
                    display_name: call.title.clone(),
                    arguments: call.raw_input.to_string(),
                    status: ToolState::Pending,
                    result: None,
                    duration_ms: None,
                    kind: call.kind.as_str().to_owned(),
                    content: Vec::new(),
                };
                vec![self.add_tool_call(index, view)]
            }
            AgentEvent::ToolCallUpdate(update) => {
                let id = update.tool_call_id.to_string();
                if let Some(title) = &update.title {
                    for (turn, call) in self.places(&id) {
                        self.turns[turn].tool_calls[call].display_name = title.clone();
                    }
                }
                match update.status {
                    Some(status @ (ToolCallStatus::Completed | ToolCallStatus::Failed)) => {
                        let state = match (&update.refusal, status) {
                            (_, ToolCallStatus::Completed) => ToolState::Done,
                            (Some(Refusal::Cancelled { .. }), _) => ToolState::Cancelled,
                            _ => ToolState::Error,
                        };
                        let content = update.content.clone().unwrap_or_default();
                        self.tool_result(&id, state, &content, update.duration_ms)
                    }
                    Some(ToolCallStatus::AwaitingAnswer) => {
                        self.set_tool_status(&id, ToolState::AwaitingAnswer)
                    }
                    Some(ToolCallStatus::InProgress) => {
                        // Running again after an answer; a call that just started stays pending.
                        let waited = self.places(&id).into_iter().any(|(turn, call)| {
                            self.turns[turn].tool_calls[call].status == ToolState::AwaitingAnswer
                        });
                        if waited {
                            self.set_tool_status(&id, ToolState::Pending)
                        } else {
                            Vec::new()
                        }
                    }
                    _ => Vec::new(),
                }
            }
            AgentEvent::QuestionPending(question) => self.question_pending(question),
            AgentEvent::Usage {
                turn_id,
                usage,
                cost_usd,
                ..
            } => {
                self.spending.add_event(event);
                if let Some(index) = self.index_of(turn_id.as_str()) {
                    self.turns[index].usage = Some(usage_view(usage, *cost_usd));
                }
                Vec::new()
            }
            AgentEvent::Notice { message } => self.notice(message),
            AgentEvent::Compacted(compaction) => self.notice(&compaction.describe()),
            AgentEvent::Plan { entries } => {
                let data = json!({"session_id": self.session_id, "entries": entries});
                vec![self.chat_event("plan:update", data)]
            }
            AgentEvent::TurnEnded {
                turn_id,
                status,
                duration_ms,
                ..
            } => {
                let Some(index) = self.index_of(turn_id.as_str()) else {
                    return Vec::new();
                };
                let turn = &mut self.turns[index];
                turn.status = turn_state(*status);
                turn.duration_ms = *duration_ms;
                vec![self.turn_event("turn:end", index)]
            }
            AgentEvent::ChatEnded(summary) => vec![self.chat_end(summary)],
            AgentEvent::ChatFailed { message, .. } => self.chat_failed(message),
            AgentEvent::ChatInterrupted { .. } => {
                self.system_turn(CHAT_INTERRUPTED, TurnState::Interrupted)
            }
            // Permission answers are the permission exchange's, not the conversation's.
            _ => Vec::new(),
        }
    }

    fn index_of(&self, turn_id: &str) -> Option<usize> {
        self.turn_index.get(turn_id).copied()
    }

    fn places(&self, call_id: &str) -> Vec<(usize, usize)> {
        self.call_places.get(call_id).cloned().unwrap_or_default()
    }

    fn next_sequence(&mut self) -> u64 {
        self.sequence += 1;
        self.sequence
    }

    fn open_turn(&mut self, mut turn: TurnProjection) -> ServerEvent {
        let index = self.turns.len();
        self.turn_index.insert(turn.turn_id.clone(), index);
        turn.sequence = self.sequence;
        self.turns.push(turn);
        self.turn_event("turn:start", index)
    }

    /// `turn:start` or `turn:end`: the whole turn.
    fn turn_event(&mut self, event: &'static str, index: usize) -> ServerEvent {
        let sequence = self.next_sequence();
        let turn = &mut self.turns[index];
        turn.sequence = sequence;
        let mut data = json!(turn);
        data["session_id"] = json!(self.session_id);
        ServerEvent { event, data }
    }

    /// A `turn:patch` of turn `index`.
    fn patch(&mut self, index: usize, patch_type: &str, data: Value) -> ServerEvent {
        let sequence = self.next_sequence();
        let turn = &mut self.turns[index];
        turn.sequence = sequence;
        ServerEvent {
            event: "turn:patch",
            data: json!({
                "session_id": self.session_id,
                "sequence": sequence,
                "turn_id": turn.turn_id,
                "loop_id": turn.loop_id,
                "patch_type": patch_type,
                "data": data,
            }),
        }
    }

    /// An event of the session outside the conversation (`permission:request`, …), numbered in
    /// the session's sequence.
    pub fn other_event(&mut self, event: &'static str, data: Value) -> ServerEvent {
        self.chat_event(event, data)
    }

    fn chat_event(&mut self, event: &'static str, mut data: Value) -> ServerEvent {
        data["sequence"] = json!(self.next_sequence());
        ServerEvent { event, data }
    }

    fn add_content(&mut self, turn_id: &str, kind: BlockType, delta: &str) -> Vec<ServerEvent> {
        let Some(index) = self.index_of(turn_id) else {
            return Vec::new();
        };
        let blocks = &mut self.turns[index].blocks;
        let block_index = match blocks.last_mut() {
            Some(Block {
                kind: last,
                content: Value::String(text),
                ..
            }) if *last == kind => {
                text.push_str(delta);
                blocks.len() - 1
            }
            _ => {
                blocks.push(Block {
                    kind,
                    content: Value::String(delta.to_owned()),
                    tool_call_id: None,
                    tool_name: None,
                    display_name: None,
                });
                blocks.len() - 1
            }
        };
        let content = blocks[block_index].content.clone();
        let data = json!({
            "type": kind,
            "text_delta": delta,
            "content": content,
            "block_index": block_index,
        });
        vec![self.patch(index, "add_content", data)]
    }

    fn add_tool_call(&mut self, index: usize, view: ToolCallView) -> ServerEvent {
        let turn = &mut self.turns[index];
        turn.blocks.push(Block {
            kind: BlockType::ToolUse,
            content: Value::String(view.arguments.clone()),
            tool_call_id: Some(view.id.clone()),
            tool_name: Some(view.tool_name.clone()),
            display_name: Some(view.display_name.clone()),
        });
        turn.tool_calls.push(view.clone());
        self.call_places
            .entry(view.id.clone())
            .or_default()
            .push((index, turn.tool_calls.len() - 1));
        self.patch(index, "add_tool_call", json!(view))
    }

    fn set_tool_status(&mut self, call_id: &str, status: ToolState) -> Vec<ServerEvent> {
        self.places(call_id)
            .into_iter()
            .map(|(turn, call)| {
                self.turns[turn].tool_calls[call].status = status;
                let data = json!({"tool_call_id": call_id, "status": status});
                self.patch(turn, "set_tool_status", data)
            })
            .collect()
    }

    fn tool_result(
        &mut self,
        call_id: &str,
        status: ToolState,
        content: &[ToolContent],
        duration_ms: Option<u64>,
    ) -> Vec<ServerEvent> {
        let result: String = content
            .iter()
            .filter_map(ToolContent::model_text)
            .collect::<Vec<_>>()
            .join("\n");
        let rich: Vec<Value> = content
            .iter()
            .filter(|c| matches!(c, ToolContent::Diff { .. } | ToolContent::Terminal { .. }))
            .map(|c| json!(c))
            .collect();
        self.places(call_id)
            .into_iter()
            .map(|(turn, call)| {
                let view = &mut self.turns[turn].tool_calls[call];
                view.status = status;
                view.result = Some(result.clone());
                view.duration_ms = duration_ms;
                view.content = rich.clone();
                let (tool_name, display_name) = (view.tool_name.clone(), view.display_name.clone());
                self.turns[turn].blocks.push(Block {
                    kind: BlockType::ToolResult,
                    content: Value::String(result.clone()),
                    tool_call_id: Some(call_id.to_owned()),
                    tool_name: Some(tool_name),
                    display_name: Some(display_name),
                });
                let data = json!({
                    "tool_call_id": call_id,
                    "result": result,
                    "status": status,
                    "duration_ms": duration_ms,
                    "content": rich,
                });
                self.patch(turn, "tool_result", data)
            })
            .collect()
    }

    /// The asking call's arguments name the loop that asks; a sub-agent's question is also put
    /// in the main loop's open turn (the one whose Agent call waits), so clients that show only
    /// the main loop see it.
    fn question_pending(&mut self, question: &PendingQuestion) -> Vec<ServerEvent> {
        let id = question.tool_call_id.to_string();
        let arguments = json!({
            "questions": question.questions,
            "source_loop": question.source_loop,
        })
        .to_string();
        for (turn, call) in self.places(&id) {
            self.turns[turn].tool_calls[call].arguments = arguments.clone();
        }
        let Some(source) = &question.source_loop else {
            return Vec::new();
        };
        let Some(root) = self.root_turn_of(source.parent_fork_tool_call_id.as_str()) else {
            return Vec::new();
        };
        let Some(&(turn, call)) = self.places(&id).first() else {
            return Vec::new();
        };
        let mut bubbled = self.turns[turn].tool_calls[call].clone();
        bubbled.arguments = arguments;
        vec![self.add_tool_call(root, bubbled)]
    }

    /// The main loop's turn that (through its Agent calls) started the call `call_id`'s loop.
    fn root_turn_of(&self, call_id: &str) -> Option<usize> {
        let mut call_id = call_id.to_owned();
        loop {
            let &(turn, _) = self.call_places.get(&call_id)?.first()?;
            match &self.turns[turn].parent_fork_tool_call_id {
                None => return Some(turn),
                Some(parent) => call_id = parent.clone(),
            }
        }
    }

    fn notice(&mut self, message: &str) -> Vec<ServerEvent> {
        self.system_turn(message, TurnState::Completed)
    }

    /// A `system` turn saying `message`, begun and ended at once.
    fn system_turn(&mut self, message: &str, status: TurnState) -> Vec<ServerEvent> {
        self.notices += 1;
        // Counted, not numbered in the sequence: a server reading the session back from a
        // shared store gives each notice the id its chat's server gave it.
        let id = format!("notice_{}", self.notices);
        let turn = TurnProjection {
            id: id.clone(),
            sequence: 0,
            turn_id: id,
            loop_id: agentry::event::ROOT_LOOP.to_owned(),
            role: TurnRole::System,
            status,
            blocks: vec![Block {
                kind: BlockType::Text,
                content: Value::String(message.to_owned()),
                tool_call_id: None,
                tool_name: None,
                display_name: None,
            }],
            tool_calls: Vec::new(),
            model: None,
            usage: None,
            duration_ms: Some(0),
            started_at: None,
            parent_fork_tool_call_id: None,
            failure_reason: None,
        };
        let start = self.open_turn(turn);
        let end = self.turn_event("turn:end", self.turns.len() - 1);
        vec![start, end]
    }

    fn chat_end(&mut self, summary: &ChatSummary) -> ServerEvent {
        let (status, finish_reason) = match summary.stop_reason {
            StopReason::EndTurn => ("completed", "completed"),
            StopReason::Paused => ("completed", "paused"),
            StopReason::MaxTokens => ("completed", "max_tokens"),
            StopReason::MaxTurnRequests => ("completed", "max_turn_requests"),
            StopReason::MaxBudget => ("completed", "max_budget"),
            StopReason::HookStopped => ("completed", "hook_stopped"),
            StopReason::Refusal => ("completed", "refusal"),
            StopReason::Cancelled => ("interrupted", "interrupted"),
        };
        let mut result = json!({"output": summary.result});
        if let Some(schema) = self.output_schema.take() {
            result["schema"] = schema;
        }
        let end = ChatEnd {
            session_id: self.session_id.clone(),
            sequence: self.next_sequence(),
            status: status.to_owned(),
            result: Some(result),
            finish_reason: finish_reason.to_owned(),
            usage: Some(usage_view(&summary.usage, summary.cost_usd())),
            session_cost_usd: self.spending.cost_usd(),
            duration_ms: Some(summary.duration_ms),
            error: None,
        };
        self.end_chat(end)
    }

    fn end_chat(&mut self, end: ChatEnd) -> ServerEvent {
        let data = json!(end);
        self.last_chat_end = Some(data.clone());
        ServerEvent {
            event: "chat:end",
            data,
        }
    }

    /// A failed chat: its open turns fail with the reason, then `chat:end` says so.
    fn chat_failed(&mut self, message: &str) -> Vec<ServerEvent> {
        let mut events = self.end_open_turns(TurnState::Failed, Some(message));
        let end = self.unfinished_end("failed", "error", Some(message));
        events.push(self.end_chat(end));
        events
    }
}

fn usage_view(usage: &Usage, cost_usd: Option<f64>) -> UsageView {
    UsageView {
        input_tokens: usage.input_tokens,
        output_tokens: usage.output_tokens,
        cache_read_tokens: usage.cache_read_tokens,
        cache_write_tokens: usage.cache_write_tokens,
        cost_usd,
    }
}

fn turn_state(status: TurnStatus) -> TurnState {
    match status {
        TurnStatus::Streaming => TurnState::Streaming,
        TurnStatus::Paused => TurnState::Paused,
        TurnStatus::Cancelled => TurnState::Interrupted,
        TurnStatus::Failed => TurnState::Failed,
        _ => TurnState::Completed,
    }
}

/// A block of the user's message.
fn user_block(content: &ContentBlock) -> Block {
    let (kind, content) = match content {
        ContentBlock::Text { text } => (BlockType::Text, Value::String(text.clone())),
        ContentBlock::Image { data, mime_type } => (
            BlockType::Image,
            json!({"mime_type": mime_type, "data": data}),
        ),
        other => (BlockType::File, json!(other)),
    };
    Block {
        kind,
        content,
        tool_call_id: None,
        tool_name: None,
        display_name: None,
    }
}
