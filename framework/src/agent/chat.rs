//! One chat: the loop of model requests and tool batches, from the user's content to a stop reason.

use super::compaction::{estimate_tokens, needs_compaction, split_point, summarise};
use super::{ChatIo, ChatOptions, Session};
use crate::agent::subagent::{ROOT_LOOP, SubAgents};
use crate::error::AgentError;
use crate::event::{AgentEvent, ChatSummary, EventSink, Role, StopReason, TurnStatus, Usage};
use crate::executor::CallResult;
use crate::executor::{CallScope, Executor};
use crate::ids::{ToolCallId, TurnId};
use crate::model::side::SessionModel;
use crate::model::{
    AssistantContent, ContentBlock, FinishReason, Message, ToolDefinition, ToolResult,
};
use crate::pause::{ChatPauses, PausedChat, PausedLoop, SourceLoop};
use crate::prompt::{SystemPromptParts, build_system_prompt};
use crate::question::{QuestionAnswer, UserQuestions};
use crate::session::{ChatKey, Transcript};
use crate::sync::lock;
use crate::tool::Extensions;
use serde_json::Value;
use std::sync::{Arc, Mutex};
use std::time::Instant;

mod hooks;
mod output;
mod recording;
mod streaming;
pub(crate) use recording::compact;
use streaming::{Response, StreamEnd};

/// Records every event of the chat into its transcript and passes it on.
struct Recorder {
    inner: Arc<dyn EventSink>,
    transcript: Mutex<Transcript>,
}

impl EventSink for Recorder {
    fn emit(&self, event: AgentEvent) {
        lock(&self.transcript).push(event.clone());
        self.inner.emit(event);
    }
}

/// How a chat begins.
pub(crate) enum Start {
    /// With the user's message.
    Prompt(Vec<ContentBlock>),
    /// By taking a paused loop up again where it stopped; the main loop's resumption carries
    /// the user's answer.
    Resume {
        /// The loop as it paused.
        paused: PausedLoop,
        /// The answer that resumes the chat (for the main loop).
        answer: Option<QuestionAnswer>,
    },
}

/// What the model reads for a waiting call given up because the user wrote something new.
const NOT_ANSWERED: &str =
    "Not answered: the user sent a new message instead of answering. Go on from that message.";

struct Chat<'s> {
    session: &'s mut Session,
    io: &'s ChatIo,
    /// The pauses this chat shares with its sub-agents.
    pauses: Arc<ChatPauses>,
    recorder: Arc<Recorder>,
    system: String,
    tools: Vec<ToolDefinition>,
    /// The schema the answer must satisfy, if the caller gave one (the system prompt says so).
    output_schema: Option<Value>,
    new_messages: Vec<Message>,
    usage: Usage,
    requests: u32,
    output_checker: Option<jsonschema::Validator>,
    schema_attempts: u32,
    /// Whether the session's history was compacted during this chat since the store last
    /// recorded it.
    compacted: bool,
    /// The title this chat gives the session, if it is its first.
    title: Option<String>,
    /// The chat as the store began recording it, once it has.
    begun: Option<ChatKey>,
    /// How many of `new_messages` the store has recorded.
    recorded_messages: usize,
    /// Whether a stop hook made this chat go on already.
    stop_hook_went_on: bool,
    /// When each open turn began.
    turn_clocks: Mutex<std::collections::HashMap<TurnId, Instant>>,
}

