//! What a chat tells and asks outside the model: the user's hooks (before a prompt, at the
//! stop) and, at a session's first chat, the permission rules that can never match.

use super::Chat;
use crate::AgentError;
use crate::event::AgentEvent;
use crate::hooks::HookSession;
use crate::tool::ContentBlock;

impl Chat<'_> {
    /// The session as hooks see it.
    fn hook_session(&self) -> HookSession {
        self.session.hook_session()
    }

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

    /// Runs the `UserPromptSubmit` hooks: they may block the prompt or add context to it.
    pub(super) async fn prompt_hooks(
        &mut self,
        content: &mut Vec<ContentBlock>,
    ) -> Result<(), AgentError> {
        let Some(hooks) = self.session.agent.hooks().cloned() else {
            return Ok(());
        };
        let prompt = crate::model::text_of(content);
        let outcome = hooks
            .user_prompt_submit(&self.hook_session(), &prompt)
            .await;
        for message in outcome.notices {
            self.emit(AgentEvent::Notice { message });
        }
        if let Some(reason) = outcome.blocked {
            return Err(AgentError::PromptBlocked(reason));
        }
        if let Some(context) = outcome.context {
            content.push(ContentBlock::text(context));
        }
        Ok(())
    }

    /// Runs the `Stop` (or, in a sub-agent, `SubagentStop`) hooks when the chat is about to
    /// end with an answer; when one says why it must go on, that is the user's next message
    /// and the chat goes on.
    pub(super) async fn stop_hooks_go_on(&mut self) -> bool {
        let Some(hooks) = self.session.agent.hooks().cloned() else {
            return false;
        };
        if self.io.cancel.is_cancelled() {
            return false;
        }
        let sub_agent = self.session.fork.is_some();
        let outcome = hooks
            .stop(&self.hook_session(), sub_agent, self.stop_hook_went_on)
            .await;
        for message in outcome.notices {
            self.emit(AgentEvent::Notice { message });
        }
        let Some(reason) = outcome.go_on else {
            return false;
        };
        self.stop_hook_went_on = true;
        self.user_turn(vec![ContentBlock::text(format!(
            "Stop hook feedback:\n{reason}"
        ))]);
        true
    }
}
