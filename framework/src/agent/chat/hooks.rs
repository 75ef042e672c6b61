//! What a chat tells and asks outside the model: the user's hooks (the session's start, a
//! prompt, the stop, a failed model request, a hook's `continue: false`), the session's
//! JSON-lines transcript they read, and, at a session's first chat, the permission rules that
//! can never match.

use super::Chat;
use crate::AgentError;
use crate::event::AgentEvent;
use crate::hooks::{HookEvent, HookReply};
use crate::model::ModelError;
use crate::tool::ContentBlock;

impl Chat<'_> {
    /// At a session's first chat, tells the user of each permission rule that can never
    /// match (a notice, not part of the conversation).
    pub(super) fn report_rules(&mut self) {
        if self.session.rules_reported || self.session.fork.is_some() {
            return;
        }
        self.session.rules_reported = true;
        let warnings = crate::permission::lint::check_rules(
            &self.session.options.policy,
            self.session.executor.registry().tools(),
            &self.session.options.cwd,
        );
        for warning in warnings {
            self.io.events.emit(AgentEvent::Notice {
                message: format!("Warning: {warning}"),
            });
        }
    }

    /// Runs the hooks of `event` and passes their notices and messages to the user, and a
    /// `continue: false` to the chat.
    async fn fire(&self, event: HookEvent) -> Option<HookReply> {
        let mut reply = self.session.fire_hooks(event).await?;
        reply.deliver(self.recorder.as_ref(), &self.hook_stop);
        Some(reply)
    }

    /// Runs the session's start hooks, if they have not run (see
    /// [`Session::begin`](crate::agent::Session::begin)).
    pub(super) async fn start_hooks(&mut self) {
        for message in self.session.begin().await {
            self.emit(AgentEvent::Notice { message });
        }
    }

    /// Runs the `UserPromptSubmit` hooks on the prompt's text, before anything of it runs:
    /// they may block it, or give context to add to it.
    pub(super) async fn prompt_hooks(
        &mut self,
        prompt: String,
    ) -> Result<Option<String>, AgentError> {
        let Some(reply) = self.fire(HookEvent::UserPromptSubmit { prompt }).await else {
            return Ok(None);
        };
        if reply.blocks() {
            return Err(AgentError::PromptBlocked(reply.block_reason()));
        }
        Ok(reply.additional_context)
    }

    /// Adds to the user's `content` the context the prompt's hooks gave, after it, and the
    /// session's start hooks' (once), before it.
    pub(super) fn add_hook_context(
        &mut self,
        content: &mut Vec<ContentBlock>,
        context: Option<String>,
    ) {
        if let Some(context) = context {
            content.push(ContentBlock::text(context));
        }
        let started = std::mem::take(&mut self.session.lifecycle.context);
        if !started.is_empty() {
            content.insert(
                0,
                ContentBlock::text(format!(
                    "SessionStart hook additional context:\n{}",
                    started.join("\n")
                )),
            );
        }
    }

    /// Runs the `Stop` (or, in a sub-agent, `SubagentStop`) hooks when the chat is about to
    /// end with an answer; when one says why it must go on, that is the user's next message
    /// and the chat goes on — but not more than [`STOP_HOOK_BLOCKS`](crate::limits::STOP_HOOK_BLOCKS)
    /// times in a row.
    pub(super) async fn stop_hooks_go_on(&mut self) -> bool {
        if self.io.cancel.is_cancelled() {
            return false;
        }
        self.transcribe();
        let answer = match self.last_answer() {
            serde_json::Value::String(text) => text,
            other => other.to_string(),
        };
        let stop_hook_active = self.stop_hook_blocks > 0;
        let event = match &self.session.fork {
            Some(fork) => HookEvent::SubagentStop {
                stop_hook_active,
                agent_id: fork.origin.loop_id.clone(),
                agent_type: fork.agent_type.clone(),
                agent_transcript_path: self
                    .session
                    .transcript
                    .as_ref()
                    .map(|file| file.path().to_path_buf()),
                last_assistant_message: answer,
            },
            None => HookEvent::Stop {
                stop_hook_active,
                last_assistant_message: answer,
            },
        };
        let Some(reply) = self.fire(event).await else {
            return false;
        };
        if !reply.blocks() || self.hook_stop.asked().is_some() {
            return false;
        }
        if self.stop_hook_blocks >= crate::limits::STOP_HOOK_BLOCKS {
            self.emit(AgentEvent::Notice {
                message: format!(
                    "the Stop hooks refused to let the agent stop {} times in a row: it stops anyway",
                    self.stop_hook_blocks
                ),
            });
            return false;
        }
        self.stop_hook_blocks += 1;
        self.user_turn(vec![ContentBlock::text(format!(
            "Stop hook feedback:\n{}",
            reply.block_reason()
        ))]);
        true
    }

    /// Runs the `StopFailure` hooks for a chat ending because its model failed.
    pub(super) async fn stop_failure_hooks(&self, error: &ModelError) {
        let event = HookEvent::StopFailure {
            error: error.stop_failure().to_owned(),
            error_details: error.to_string(),
            last_assistant_message: format!("API Error: {error}"),
        };
        self.fire(event).await;
    }

    /// Writes the messages the transcript does not have yet (when the session keeps one).
    pub(super) fn transcribe(&mut self) {
        let Some(file) = &self.session.transcript else {
            return;
        };
        let from = self.transcribed.min(self.new_messages.len());
        for message in &self.new_messages[from..] {
            if let Err(error) = file.append(message) {
                tracing::warn!(%error, "the session's transcript could not be written");
                break;
            }
        }
        self.transcribed = self.new_messages.len();
    }
}