pub(crate) async fn run(
    session: &mut Session,
    start: Start,
    options: &ChatOptions,
    io: &ChatIo,
    pauses: Arc<ChatPauses>,
) -> Result<ChatSummary, AgentError> {
    let started = Instant::now();
    let output_checker = options
        .output_schema
        .as_ref()
        .map(|schema| {
            jsonschema::validator_for(schema)
                .map_err(|e| AgentError::InvalidOutputSchema(e.to_string()))
        })
        .transpose()?;
    let tools = session
        .executor
        .registry()
        .definitions_offered(io.questions.is_some());
    let system = system_prompt(session, &tools, options.output_schema.as_ref());
    let title = match &start {
        Start::Prompt(content) if session.history.is_empty() => title_of(content),
        _ => None,
    };
    let recorder = Arc::new(Recorder {
        inner: io.events.clone(),
        transcript: Mutex::default(),
    });
    let mut chat = Chat {
        session,
        io,
        pauses,
        recorder,
        system,
        tools,
        output_schema: options.output_schema.clone(),
        new_messages: Vec::new(),
        usage: Usage::default(),
        requests: 0,
        output_checker,
        schema_attempts: 0,
        compacted: false,
        title,
        begun: None,
        recorded_messages: 0,
        turn_clocks: Mutex::default(),
        stop_hook_went_on: false,
    };
    chat.emit(AgentEvent::ChatStarted {
        session_id: chat.session.id.clone(),
    });
    chat.report_rules();
    let outcome = chat.run_loop(start).await;
    let stop_reason = outcome.as_ref().ok().map(|(stop, _)| *stop);
    let saved = chat.save(stop_reason).await;
    let session_id = chat.session.id.clone();
    match (outcome, saved) {
        (Ok((stop_reason, result)), Ok(())) => {
            let summary = ChatSummary {
                session_id,
                stop_reason,
                result,
                usage: chat.usage,
                model_requests: chat.requests,
                duration_ms: started.elapsed().as_millis() as u64,
            };
            chat.io.events.emit(AgentEvent::ChatEnded(summary.clone()));
            Ok(summary)
        }
        (Err(error), _) | (Ok(_), Err(error)) => {
            chat.io.events.emit(AgentEvent::ChatFailed {
                session_id,
                message: error.to_string(),
            });
            Err(error)
        }
    }
}

fn title_of(content: &[ContentBlock]) -> Option<String> {
    content.iter().find_map(|block| match block {
        ContentBlock::Text { text } if !text.trim().is_empty() => {
            let line = text.trim().lines().next().unwrap_or_default();
            Some(line.chars().take(80).collect())
        }
        _ => None,
    })
}

