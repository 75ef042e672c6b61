//! [`SettingsHooks`]: the hooks of Claude Code's settings files and agentry's own
//! configuration ([`HookSettings`]), run with Claude Code's hook contract so that existing
//! hooks work unchanged: every event of [`agentry::hooks::HOOK_EVENTS`] with Claude Code's
//! input JSON, matchers where the event has them, handlers of type `command` (with `timeout`,
//! `once`, and `async`, whose `additionalContext` and `systemMessage` go to the model with the
//! session's next prompt), `http` and `prompt`, and their output read as Claude Code reads it (see
//! [`output`]). A handler with an `if` runs only for the tool calls that match it, judged as
//! permission rules judge them ([`AgentHooks::call_filters`]). The handlers an event's
//! matchers select run at once; their replies combine in the order written.

mod command;
mod http;
pub mod output;
mod prompt;
mod settings;

pub use settings::{HookHandler, HookMatcher, HookSettings, HookSource};

use agentry::hooks::{AgentHooks, HookInput, HookReply};
use agentry::model::Model;
use agentry::tool::ToolKind;
use output::{Ran, reply_of};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Opens a model by the name a `prompt` hook gives (`PROVIDER/MODEL`).
pub type ModelOpener = Arc<dyn Fn(&str) -> Option<Arc<dyn Model>> + Send + Sync>;

/// [`AgentHooks`] that run configured handlers with Claude Code's contract.
pub struct SettingsHooks {
    settings: HookSettings,
    /// The model `prompt` hooks ask when they name none.
    judge: Option<Arc<dyn Model>>,
    /// Opens the models `prompt` hooks name.
    models: Option<ModelOpener>,
    /// The `once` handlers that ran, by session.
    ran_once: Mutex<HashSet<(String, String)>>,
    /// Whether any handler runs in the background (`async`).
    runs_async: bool,
    /// What `async` handlers that ended said for the model (`additionalContext`,
    /// `systemMessage`), by session: it goes with the session's next prompt.
    async_output: Arc<Mutex<HashMap<String, Vec<String>>>>,
}

impl std::fmt::Debug for SettingsHooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SettingsHooks")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl SettingsHooks {
    /// Hooks running the handlers of `settings` (`prompt` hooks fail until given a model).
    pub fn new(settings: HookSettings) -> Self {
        let runs_async = settings.handlers().any(|(_, handler)| {
            matches!(
                handler,
                HookHandler::Command {
                    run_async: true,
                    ..
                }
            )
        });
        Self {
            settings,
            judge: None,
            models: None,
            ran_once: Mutex::default(),
            runs_async,
            async_output: Arc::default(),
        }
    }

    /// `prompt` hooks that name no model ask `model`; those that do are opened by `opener`.
    pub fn with_models(mut self, model: Arc<dyn Model>, opener: ModelOpener) -> Self {
        self.judge = Some(model);
        self.models = Some(opener);
        self
    }

    /// The handlers `input`'s event selects, each with where it was written, once each.
    fn selected<'a>(&'a self, input: &HookInput) -> Vec<(&'a HookHandler, &'a HookSource)> {
        let event = &input.event;
        let subject = event.matcher_subject();
        let kind = event.tool_use().map(|call| call.kind);
        let mut seen = HashSet::new();
        self.settings
            .groups(event.name())
            .iter()
            .filter(|group| match subject {
                Some(subject) => matches(group.matcher.as_deref().unwrap_or(""), subject, kind),
                None => true,
            })
            .flat_map(|group| group.hooks.iter().map(move |hook| (hook, &group.source)))
            .filter(|(hook, _)| match hook.filter() {
                None => true,
                Some(rule) => event
                    .tool_use()
                    .is_some_and(|call| call.matched_filters.iter().any(|m| m == rule)),
            })
            .filter(|(hook, _)| seen.insert((hook.kind(), hook.target(), hook.filter())))
            .filter(|(hook, _)| match hook {
                HookHandler::Command { once: true, .. } => agentry::sync::lock(&self.ran_once)
                    .insert((input.session.session_id.clone(), hook.target().to_owned())),
                _ => true,
            })
            .collect()
    }

    /// Runs one handler for `input` (its JSON `json`).
    async fn run(
        &self,
        hook: &HookHandler,
        source: &HookSource,
        input: &HookInput,
        json: &str,
    ) -> HookReply {
        let event = input.event.name();
        let label = hook.target().lines().next().unwrap_or_default().to_owned();
        let timeout = Duration::from_secs(hook.timeout().unwrap_or(default_timeout(hook, event)));
        match hook {
            HookHandler::Command {
                command, run_async, ..
            } => {
                let project_dir = input.session.cwd.clone();
                let plugin_root = source.plugin_root.clone();
                let env_file = input
                    .session
                    .env_file
                    .clone()
                    .filter(|_| event == "SessionStart");
                let run = {
                    let (command, json) = (command.clone(), json.to_owned());
                    async move {
                        let env = command::CommandEnv {
                            project_dir: &project_dir,
                            plugin_root: plugin_root.as_deref(),
                            env_file: env_file.as_deref(),
                        };
                        command::run(&command, &json, &env, timeout).await
                    }
                };
                if *run_async {
                    let (event, label) = (event.to_owned(), label.clone());
                    let output = self.async_output.clone();
                    let session = input.session.session_id.clone();
                    tokio::spawn(async move {
                        let reply = reply_of(&event, &label, run.await);
                        for notice in &reply.notices {
                            tracing::warn!("{notice}");
                        }
                        let said: Vec<String> = [reply.additional_context, reply.system_message]
                            .into_iter()
                            .flatten()
                            .filter(|text| !text.trim().is_empty())
                            .collect();
                        if !said.is_empty() {
                            agentry::sync::lock(&output)
                                .entry(session)
                                .or_default()
                                .extend(said);
                        }
                    });
                    return HookReply::default();
                }
                reply_of(event, &label, run.await)
            }
            HookHandler::Http {
                url,
                headers,
                allowed_env_vars,
                ..
            } => {
                let ran = http::run(url, headers, allowed_env_vars, json, timeout).await;
                reply_of(event, &label, ran)
            }
            HookHandler::Prompt { prompt, model, .. } => {
                let judge = match model {
                    Some(name) => self.models.as_ref().and_then(|open| open(name)),
                    None => self.judge.clone(),
                };
                let Some(judge) = judge else {
                    return reply_of(
                        event,
                        &label,
                        Ran::Unstartable("no model to judge with".to_owned()),
                    );
                };
                prompt::judge(judge, prompt, event, json, timeout, &label).await
            }
        }
    }
}

