//! Paused chats: how a chat waits for the user's answer when its front-end cannot ask at once.
//!
//! A front-end that answers later (a web page over WebSocket) gives its chats the
//! [`PauseForAnswers`](crate::question::PauseForAnswers) question handler. When a tool asks the
//! user then (the builtin `AskUserQuestion`), the chat emits
//! [`AgentEvent::QuestionPending`](crate::event::AgentEvent::QuestionPending) (what is asked,
//! and which sub-agent's loop asks: the chat-flow protocol's `source_loop`), the call's status
//! becomes `awaiting_answer`, the other calls of its batch finish, the turn ends `paused` and the
//! chat ends with [`StopReason::Paused`](crate::event::StopReason::Paused). A question asked
//! inside a sub-agent pauses that sub-agent, and with it the Agent call waiting for it, up to the
//! main loop.
//!
//! The [`PausedChat`] is stored with the session, so that a new process reopening the session
//! can go on. [`Session::answer`](crate::agent::Session::answer) resumes: each paused loop takes
//! its turn up where it stopped, the waiting calls run again (the asking call now gets the
//! answer; the Agent call resumes its sub-agent with the history it had) and the loops go on as
//! if they had never stopped. A new message instead of an answer gives the waiting calls up: the
//! model reads that the user did not answer. A sub-agent's provider state (its task list, its
//! background commands) does not survive the pause; its history does.

use crate::ids::{ToolCallId, TurnId};
use crate::model::{AssistantContent, Message, ToolArguments, ToolCallRequest, ToolResult};
use crate::sync::lock;
use agentry_plugin::question::{Answers, PendingQuestion, QuestionAnswer};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::Mutex;

/// What a paused chat left waiting: its questions and the loops that wait for them. Stored
/// with the session's chat record; opaque but for its questions.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PausedChat {
    questions: Vec<PendingQuestion>,
    loops: Vec<PausedLoop>,
}

impl PausedChat {
    /// The questions waiting for an answer.
    pub fn questions(&self) -> &[PendingQuestion] {
        &self.questions
    }

    /// The question the call `tool_call_id` asked, if it waits.
    pub fn question(&self, tool_call_id: &ToolCallId) -> Option<&PendingQuestion> {
        self.questions
            .iter()
            .find(|q| &q.tool_call_id == tool_call_id)
    }

    /// Takes out the main loop's record and the others by loop id.
    pub(crate) fn into_loops(self) -> (Option<PausedLoop>, HashMap<String, PausedLoop>) {
        let mut loops: HashMap<String, PausedLoop> = self
            .loops
            .into_iter()
            .map(|l| (l.loop_id.clone(), l))
            .collect();
        let root = loops.remove(crate::event::ROOT_LOOP);
        (root, loops)
    }
}

/// One loop stopped at a tool batch whose calls wait.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct PausedLoop {
    /// The loop's id.
    pub loop_id: String,
    /// The assistant turn whose calls wait.
    pub turn_id: TurnId,
    /// A sub-agent's history, up to the response whose calls wait (the main loop's is the
    /// session's own).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub history: Vec<Message>,
    /// The results of the batch's calls that finished.
    pub finished: Vec<ToolResult>,
    /// The model requests the loop had made.
    pub requests: u32,
}

impl PausedLoop {
    /// The calls of the paused response (the last assistant message of `history`) that have
    /// no result yet, as the model asked for them.
    pub fn waiting_calls(&self, history: &[Message]) -> Vec<ToolCallRequest> {
        let Some(content) = history.iter().rev().find_map(|m| match m {
            Message::Assistant { content, .. } => Some(content),
            _ => None,
        }) else {
            return Vec::new();
        };
        content
            .iter()
            .filter_map(|c| match c {
                AssistantContent::ToolCall {
                    id,
                    name,
                    arguments,
                } if !self.finished.iter().any(|r| &r.tool_call_id == id) => {
                    Some(ToolCallRequest {
                        id: id.clone(),
                        name: name.clone(),
                        arguments: ToolArguments::Json(arguments.clone()),
                    })
                }
                _ => None,
            })
            .collect()
    }
}

/// The pause bookkeeping a chat shares with its sub-agents: what pauses, and what it resumes.
#[derive(Debug, Default)]
pub(crate) struct ChatPauses {
    /// What the chat's loops leave waiting, as they pause.
    paused: Mutex<PausedChat>,
    /// The sub-agents' loops this chat resumes, each taken when its Agent call runs again.
    resuming: Mutex<HashMap<String, PausedLoop>>,
    /// The answer this chat resumes with, until the call that asked takes it.
    answer: Mutex<Option<QuestionAnswer>>,
}

impl ChatPauses {
    /// For a chat resuming `loops` with `answer`.
    pub fn resuming(loops: HashMap<String, PausedLoop>, answer: QuestionAnswer) -> Self {
        Self {
            paused: Mutex::default(),
            resuming: Mutex::new(loops),
            answer: Mutex::new(Some(answer)),
        }
    }

    /// Records a question that pauses the chat.
    pub fn ask(&self, question: PendingQuestion) {
        lock(&self.paused).questions.push(question);
    }

    /// Records a loop that paused.
    pub fn pause_loop(&self, paused: PausedLoop) {
        lock(&self.paused).loops.push(paused);
    }

    /// The paused loop `loop_id` to resume, if this chat resumes it.
    pub fn take_loop(&self, loop_id: &str) -> Option<PausedLoop> {
        lock(&self.resuming).remove(loop_id)
    }

    /// The answer for the call `tool_call_id`, if this chat brings it.
    pub fn take_answer(&self, tool_call_id: &ToolCallId) -> Option<Answers> {
        let mut answer = lock(&self.answer);
        if answer.as_ref()?.tool_call_id != *tool_call_id {
            return None;
        }
        answer.take().map(|a| a.answers)
    }

    /// What the chat left waiting.
    pub fn take_paused(&self) -> PausedChat {
        std::mem::take(&mut *lock(&self.paused))
    }
}
