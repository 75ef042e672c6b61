//! Pause and resume inside a chat: settling a batch in which a call waits for the user's answer,
//! taking a paused loop up again, and giving its calls up when the user writes instead.

use super::Chat;
use crate::event::{AgentEvent, Role, StopReason, TurnStatus};
use crate::executor::CallResult;
use crate::ids::{ToolCallId, TurnId};
use crate::model::{AssistantContent, Message, ToolResult};
use crate::pause::{PausedChat, PausedLoop};
use crate::question::QuestionAnswer;

/// What the model reads for a waiting call given up because the user wrote something new.
const NOT_ANSWERED: &str =
    "Not answered: the user sent a new message instead of answering. Go on from that message.";

impl Chat<'_> {
    /// Takes the results of a batch (with those of its calls that finished before a pause): when
    /// a call waits for the user's answer, records the loop as paused; otherwise adds the
    /// results, in the order the model asked for the calls. Returns how the turn ends and, if
    /// the chat stops, why.
    pub(super) fn settle_batch(
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
    pub(super) fn in_call_order(&self, mut results: Vec<ToolResult>) -> Vec<ToolResult> {
        let order: std::collections::HashMap<&ToolCallId, usize> = self
            .session
            .history
            .iter()
            .chain(&self.new_messages)
            .rev()
            .find_map(|m| match m {
                Message::Assistant { content, .. } => Some(content),
                _ => None,
            })
            .into_iter()
            .flatten()
            .filter_map(|c| match c {
                AssistantContent::ToolCall { id, .. } => Some(id),
                _ => None,
            })
            .enumerate()
            .map(|(at, id)| (id, at))
            .collect();
        // A model may ask for thousands of calls at once: each looked up once.
        results.sort_by_key(|r| order.get(&r.tool_call_id).copied());
        results
    }

    /// The user turn of an answer that resumes the chat.
    pub(super) fn answer_turn(&self, answer: QuestionAnswer) {
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
    pub(super) async fn resume_batch(&mut self, paused: PausedLoop) -> Option<StopReason> {
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
    pub(super) fn give_up(&mut self, paused: PausedChat) {
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
}
