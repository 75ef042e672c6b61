//! One chat: the loop of model requests and tool batches, from the user's content to a stop reason.

use super::{ChatIo, ChatOptions, Session};
use crate::agent::meter::Meter;
use crate::agent::{compaction, tool_search};
use crate::commands::CommandPrompt;
use crate::error::AgentError;
use crate::event::{AgentEvent, ChatSummary, EventSink, Role, StopReason, TurnStatus, Usage};
use crate::executor::{BeforeChange, Executor};
use crate::ids::TurnId;
use crate::model::{AssistantContent, FinishReason, Message, ToolDefinition, ToolResult};
use crate::pause::{ChatPauses, PausedLoop};
use crate::permission::{PermissionPolicy, PermissionRule};
use crate::prompt::{SystemPromptParts, build_system_prompt, environment_block};
use crate::question::QuestionAnswer;
use crate::session::Transcript;
use crate::sync::lock;
use crate::tool::ContentBlock;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

mod budget;
mod checkpointing;
mod command;
mod context;
mod hooks;
mod output;
mod pausing;
mod recording;
mod scope;
mod streaming;
mod turns;
use output::OutputCheck;
use recording::RecordState;
pub(crate) use recording::compact;
use streaming::{Response, StreamEnd};

/// Records every event of the chat into its transcript and passes it on.
struct Recorder {
    inner: Arc<dyn EventSink>,
    transcript: Mutex<Transcript>,
}

impl EventSink for Recorder {
    fn emit(&self, event: AgentEvent) {
        lock(&self.transcript).push(&event);
        self.inner.emit(event);
    }
}

/// How a chat begins.
pub(crate) enum Start {
    /// With the user's message (a slash command's prompt, whose calls run first).
    Prompt(CommandPrompt),
    /// By taking a paused loop up again where it stopped; the main loop's resumption carries
    /// the user's answer.
    Resume {
        /// The loop as it paused.
        paused: PausedLoop,
        /// The answer that resumes the chat (for the main loop).
        answer: Option<QuestionAnswer>,
    },
}

/// One chat under way. Its parts by concern: the request (`request`), the answer's schema
/// (`output`), what the store has of it (`record`), pause and resume (`pauses`), and the
/// conversation it adds (`new_messages`, with its `usage` and `requests`).
struct Chat<'s> {
    session: &'s mut Session,
    io: &'s ChatIo,
    /// Every event of the chat passes through it into the transcript.
    recorder: Arc<Recorder>,
    /// What each model request sends besides the conversation.
    request: RequestParts,
    /// The schema the answer must satisfy, and the attempts at it.
    output: OutputCheck,
    /// What the session store has of this chat.
    record: RecordState,
    /// The pauses this chat shares with its sub-agents.
    pauses: Arc<ChatPauses>,
    /// The messages this chat adds to the history.
    new_messages: Vec<Message>,
    /// The model's usage in this chat's own loop.
    usage: Usage,
    /// What this chat and its sub-agents spend, against the session's budget.
    meter: Arc<Meter>,
    /// The model requests this chat made.
    requests: u32,
    /// How many times in a row stop hooks made this chat go on.
    stop_hook_blocks: u32,
    /// Where a hook's `continue: false` waits for the chat to stop.
    hook_stop: Arc<crate::hooks::StopRequest>,
    /// How many of `new_messages` the session's transcript has.
    transcribed: usize,
    /// When each open turn began.
    turn_clocks: Mutex<HashMap<TurnId, Instant>>,
    /// This chat's checkpoint (a main chat's, when the agent keeps checkpoints).
    checkpoint: Option<Arc<checkpointing::ChatCheckpointer>>,
    /// What runs before each call that may change the workspace: this chat's checkpoint, or
    /// the calling chat's for a sub-agent.
    before_change: Option<Arc<dyn BeforeChange>>,
    /// The rules a slash command allows while this chat runs (its `allowed-tools`).
    allowed: Vec<PermissionRule>,
}

/// What each model request of a chat sends besides the conversation: the system prompt and the
/// tools offered (both change when a provider's tools do, the tools also when tool search finds
/// more), and the environment block at the conversation's head.
struct RequestParts {
    system: String,
    tools: Vec<ToolDefinition>,
    environment: String,
    /// Every tool the registry offers, and those that may be held back by group: what tool
    /// search chooses the request's tools from.
    offered: Vec<ToolDefinition>,
    groups: Vec<(String, Vec<String>)>,
}

