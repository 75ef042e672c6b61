//! A slash command's prompt carried out before the model sees it: the rules it allows taken up
//! for the chat, and the calls it asks for (a command file's shell lines and file references)
//! run through the executor in a turn of the user's, never asking, each call's output put in
//! its place.

use super::Chat;
use crate::AgentError;
use crate::commands::{CommandCall, CommandPrompt, PromptPart};
use crate::event::{AgentEvent, Refusal, Role, TurnStatus};
use crate::executor::CallResult;
use crate::ids::{ToolCallId, TurnId};
use crate::model::{ToolArguments, ToolCallRequest};
use crate::permission::{PermissionRule, RuleAction, RuleOrigin};
use crate::sync::lock;
use crate::tool::ContentBlock;

impl Chat<'_> {
    /// The content `prompt` comes to once its calls ran; the rules it allows hold for the rest
    /// of the chat. A call that fails without a text to put in its place ends it here.
    pub(super) async fn carry_out(
        &mut self,
        prompt: CommandPrompt,
    ) -> Result<Vec<ContentBlock>, AgentError> {
        let CommandPrompt {
            parts,
            allowed_tools,
            source,
        } = prompt;
        let origin = RuleOrigin {
            file: source,
            root: Some(self.session.options.cwd.clone()),
        };
        self.allowed = allowed_rules(&allowed_tools, &origin)?;
        if !parts.iter().any(|part| matches!(part, PromptPart::Call(_))) {
            return Ok(parts
                .into_iter()
                .filter_map(|part| match part {
                    PromptPart::Content(block) => Some(block),
                    PromptPart::Call(_) => None,
                })
                .collect());
        }
        let turn_id = TurnId::generate();
        self.start_turn(&turn_id, Role::User, TurnStatus::Completed);
        // A call's output continues the text before it, and the text after it continues the
        // output; other parts stay blocks of their own.
        let mut content = Vec::new();
        let mut glued = false;
        for part in parts {
            let (text, glue_before, glue_after) = match part {
                PromptPart::Content(ContentBlock::Text { text }) => (text, glued, false),
                PromptPart::Content(block) => {
                    content.push(block);
                    glued = false;
                    continue;
                }
                PromptPart::Call(call) => match self.run_call(call, &turn_id).await {
                    Ok(text) => (text, true, true),
                    Err(why) => {
                        self.end_turn_of(turn_id, Role::User, TurnStatus::Failed);
                        return Err(AgentError::CommandNotRun(why));
                    }
                },
            };
            match content.last_mut() {
                Some(ContentBlock::Text { text: last }) if glue_before => last.push_str(&text),
                _ => content.push(ContentBlock::Text { text }),
            }
            glued = glue_after;
        }
        self.end_turn_of(turn_id, Role::User, TurnStatus::Completed);
        Ok(content)
    }

    /// Runs one of a command's calls in the turn `turn_id` with nobody to ask: the text that
    /// takes its place, or why the command cannot go on.
    async fn run_call(&self, call: CommandCall, turn_id: &TurnId) -> Result<String, String> {
        let scope = self.unattended_scope(turn_id);
        let executor = &self.session.executor;
        let request = ToolCallRequest {
            id: ToolCallId::generate(),
            name: call.tool.clone(),
            arguments: ToolArguments::Json(call.input),
        };
        let id = request.id.clone();
        let pending = executor.announce(request, &scope);
        let title = pending.snapshot().title.clone();
        let failure = match executor.run(pending, &scope).await {
            CallResult::Done(result) if !result.is_error => return Ok(result.text()),
            CallResult::Done(result) => match self.refusal_of(&id) {
                Some(Refusal::Unanswered { .. }) => {
                    "it needs permission: neither the command's allowed tools nor the session's \
                     permission rules allow it, and a command's calls are never asked about"
                        .to_owned()
                }
                _ => result.text(),
            },
            CallResult::AwaitingAnswer(_) => {
                "it waits for the user's answer, which a command's call cannot".to_owned()
            }
        };
        call.if_failed.ok_or_else(|| {
            format!(
                "{} `{title}`, which it runs before its prompt is sent, did not succeed: {failure}",
                call.tool
            )
        })
    }

    /// Why the executor refused the call `id`, if it did.
    fn refusal_of(&self, id: &ToolCallId) -> Option<Refusal> {
        let transcript = lock(&self.recorder.transcript);
        transcript
            .events()
            .iter()
            .rev()
            .find_map(|event| match event {
                AgentEvent::ToolCallUpdate(update) if &update.tool_call_id == id => {
                    update.refusal.clone()
                }
                _ => None,
            })
    }
}

/// The permission rules `allowed_tools` writes, allowing (from `origin`).
fn allowed_rules(
    allowed_tools: &[String],
    origin: &RuleOrigin,
) -> Result<Vec<PermissionRule>, AgentError> {
    allowed_tools
        .iter()
        .map(|target| {
            PermissionRule::parse(RuleAction::Allow, target)
                .map(|rule| rule.from_origin(origin.clone()))
                .map_err(|error| {
                    AgentError::CommandNotRun(format!(
                        "it allows `{target}`, which is not a permission rule: {error}"
                    ))
                })
        })
        .collect()
}