/// How long a handler may run when it does not say: Claude Code's defaults.
fn default_timeout(hook: &HookHandler, event: &str) -> u64 {
    match hook {
        HookHandler::Prompt { .. } => 30,
        _ if event == "UserPromptSubmit" => 30,
        _ => 600,
    }
}

#[agentry::async_trait]
impl AgentHooks for SettingsHooks {
    fn takes(&self, event: &str) -> bool {
        !self.settings.groups(event).is_empty() || (event == "UserPromptSubmit" && self.runs_async)
    }

    fn call_filters(&self) -> Vec<String> {
        let mut filters: Vec<String> = settings::FILTERED_EVENTS
            .iter()
            .flat_map(|event| self.settings.groups(event))
            .flat_map(|group| group.hooks.iter().filter_map(HookHandler::filter))
            .map(str::to_owned)
            .collect();
        filters.sort();
        filters.dedup();
        filters
    }

    async fn on_event(&self, input: &HookInput) -> HookReply {
        // What `async` handlers said since the last prompt goes to the model with this one.
        let mut reply = HookReply::default();
        if input.event.name() == "UserPromptSubmit"
            && let Some(said) =
                agentry::sync::lock(&self.async_output).remove(&input.session.session_id)
        {
            reply.additional_context = Some(format!("Async hook output:\n{}", said.join("\n")));
        }
        let selected = self.selected(input);
        if selected.is_empty() {
            return reply;
        }
        let json = input.to_json().to_string();
        let replies = futures::future::join_all(
            selected
                .into_iter()
                .map(|(hook, source)| self.run(hook, source, input, &json)),
        )
        .await;
        for said in replies {
            reply.merge(said);
        }
        reply
    }
}

/// Whether a matcher matches `subject` (a tool's name, a source, a reason, …), as Claude Code
/// reads matchers: empty or `*` matches all; letters, digits, `_`, `-`, spaces, `,` and `|`
/// alone are a list of exact names (`Edit|Write`, `Edit, Write`); anything else is a regular
/// expression found anywhere in the subject (`mcp__.*`, `^Edit$`). agentry adds `kind:NAME`,
/// which matches a tool of that kind (`kind:execute`), alone or in a list.
pub fn matches(matcher: &str, subject: &str, kind: Option<ToolKind>) -> bool {
    let matcher = matcher.trim();
    if matcher.is_empty() || matcher == "*" {
        return true;
    }
    if matcher.contains("kind:") {
        return matcher
            .split('|')
            .any(|part| match part.trim().strip_prefix("kind:") {
                Some(wanted) => kind
                    .and_then(|kind| serde_json::to_value(kind).ok())
                    .is_some_and(|name| name.as_str() == Some(wanted)),
                None => matches(part, subject, kind),
            });
    }
    let exact = matcher
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | ' ' | ',' | '|'));
    if exact {
        return matcher.split(['|', ',']).any(|name| name.trim() == subject);
    }
    regex::Regex::new(matcher)
        .map(|re| re.is_match(subject))
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matchers_are_exact_lists_expressions_or_kinds() {
        let bash = Some(ToolKind::Execute);
        assert!(matches("", "Bash", bash));
        assert!(matches("*", "Bash", bash));
        assert!(matches("Bash", "Bash", bash));
        assert!(!matches("Bash", "BashOutput", None));
        assert!(matches("Edit|Write", "Write", None));
        assert!(matches("Edit, Write", "Edit", None));
        assert!(matches("mcp__.*", "mcp__github__search", None));
        assert!(
            matches("Edit.*", "NotebookEdit", None),
            "expressions are not anchored"
        );
        assert!(!matches("^Edit$", "NotebookEdit", None));
        assert!(matches("kind:execute", "Bash", bash));
        assert!(matches("Read|kind:edit", "Write", Some(ToolKind::Edit)));
        assert!(!matches("kind:edit", "Bash", bash));
        assert!(matches("startup|resume", "resume", None));
        assert!(
            !matches("(", "x", None),
            "a broken expression matches nothing"
        );
    }
}