pub(crate) async fn run(
    session: &mut Session,
    start: Start,
    options: &ChatOptions,
    io: &ChatIo,
    pauses: Arc<ChatPauses>,
    before_change: Option<Arc<dyn BeforeChange>>,
    meter: Option<Arc<Meter>>,
) -> Result<ChatSummary, AgentError> {
    let started = Instant::now();
    let output = OutputCheck::new(options.output_schema.as_ref())?;
    let registry = session.executor.registry();
    let offered = registry.definitions_offered(io.questions.is_some());
    let groups = registry.deferrable_groups();
    let environment = environment(session);
    let title = match &start {
        Start::Prompt(prompt) if session.history.is_empty() => {
            title_of(prompt.content().cloned().collect::<Vec<_>>().as_slice())
        }
        _ => None,
    };
    let recorder = Arc::new(Recorder {
        inner: io.events.clone(),
        transcript: Mutex::default(),
    });
    let checkpoint = checkpointing::checkpointer(session, &recorder);
    let before_change =
        before_change.or_else(|| checkpoint.clone().map(|c| c as Arc<dyn BeforeChange>));
    let meter = meter.unwrap_or_else(|| {
        let budget = session.agent.inner.config.max_budget_usd;
        Arc::new(Meter::new(&session.spending, budget))
    });
    let mut chat = Chat {
        session,
        io,
        recorder,
        request: RequestParts {
            system: String::new(),
            tools: Vec::new(),
            environment,
            offered,
            groups,
        },
        output,
        record: RecordState::new(title),
        pauses,
        new_messages: Vec::new(),
        usage: Usage::default(),
        meter,
        requests: 0,
        stop_hook_blocks: 0,
        hook_stop: Arc::default(),
        transcribed: 0,
        turn_clocks: Mutex::default(),
        checkpoint,
        before_change,
        allowed: Vec::new(),
    };
    chat.plan_tools();
    chat.emit(AgentEvent::ChatStarted {
        session_id: chat.session.id.clone(),
    });
    chat.report_rules();
    let outcome = chat.run_loop(start).await;
    chat.transcribe();
    let spending = chat.meter.spending();
    if chat.session.fork.is_none() {
        chat.session.spending.merge(&spending);
    }
    let stop_reason = outcome.as_ref().ok().map(|(stop, _)| *stop);
    let saved = match (stop_reason, chat.save(stop_reason).await) {
        // A cancelled chat ends interrupted even when its end cannot be written (a server
        // sharing a store cancels its chat when the store goes away), as the store shows it
        // when read back: the chat begun and never ended. The failed write is said.
        (Some(StopReason::Cancelled), Err(error)) => {
            chat.io.events.emit(AgentEvent::Notice {
                message: format!("the interrupted chat's end was not recorded: {error}"),
            });
            Ok(())
        }
        (_, saved) => saved,
    };
    let session_id = chat.session.id.clone();
    match (outcome, saved) {
        (Ok((stop_reason, result)), Ok(())) => {
            let summary = ChatSummary {
                session_id,
                stop_reason,
                result,
                usage: chat.usage,
                spending,
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

    /// The permission policy the chat's calls run under: the session's, and the rules its
    /// slash command allows.
    fn policy(&self) -> PermissionPolicy {
        let mut policy = self.session.options.policy.clone();
        policy.rules.extend(self.allowed.iter().cloned());
        policy
    }

    /// Takes up the providers' new tools, if any changed since the last request (an MCP server
    /// announced a new list): the next request offers them.
    fn refresh_tools(&mut self) {
        let Some(registry) = self.session.executor.registry().refreshed() else {
            return;
        };
        self.request.offered = registry.definitions_offered(self.io.questions.is_some());
        self.request.groups = registry.deferrable_groups();
        self.session.executor = Executor::new(Arc::new(registry));
    }

    /// Chooses the next request's tools (tool search may hold some back, and sends those found
    /// since) and its system prompt, which lists the tools and names the groups held back.
    fn plan_tools(&mut self) {
        let session = &*self.session;
        let plan = tool_search::plan(
            self.request.offered.clone(),
            &self.request.groups,
            &session.agent.inner.config.tool_search,
            session.model.context_window(),
            &[&session.history, &self.new_messages],
            &session.state,
        );
        self.request.system = system_prompt(
            session,
            &plan.sent[..plan.listed],
            &plan.deferred,
            self.output.schema(),
        );
        self.request.tools = plan.sent;
    }

    /// Runs model requests and tool batches until a stop reason; returns it with the result.
    async fn run_loop(&mut self, start: Start) -> Result<(StopReason, Value), AgentError> {
        match start {
            Start::Prompt(prompt) => {
                let context = if self.session.fork.is_none() {
                    self.start_hooks().await;
                    let text: Vec<ContentBlock> = prompt.content().cloned().collect();
                    self.prompt_hooks(crate::model::text_of(&text)).await?
                } else {
                    None
                };
                let mut content = self.carry_out(prompt).await?;
                if self.session.fork.is_none() {
                    self.add_hook_context(&mut content, context);
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
            if let Some(reason) = self.hook_stop.asked() {
                self.emit(AgentEvent::Notice {
                    message: format!("A hook stopped the agent: {reason}"),
                });
                return Ok((StopReason::HookStopped, self.last_answer()));
            }
            self.refresh_tools();
            self.plan_tools();
            self.deliver_notices();
            if let Some(why) = self.over_budget()? {
                self.emit(AgentEvent::Notice { message: why });
                return Ok((StopReason::MaxBudget, self.last_answer()));
            }
            self.fit_context().await?;
            self.transcribe();
            let mut recording = self.start_recording();
            if self.io.cancel.is_cancelled() {
                self.finish_recording(recording).await?;
                return Ok((StopReason::Cancelled, self.last_answer()));
            }
            self.requests += 1;
            self.meter.count_request(&self.session.model.name());
            let turn_id = TurnId::generate();
            self.start_turn(&turn_id, Role::Assistant, TurnStatus::Streaming);
            let scope = self.scope(&turn_id);
            let response = self.stream_response(&scope, recording.as_mut()).await;
            if let Err(error) = self.finish_recording(recording).await {
                for call in response.calls {
                    self.session
                        .executor
                        .abandon(call, "Not run: the chat could not be recorded.");
                }
                self.end_turn(turn_id, TurnStatus::Failed);
                return Err(error);
            }
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
                    self.stop_failure_hooks(&error).await;
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
                Some(StopReason::EndTurn) if self.hook_stop.asked().is_some() => continue,
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

    /// Adds the notices that tools left for the model (a background command finished) to the
    /// conversation, as a reminder at the end of the latest user message or after the latest tool
    /// results.
    fn deliver_notices(&mut self) {
        let mut notices = self.session.state.notices().take();
        let registry = self.session.executor.registry();
        notices.extend(registry.take_notices(&self.session.id));
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

    /// Adds a response and its tool results to the conversation, each result bounded to the
    /// most a result may bring into it (the whole kept on disk).
    fn push_response(&mut self, content: Vec<AssistantContent>, results: Vec<ToolResult>) {
        let limit = self
            .session
            .agent
            .inner
            .config
            .compaction
            .max_tool_result_chars;
        let results: Vec<ToolResult> = results
            .into_iter()
            .map(|result| compaction::bounded(result, limit, &self.session.state))
            .collect();
        if !content.is_empty() {
            self.new_messages.push(Message::Assistant {
                content,
                origin: Some(self.session.model.name()),
            });
        }
        if !results.is_empty() {
            self.new_messages.push(Message::ToolResults { results });
        }
    }
}

/// The environment block of a session's chat: its folder, today's date, the instruction files
/// of the agent's source (none that a `Read(…)` deny rule covers).
fn environment(session: &Session) -> String {
    let today = chrono::Local::now().format("%Y-%m-%d").to_string();
    let cwd = &session.options.cwd;
    let files = match &session.agent.inner.instructions {
        Some(source) => {
            let denials = session.options.policy.read_denials("Read", cwd);
            source.instruction_files(cwd, &denials)
        }
        None => Vec::new(),
    };
    environment_block(cwd, &today, &files)
}

/// The system prompt of a session's chat offering `tools` (and asking for an answer that
/// satisfies `output_schema`, when there is one).
fn system_prompt(
    session: &Session,
    tools: &[ToolDefinition],
    deferred_tools: &[(String, usize)],
    output_schema: Option<&Value>,
) -> String {
    let base = match &session.fork {
        Some(fork) => &fork.system_prompt,
        None => &session.agent.inner.config.base_prompt,
    };
    let mut system = build_system_prompt(&SystemPromptParts {
        base,
        tools,
        deferred_tools,
        session_instructions: session.options.instructions.as_deref(),
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