impl Chat<'_> {
    fn emit(&self, event: AgentEvent) {
        self.recorder.emit(event);
    }

    /// The call whose sub-agent this chat is, if it is one.
    fn parent_fork_tool_call_id(&self) -> Option<ToolCallId> {
        let fork = self.session.fork.as_ref()?;
        Some(fork.origin.parent_tool_call_id.clone())
    }

    /// The id of this chat's loop.
    fn loop_id(&self) -> String {
        self.session
            .fork
            .as_ref()
            .map_or_else(|| ROOT_LOOP.to_owned(), |fork| fork.origin.loop_id.clone())
    }

    fn user_turn(&mut self, content: Vec<ContentBlock>) {
        let turn_id = TurnId::generate();
        self.start_turn(&turn_id, Role::User, TurnStatus::Completed);
        self.emit(AgentEvent::UserMessage {
            turn_id: turn_id.clone(),
            content: content.clone(),
        });
        self.end_turn_of(turn_id, Role::User, TurnStatus::Completed);
        self.new_messages.push(Message::User { content });
    }

    fn scope(&self, turn_id: &TurnId) -> CallScope {
        let session = &self.session;
        let mut extensions = Extensions::default();
        extensions.insert(Arc::new(SubAgents {
            agent: session.agent.clone(),
            options: session.options.clone(),
            model: session.model.clone(),
            registry: session.executor.registry().clone(),
            remembered: session.remembered.clone(),
            events: self.recorder.clone(),
            permissions: self.io.permissions.clone(),
            questions: self.io.questions.clone(),
            pauses: self.pauses.clone(),
            depth: session.fork.as_ref().map_or(0, |fork| fork.origin.depth),
        }));
        extensions.insert(Arc::new(SessionModel::new(session.model.clone())));
        if let Some(mode) = session.options.sandbox {
            extensions.insert(Arc::new(mode));
        }
        if let Some(handler) = &self.io.questions {
            extensions.insert(Arc::new(UserQuestions {
                handler: handler.clone(),
                source_loop: session.fork.as_ref().map(|fork| SourceLoop {
                    loop_id: fork.origin.loop_id.clone(),
                    parent_fork_tool_call_id: fork.origin.parent_tool_call_id.clone(),
                }),
                pauses: self.pauses.clone(),
                events: self.recorder.clone(),
            }));
        }
        CallScope {
            session_id: session.id.clone(),
            turn_id: turn_id.clone(),
            cwd: session.options.cwd.clone(),
            workspace_roots: session.options.workspace_roots.clone(),
            client: session.options.client.clone(),
            state: session.state.clone(),
            policy: session.options.policy.clone(),
            remembered: session.remembered.clone(),
            events: self.recorder.clone(),
            permissions: self.io.permissions.clone(),
            cancel: self.io.cancel.clone(),
            extensions,
            hooks: session.agent.hooks().cloned(),
        }
    }

    /// Takes up the providers' new tools, if any changed since the last request (an MCP server
    /// announced a new list): the next request offers them.
    fn refresh_tools(&mut self) {
        let Some(registry) = self.session.executor.registry().refreshed() else {
            return;
        };
        self.session.executor = Executor::new(Arc::new(registry));
        self.tools = self
            .session
            .executor
            .registry()
            .definitions_offered(self.io.questions.is_some());
        self.system = system_prompt(self.session, &self.tools, self.output_schema.as_ref());
    }

    /// Runs model requests and tool batches until a stop reason; returns it with the result.
    async fn run_loop(&mut self, start: Start) -> Result<(StopReason, Value), AgentError> {
        match start {
            Start::Prompt(mut content) => {
                if self.session.fork.is_none() {
                    self.prompt_hooks(&mut content).await?;
                }
                if let Some(paused) = self.session.paused.take() {
                    self.give_up(paused);
                }
                self.user_turn(content);
            }
            Start::Resume { paused, answer } => {
                if let Some(answer) = answer {
                    self.answer_turn(answer);
                }
                if let Some(stop) = self.resume_batch(paused).await {
                    return Ok((stop, self.last_answer()));
                }
            }
        }
        let max_requests = self
            .session
            .fork
            .as_ref()
            .and_then(|fork| fork.max_requests)
            .unwrap_or(self.session.agent.inner.config.max_chat_requests);
        loop {
            if self.io.cancel.is_cancelled() {
                return Ok((StopReason::Cancelled, self.last_answer()));
            }
            if self.requests >= max_requests {
                return Ok((StopReason::MaxTurnRequests, self.last_answer()));
            }
            self.refresh_tools();
            self.deliver_notices();
            self.fit_context().await?;
            self.record_progress().await?;
            if self.io.cancel.is_cancelled() {
                return Ok((StopReason::Cancelled, self.last_answer()));
            }
            self.requests += 1;
            let turn_id = TurnId::generate();
            self.start_turn(&turn_id, Role::Assistant, TurnStatus::Streaming);
            let scope = self.scope(&turn_id);
            let response = self.stream_response(&scope).await;
            self.usage += response.usage;
            let Response {
                content,
                calls,
                end,
                ..
            } = response;
            let executor = &self.session.executor;
            let (status, stop) = match end {
                StreamEnd::Failed(error) => {
                    for call in calls {
                        executor.abandon(call, "Not run: the model's response failed.");
                    }
                    self.end_turn(turn_id, TurnStatus::Failed);
                    return Err(error.into());
                }
                StreamEnd::Cancelled => {
                    // Cancellation is set, so each pending call fails as cancelled before running.
                    let results = executor.run_batch(calls, &scope).await;
                    self.push_response(content, Vec::new());
                    self.settle_batch(&turn_id, Vec::new(), results);
                    (TurnStatus::Cancelled, Some(StopReason::Cancelled))
                }
                StreamEnd::Finished(reason @ (FinishReason::MaxTokens | FinishReason::Refusal)) => {
                    let note = format!(
                        "Not run: the response ended with {} before the call could be made.",
                        if reason == FinishReason::MaxTokens {
                            "max_tokens"
                        } else {
                            "a refusal"
                        }
                    );
                    let results = calls
                        .into_iter()
                        .map(|call| executor.abandon(call, &note))
                        .collect();
                    self.push_response(content, results);
                    let stop = if reason == FinishReason::MaxTokens {
                        StopReason::MaxTokens
                    } else {
                        StopReason::Refusal
                    };
                    (TurnStatus::Completed, Some(stop))
                }
                StreamEnd::Finished(_) if !calls.is_empty() => {
                    let results = executor.run_batch(calls, &scope).await;
                    self.push_response(content, Vec::new());
                    self.settle_batch(&turn_id, Vec::new(), results)
                }
                StreamEnd::Finished(_) => {
                    self.push_response(content, Vec::new());
                    (TurnStatus::Completed, Some(StopReason::EndTurn))
                }
            };
            self.end_turn(turn_id, status);
            match stop {
                Some(StopReason::EndTurn) => match self.check_output()? {
                    Some(result) => {
                        if self.stop_hooks_go_on().await {
                            continue;
                        }
                        return Ok((StopReason::EndTurn, result));
                    }
                    None => continue,
                },
                Some(stop) => return Ok((stop, self.last_answer())),
                None => continue,
            }
        }
    }

    /// Takes the results of a batch (with those of its calls that finished before a pause): when
    /// a call waits for the user's answer, records the loop as paused; otherwise adds the
    /// results, in the order the model asked for the calls. Returns how the turn ends and, if
    /// the chat stops, why.
    fn settle_batch(
        &mut self,
        turn_id: &TurnId,
        mut finished: Vec<ToolResult>,
        results: Vec<CallResult>,
    ) -> (TurnStatus, Option<StopReason>) {
        let mut waiting = false;
        for result in results {
            match result {
                CallResult::Done(result) => finished.push(result),
                CallResult::AwaitingAnswer(_) => waiting = true,
            }
        }
        if waiting {
            // A sub-agent's history lives only in memory: the record carries it.
            let history = match self.session.fork {
                Some(_) => self
                    .session
                    .history
                    .iter()
                    .chain(&self.new_messages)
                    .cloned()
                    .collect(),
                None => Vec::new(),
            };
            self.pauses.pause_loop(PausedLoop {
                loop_id: self.loop_id(),
                turn_id: turn_id.clone(),
                history,
                finished,
                requests: self.requests,
            });
            return (TurnStatus::Paused, Some(StopReason::Paused));
        }
        let results = self.in_call_order(finished);
        self.push_response(Vec::new(), results);
        if self.io.cancel.is_cancelled() {
            (TurnStatus::Cancelled, Some(StopReason::Cancelled))
        } else {
            (TurnStatus::Completed, None)
        }
    }

    /// `results` in the order the model asked for their calls (in its latest response).
    fn in_call_order(&self, mut results: Vec<ToolResult>) -> Vec<ToolResult> {
        let order: Vec<&ToolCallId> = self
            .session
            .history
            .iter()
            .chain(&self.new_messages)
            .rev()
            .find_map(|m| match m {
                Message::Assistant { content } => Some(content),
                _ => None,
            })
            .into_iter()
            .flatten()
            .filter_map(|c| match c {
                AssistantContent::ToolCall { id, .. } => Some(id),
                _ => None,
            })
            .collect();
        results.sort_by_key(|r| order.iter().position(|id| **id == r.tool_call_id));
        results
    }

    /// The user turn of an answer that resumes the chat.
    fn answer_turn(&self, answer: QuestionAnswer) {
        let turn_id = TurnId::generate();
        self.start_turn(&turn_id, Role::User, TurnStatus::Completed);
        self.emit(AgentEvent::QuestionAnswered {
            turn_id: turn_id.clone(),
            answer,
        });
        self.end_turn_of(turn_id, Role::User, TurnStatus::Completed);
    }

    /// Takes a paused loop's turn up again: its waiting calls run again (the one that asked now
    /// finds the answer) and the batch is settled as if it had never stopped. Returns why the
    /// chat stops, if it does (paused again, cancelled).
    async fn resume_batch(&mut self, paused: PausedLoop) -> Option<StopReason> {
        self.requests = paused.requests;
        let turn_id = paused.turn_id.clone();
        self.start_turn(&turn_id, Role::Assistant, TurnStatus::Streaming);
        let scope = self.scope(&turn_id);
        let executor = self.session.executor.clone();
        let calls = paused
            .waiting_calls(&self.session.history)
            .into_iter()
            .map(|call| executor.reopen(call, &scope))
            .collect();
        let results = executor.run_batch(calls, &scope).await;
        let (status, stop) = self.settle_batch(&turn_id, paused.finished, results);
        self.end_turn(turn_id, status);
        stop
    }

    /// Gives up the calls a paused chat left waiting, because the user wrote a new message
    /// instead of answering: each fails with a note the model reads.
    fn give_up(&mut self, paused: PausedChat) {
        let executor = self.session.executor.clone();
        let (root, sub_agents) = paused.into_loops();
        for paused in sub_agents.values() {
            let scope = self.scope(&paused.turn_id);
            for call in paused.waiting_calls(&paused.history) {
                executor.abandon(executor.reopen(call, &scope), NOT_ANSWERED);
            }
        }
        let Some(paused) = root else {
            return;
        };
        let scope = self.scope(&paused.turn_id);
        let mut results = paused.finished.clone();
        for call in paused.waiting_calls(&self.session.history) {
            results.push(executor.abandon(executor.reopen(call, &scope), NOT_ANSWERED));
        }
        let results = self.in_call_order(results);
        self.push_response(Vec::new(), results);
    }

    /// Adds the notices that tools left for the model (a background command finished) to the
    /// conversation, as a reminder at the end of the latest user message or after the latest tool
    /// results.
    fn deliver_notices(&mut self) {
        let notices = self.session.state.notices().take();
        if notices.is_empty() {
            return;
        }
        let reminder = ContentBlock::Text {
            text: format!(
                "<system-reminder>\n{}\n</system-reminder>",
                notices.join("\n")
            ),
        };
        match self.new_messages.last_mut() {
            Some(Message::User { content }) => content.push(reminder),
            _ => self.new_messages.push(Message::User {
                content: vec![reminder],
            }),
        }
    }

    /// Compacts the history when the next request would not fit the model's context window.
    async fn fit_context(&mut self) -> Result<(), AgentError> {
        let model = self.session.model.clone();
        let Some(window) = model.context_window() else {
            return Ok(());
        };
        // Estimated in two parts, so the history is only copied when it must be compacted.
        let tokens = estimate_tokens(&self.system, &self.session.history, &self.tools)
            + estimate_tokens("", &self.new_messages, &[]);
        if !needs_compaction(tokens, window) {
            return Ok(());
        }
        let all: Vec<Message> = self
            .session
            .history
            .iter()
            .chain(&self.new_messages)
            .cloned()
            .collect();
        let Some(split) = split_point(&all, window) else {
            return Ok(());
        };
        let summary = tokio::select! {
            summary = summarise(model.as_ref(), &self.system, &all[..split], &self.tools, &mut self.usage) => summary?,
            () = self.io.cancel.cancelled() => return Ok(()),
        };
        let from_history = self.session.history.len();
        if split <= from_history {
            let kept = self.session.history.split_off(split);
            self.session.history = std::iter::once(summary).chain(kept).collect();
        } else {
            self.session.history = vec![summary];
            self.new_messages.drain(..split - from_history);
        }
        self.compacted = true;
        self.emit(AgentEvent::Notice {
            message: format!(
                "the conversation (about {tokens} tokens) was nearing the model's context window of {window}: \
                 {split} earlier messages were replaced by a summary"
            ),
        });
        Ok(())
    }

    fn start_turn(&self, turn_id: &TurnId, role: Role, status: TurnStatus) {
        lock(&self.turn_clocks).insert(turn_id.clone(), Instant::now());
        self.emit(AgentEvent::TurnStarted {
            turn_id: turn_id.clone(),
            role,
            status,
            parent_fork_tool_call_id: self.parent_fork_tool_call_id(),
            loop_id: self.loop_id(),
            started_at: Some(crate::session::now_rfc3339()),
        });
    }

    fn end_turn_of(&self, turn_id: TurnId, role: Role, status: TurnStatus) {
        let started = lock(&self.turn_clocks).remove(&turn_id);
        self.emit(AgentEvent::TurnEnded {
            turn_id,
            role,
            status,
            parent_fork_tool_call_id: self.parent_fork_tool_call_id(),
            loop_id: self.loop_id(),
            duration_ms: started.map(|at| at.elapsed().as_millis() as u64),
        });
    }

    fn end_turn(&self, turn_id: TurnId, status: TurnStatus) {
        self.end_turn_of(turn_id, Role::Assistant, status);
    }

    fn push_response(&mut self, content: Vec<AssistantContent>, results: Vec<ToolResult>) {
        if !content.is_empty() {
            self.new_messages.push(Message::Assistant { content });
        }
        if !results.is_empty() {
            self.new_messages.push(Message::ToolResults { results });
        }
    }
}

/// The system prompt of a session's chat offering `tools` (and asking for an answer that
/// satisfies `output_schema`, when there is one).
fn system_prompt(
    session: &Session,
    tools: &[ToolDefinition],
    output_schema: Option<&Value>,
) -> String {
    let base = match &session.fork {
        Some(fork) => &fork.system_prompt,
        None => &session.agent.inner.config.base_prompt,
    };
    let mut system = build_system_prompt(&SystemPromptParts {
        base,
        session_instructions: session.options.instructions.as_deref(),
        tools,
        cwd: &session.options.cwd,
        date: chrono::Local::now().format("%Y-%m-%d").to_string(),
    });
    if let Some(schema) = output_schema {
        system.push_str(&format!(
            "\n# Answer format\nEnd with an answer that is only a JSON value satisfying this JSON Schema, with no other text:\n{schema}\n"
        ));
    }
    system
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_title_is_the_first_line_of_the_first_text() {
        let content = vec![
            ContentBlock::Image {
                data: String::new(),
                mime_type: "image/png".into(),
            },
            ContentBlock::Text {
                text: "  Fix the parser\nand more".into(),
            },
        ];
        assert_eq!(title_of(&content).as_deref(), Some("Fix the parser"));
    }
}
