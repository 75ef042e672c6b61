//! A compaction with the agent's hooks around it: `PreCompact` may stop it or add to its
//! instructions, `PostCompact` sees what was done and the summary written.

use super::{Compacted, CompactionSettings, CompactionTrigger, RequestShape, compact};
use crate::error::AgentError;
use crate::event::Usage;
use crate::hooks::{AgentHooks, HookEvent, HookSession, fire};
use crate::model::Message;
use std::sync::Arc;

/// What a hooked compaction did, and what the user should be told of its hooks.
pub(crate) struct HookedCompaction {
    pub(crate) compacted: Option<Compacted>,
    /// Why a `PreCompact` hook stopped it, when one did.
    pub(crate) blocked: Option<String>,
    pub(crate) notices: Vec<String>,
}

/// Compacts `messages` (see [`compact`]) between the `PreCompact` and `PostCompact` hooks.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn compact_with_hooks(
    hooks: Option<&Arc<dyn AgentHooks>>,
    session: HookSession,
    request: &RequestShape<'_>,
    messages: &[Message],
    settings: &CompactionSettings,
    trigger: CompactionTrigger,
    instructions: Option<&str>,
    usage: &mut Usage,
) -> Result<HookedCompaction, AgentError> {
    let mut notices = Vec::new();
    let mut instructions = instructions.map(str::to_owned);
    let event = HookEvent::PreCompact {
        trigger,
        custom_instructions: instructions.clone().unwrap_or_default(),
    };
    if let Some(mut said) = fire(hooks, || session.clone(), event).await {
        notices.extend(said.for_the_user());
        if said.blocks() {
            return Ok(HookedCompaction {
                compacted: None,
                blocked: Some(said.block_reason()),
                notices,
            });
        }
        instructions = match (instructions, said.custom_instructions) {
            (Some(user), Some(hook)) => Some(format!("{user}\n{hook}")),
            (user, hook) => user.or(hook),
        };
    }
    let compacted = compact(
        request,
        messages,
        settings,
        trigger,
        instructions.as_deref(),
        usage,
    )
    .await?;
    if let Some(done) = &compacted {
        let summary = (done.report.messages_summarised > 0)
            .then(|| done.head.first().map(summary_text))
            .flatten();
        let event = HookEvent::PostCompact {
            trigger,
            compact_summary: summary.unwrap_or_default(),
        };
        if let Some(mut said) = fire(hooks, || session, event).await {
            notices.extend(said.for_the_user());
        }
    }
    Ok(HookedCompaction {
        compacted,
        blocked: None,
        notices,
    })
}

/// The text of a summary message, without its heading.
fn summary_text(message: &Message) -> String {
    let Message::User { content } = message else {
        return String::new();
    };
    let text = crate::model::text_of(content);
    text.strip_prefix(super::SUMMARY_HEADING)
        .unwrap_or(&text)
        .trim()
        .to_owned()
}
