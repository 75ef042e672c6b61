//! What a chat's tool calls run with: the session's scope, and the services offered to every
//! call (sub-agents, the session's model, the sandbox, the user's questions).

use super::Chat;
use crate::agent::subagent::SubAgents;
use crate::executor::CallScope;
use crate::hooks::{ScopeHooks, ToolEventHooks};
use crate::ids::TurnId;
use crate::model::side::SessionModel;
use crate::permission::{RejectWhenAsked, SessionRequestRules};
use crate::question::SourceLoop;
use crate::question::UserQuestions;
use crate::tool::{AskUser, Extensions, HostServices, ToolHooks};
use std::sync::Arc;

impl Chat<'_> {
    /// What the calls of the model's turn `turn_id` run with.
    pub(super) fn scope(&self, turn_id: &TurnId) -> CallScope {
        self.scope_for(turn_id, true)
    }

    /// What calls run with that nobody may be asked about, in the turn `turn_id` (a slash
    /// command's, before its prompt is sent): a call that would ask is refused, and neither
    /// the user's questions nor sub-agents are offered.
    pub(super) fn unattended_scope(&self, turn_id: &TurnId) -> CallScope {
        let mut scope = self.scope_for(turn_id, false);
        scope.permissions = Arc::new(RejectWhenAsked);
        scope
    }

    /// The scope of the turn `turn_id`, with the services that reach people (the user's
    /// questions, sub-agents that ask in turn) only when `attended`.
    fn scope_for(&self, turn_id: &TurnId, attended: bool) -> CallScope {
        let session = &self.session;
        let mut extensions = Extensions::default();
        let sub_agents = Arc::new(SubAgents {
            agent: session.agent.clone(),
            options: session.options.clone(),
            model: session.model.clone(),
            registry: session.executor.registry().clone(),
            remembered: session.remembered.clone(),
            events: self.recorder.clone(),
            permissions: self.io.permissions.clone(),
            questions: self.io.questions.clone(),
            pauses: self.pauses.clone(),
            before_change: self.before_change.clone(),
            depth: session.fork.as_ref().map_or(0, |fork| fork.origin.depth),
            meter: self.meter.clone(),
        });
        if attended {
            extensions.insert(sub_agents.clone());
        }
        if let Some(mode) = session.options.sandbox {
            extensions.insert(Arc::new(mode));
        }
        let ask_user = self
            .io
            .questions
            .as_ref()
            .filter(|_| attended)
            .map(|handler| {
                Arc::new(UserQuestions {
                    handler: handler.clone(),
                    source_loop: session.fork.as_ref().map(|fork| SourceLoop {
                        loop_id: fork.origin.loop_id.clone(),
                        parent_fork_tool_call_id: fork.origin.parent_tool_call_id.clone(),
                    }),
                    pauses: self.pauses.clone(),
                    events: self.recorder.clone(),
                })
            });
        if let Some(asker) = &ask_user {
            extensions.insert(asker.clone());
        }
        CallScope {
            session_id: session.id.clone(),
            turn_id: turn_id.clone(),
            cwd: session.options.cwd.clone(),
            workspace_roots: session.options.workspace_roots.clone(),
            client: session.options.client.clone(),
            host: HostServices {
                side_questions: Some(Arc::new(
                    SessionModel::new(session.model.clone())
                        .with_named(session.agent.named_models().cloned())
                        .guarded(self.meter.clone()),
                )),
                sub_agents: attended.then_some(sub_agents),
                ask_user: ask_user.map(|asker| asker as Arc<dyn AskUser>),
                request_rules: Some(Arc::new(SessionRequestRules(self.policy()))),
                hooks: session.agent.hooks().map(|hooks| {
                    Arc::new(ToolEventHooks {
                        hooks: ScopeHooks {
                            hooks: hooks.clone(),
                            session: session.hook_session(),
                            stop: self.hook_stop.clone(),
                        },
                        events: self.recorder.clone(),
                    }) as Arc<dyn ToolHooks>
                }),
            },
            state: session.state.clone(),
            policy: self.policy(),
            remembered: session.remembered.clone(),
            events: self.recorder.clone(),
            permissions: self.io.permissions.clone(),
            cancel: self.io.cancel.clone(),
            extensions,
            hooks: session.agent.hooks().map(|hooks| ScopeHooks {
                hooks: hooks.clone(),
                session: session.hook_session(),
                stop: self.hook_stop.clone(),
            }),
            before_change: self.before_change.clone(),
        }
    }
}
