//! A session's life as hooks see it: its start (`SessionStart`, with `InstructionsLoaded` for
//! each instruction file it reads) and its end (`SessionEnd`), and the session's fields every
//! event carries.

use super::Session;
use crate::event::{AgentEvent, EventSink};
use crate::hooks::{HookEvent, HookReply, HookSession, SessionEndReason, SessionSource, fire};
use std::path::Path;
use std::sync::Arc;

/// Where a session stands with the hooks of its life.
#[derive(Debug, Default)]
pub(crate) struct Lifecycle {
    /// How the session begins, until its `SessionStart` hooks ran.
    pub(crate) starting: Option<SessionSource>,
    /// Context the `SessionStart` hooks gave the model, until the next prompt takes it.
    pub(crate) context: Vec<String>,
}

impl Lifecycle {
    /// A session beginning as `source`.
    pub(crate) fn starting(source: SessionSource) -> Self {
        Self {
            starting: Some(source),
            context: Vec::new(),
        }
    }
}

impl Session {
    /// The session as hooks see it.
    pub(crate) fn hook_session(&self) -> HookSession {
        HookSession {
            session_id: self.id.to_string(),
            transcript_path: self
                .transcript
                .as_ref()
                .map(|file| file.path().to_path_buf()),
            cwd: self.options.cwd.clone(),
            permission_mode: self.options.policy.mode.claude_name().to_owned(),
            agent_id: self.fork.as_ref().map(|fork| fork.origin.loop_id.clone()),
            agent_type: self.fork.as_ref().map(|fork| fork.agent_type.clone()),
            env_file: None,
        }
    }

    /// Runs the hooks of `event` in this session (when the agent has hooks that take it). A
    /// `SessionStart` hook is given the session's environment file to write to (the session's
    /// temporary folder is made for it then, and only then).
    pub(crate) async fn fire_hooks(&self, event: HookEvent) -> Option<HookReply> {
        let writes_env = matches!(event, HookEvent::SessionStart { .. });
        let session = || HookSession {
            env_file: writes_env.then(|| self.state.env_file().ok()).flatten(),
            ..self.hook_session()
        };
        fire(self.agent.hooks(), session, event).await
    }

    /// Runs the session's `SessionStart` hooks (source `startup`, `resume`, `clear` or
    /// `compact`), and `InstructionsLoaded` for each instruction file its chats read, once for
    /// each start: what they give the model goes with the next prompt. A chat does this when
    /// the front-end has not (a front-end calls it to run them before the first prompt).
    /// Returns what the user is to be told.
    pub async fn begin(&mut self) -> Vec<String> {
        let Some(source) = self.lifecycle.starting.take() else {
            return Vec::new();
        };
        let mut told = Vec::new();
        let event = HookEvent::SessionStart {
            source,
            model: self.model.name(),
        };
        if let Some(mut reply) = self.fire_hooks(event).await {
            told.extend(reply.for_the_user());
            self.lifecycle.context.extend(reply.additional_context);
        }
        let load_reason = match source {
            SessionSource::Compact => "compact",
            _ => "session_start",
        };
        for file in self.instruction_files() {
            let event = HookEvent::InstructionsLoaded {
                memory_type: memory_type(&file).to_owned(),
                file_path: file,
                load_reason: load_reason.to_owned(),
            };
            if let Some(mut reply) = self.fire_hooks(event).await {
                told.append(&mut reply.notices);
            }
        }
        told
    }

    /// Makes the session's next chat run the `SessionStart` hooks again, as `source` (a
    /// front-end that clears the conversation says `clear`).
    pub fn restart_as(&mut self, source: SessionSource) {
        self.lifecycle.starting = Some(source);
    }

    /// Runs the session's `SessionEnd` hooks (`reason`: why it ends). Returns what the user is
    /// to be told.
    pub async fn end(&mut self, reason: SessionEndReason) -> Vec<String> {
        match self.fire_hooks(HookEvent::SessionEnd { reason }).await {
            Some(mut reply) => reply.for_the_user(),
            None => Vec::new(),
        }
    }

    /// Runs the `SubagentStart` hooks of a sub-agent's session (its notices to `events`): the
    /// context they give it, for its prompt.
    pub(crate) async fn subagent_start(
        &self,
        events: &Arc<dyn EventSink>,
    ) -> Option<crate::tool::ContentBlock> {
        let fork = self.fork.as_ref()?;
        let event = HookEvent::SubagentStart {
            agent_id: fork.origin.loop_id.clone(),
            agent_type: fork.agent_type.clone(),
        };
        let mut reply = self.fire_hooks(event).await?;
        for message in reply.for_the_user() {
            events.emit(AgentEvent::Notice { message });
        }
        let context = reply.additional_context?;
        Some(crate::tool::ContentBlock::text(format!(
            "SubagentStart hook additional context:\n{context}"
        )))
    }

    /// The instruction files the session's chats read (none without an instruction source).
    pub(crate) fn instruction_files(&self) -> Vec<std::path::PathBuf> {
        let cwd = &self.options.cwd;
        match &self.agent.inner.instructions {
            Some(source) => {
                let denials = self.options.policy.read_denials("Read", cwd);
                source
                    .instruction_files(cwd, &denials)
                    .into_iter()
                    .map(|(path, _)| path)
                    .collect()
            }
            None => Vec::new(),
        }
    }
}

/// Whose an instruction file is, as Claude Code says it: the user's own (in the home folder's
/// `.claude`), the person's own in the project (`*.local.md`), or the project's.
fn memory_type(file: &Path) -> &'static str {
    let in_home = dirs_home().is_some_and(|home| file.starts_with(home.join(".claude")));
    let local = file
        .file_name()
        .and_then(|name| name.to_str())
        .is_some_and(|name| name.ends_with(".local.md"));
    if in_home {
        "User"
    } else if local {
        "Local"
    } else {
        "Project"
    }
}

/// The user's home folder.
fn dirs_home() -> Option<std::path::PathBuf> {
    std::env::var_os("HOME").map(std::path::PathBuf::from)
}
