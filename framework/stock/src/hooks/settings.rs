//! [`HookSettings`]: hooks as Claude Code's settings files write them (`"hooks": {"EVENT":
//! [{"matcher": …, "hooks": [HANDLER, …]}]}`) and agentry's `config.toml`
//! (`[[hooks.EVENT]]`), each matcher group marked with the file it came from. What agentry does
//! not know — an event, a handler type, a field — is kept as a warning naming the file, for the
//! start-up report, and left out.

use agentry::hooks::HOOK_EVENTS;
use agentry::permission::{PermissionRule, RuleAction};
use serde::{Deserialize, Deserializer};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The events whose handlers an `if` selects: those of a tool call.
pub const FILTERED_EVENTS: [&str; 5] = [
    "PreToolUse",
    "PermissionRequest",
    "PermissionDenied",
    "PostToolUse",
    "PostToolUseFailure",
];

/// One hook handler.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HookHandler {
    /// A shell command (`sh -c`), the event's JSON on its stdin.
    Command {
        /// The command.
        command: String,
        /// Seconds before it is stopped.
        timeout: Option<u64>,
        /// Runs in the background: it decides nothing, and the agent does not wait for it.
        run_async: bool,
        /// Runs once in a session.
        once: bool,
        /// The permission rule a call must match for it to run (Claude Code's `if`).
        filter: Option<String>,
    },
    /// A POST of the event's JSON to `url`, its reply read as a command's output.
    Http {
        /// The address.
        url: String,
        /// Headers (`$VAR` and `${VAR}` taken from the environment for the variables
        /// `allowed_env_vars` names; others become empty).
        headers: BTreeMap<String, String>,
        /// The variables headers may name.
        allowed_env_vars: Vec<String>,
        /// Seconds before it is given up.
        timeout: Option<u64>,
        /// The permission rule a call must match for it to run (Claude Code's `if`).
        filter: Option<String>,
    },
    /// A model judges the event from `prompt` (`$ARGUMENTS`: the event's JSON), answering
    /// `{"ok": …, "reason": …}`.
    Prompt {
        /// The prompt.
        prompt: String,
        /// The model (`PROVIDER/MODEL`); the session's when `None`.
        model: Option<String>,
        /// Seconds before it is given up.
        timeout: Option<u64>,
        /// The permission rule a call must match for it to run (Claude Code's `if`).
        filter: Option<String>,
    },
}

impl HookHandler {
    /// Its type, as settings write it.
    pub fn kind(&self) -> &'static str {
        match self {
            HookHandler::Command { .. } => "command",
            HookHandler::Http { .. } => "http",
            HookHandler::Prompt { .. } => "prompt",
        }
    }

    /// What it runs: the command, the address, the prompt.
    pub fn target(&self) -> &str {
        match self {
            HookHandler::Command { command, .. } => command,
            HookHandler::Http { url, .. } => url,
            HookHandler::Prompt { prompt, .. } => prompt,
        }
    }

    /// Its timeout, if it sets one.
    pub fn timeout(&self) -> Option<u64> {
        match self {
            HookHandler::Command { timeout, .. }
            | HookHandler::Http { timeout, .. }
            | HookHandler::Prompt { timeout, .. } => *timeout,
        }
    }

    /// The permission rule (`Bash(git *)`) a tool call must match for it to run: Claude
    /// Code's `if`. A handler with one runs only for the tool events (`PreToolUse`,
    /// `PermissionRequest`, `PermissionDenied`, `PostToolUse`, `PostToolUseFailure`).
    pub fn filter(&self) -> Option<&str> {
        match self {
            HookHandler::Command { filter, .. }
            | HookHandler::Http { filter, .. }
            | HookHandler::Prompt { filter, .. } => filter.as_deref(),
        }
    }
}

/// Where a matcher group was written: a settings file, and the plugin it belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HookSource {
    /// The file.
    pub file: Option<PathBuf>,
    /// The plugin's folder (`$CLAUDE_PLUGIN_ROOT`), for a plugin's hooks.
    pub plugin_root: Option<PathBuf>,
}

/// Handlers for what a matcher matches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookMatcher {
    /// What it matches (a tool's name, a source, a reason, …; see
    /// [`matches`](super::matches)); everything when `None`.
    pub matcher: Option<String>,
    /// The handlers.
    pub hooks: Vec<HookHandler>,
    /// Where it was written.
    pub source: HookSource,
}

/// Every event's matcher groups, in the order they were written, and what was left out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HookSettings {
    events: BTreeMap<String, Vec<HookMatcher>>,
    /// What was left out, and why (an unknown event, type or field), naming the file.
    pub warnings: Vec<String>,
}

impl HookSettings {
    /// These hooks followed by `other`'s; a handler written again in another file (the same
    /// type, matcher and command, address or prompt) is kept once, as Claude Code runs it once.
    pub fn merged(mut self, other: HookSettings) -> Self {
        for (event, groups) in other.events {
            let mine = self.events.entry(event).or_default();
            for mut group in groups {
                group.hooks.retain(|handler| {
                    !mine
                        .iter()
                        .any(|kept| kept.matcher == group.matcher && kept.hooks.contains(handler))
                });
                if !group.hooks.is_empty() {
                    mine.push(group);
                }
            }
        }
        self.warnings.extend(other.warnings);
        self
    }

    /// The hooks marked as written in `file` (and, for a plugin's, in its folder); warnings
    /// name the file.
    pub fn located(mut self, file: &Path, plugin_root: Option<&Path>) -> Self {
        for group in self.events.values_mut().flatten() {
            group.source = HookSource {
                file: Some(file.to_path_buf()),
                plugin_root: plugin_root.map(Path::to_path_buf),
            };
        }
        for warning in &mut self.warnings {
            *warning = format!("{}: {warning}", file.display());
        }
        self
    }

    /// The matcher groups of `event`.
    pub fn groups(&self, event: &str) -> &[HookMatcher] {
        self.events.get(event).map_or(&[], Vec::as_slice)
    }

    /// Every event with hooks, with its matcher groups.
    pub fn events(&self) -> impl Iterator<Item = (&str, &[HookMatcher])> {
        self.events
            .iter()
            .map(|(event, groups)| (event.as_str(), groups.as_slice()))
    }

    /// Every handler, with its event.
    pub fn handlers(&self) -> impl Iterator<Item = (&str, &HookHandler)> {
        self.events().flat_map(|(event, groups)| {
            groups
                .iter()
                .flat_map(move |group| group.hooks.iter().map(move |handler| (event, handler)))
        })
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.events.values().all(Vec::is_empty)
    }
}

impl<'de> Deserialize<'de> for HookSettings {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let written = BTreeMap::<String, Value>::deserialize(deserializer)?;
        let mut settings = HookSettings::default();
        for (event, groups) in written {
            if !HOOK_EVENTS.contains(&event.as_str()) {
                settings.warnings.push(format!(
                    "the hook event `{event}` is not one agentry has; its hooks never run \
                     (agentry's events: {})",
                    HOOK_EVENTS.join(", ")
                ));
                continue;
            }
            let Value::Array(groups) = groups else {
                return Err(serde::de::Error::custom(format!(
                    "hooks.{event} must be a list of matcher groups"
                )));
            };
            let mut kept = Vec::new();
            for group in groups {
                kept.push(read_group(&event, group, &mut settings.warnings)?);
            }
            settings.events.insert(event, kept);
        }
        Ok(settings)
    }
}

/// One matcher group (`{"matcher": …, "hooks": [...]}`).
fn read_group<E: serde::de::Error>(
    event: &str,
    group: Value,
    warnings: &mut Vec<String>,
) -> Result<HookMatcher, E> {
    let Value::Object(mut group) = group else {
        return Err(E::custom(format!(
            "each of hooks.{event} must be a table with `hooks`"
        )));
    };
    let matcher = match group.remove("matcher") {
        None | Some(Value::Null) => None,
        Some(Value::String(matcher)) => Some(matcher),
        Some(other) => {
            return Err(E::custom(format!(
                "a matcher of {event} is {other}, not text"
            )));
        }
    };
    let Some(Value::Array(handlers)) = group.remove("hooks") else {
        return Err(E::custom(format!(
            "a matcher group of {event} has no `hooks` list"
        )));
    };
    for key in group.keys() {
        warnings.push(format!(
            "a matcher group of {event} has `{key}`, which agentry does not know"
        ));
    }
    let mut hooks = Vec::new();
    for handler in handlers {
        if let Some(handler) = read_handler(event, handler, warnings)? {
            hooks.push(handler);
        }
    }
    Ok(HookMatcher {
        matcher,
        hooks,
        source: HookSource::default(),
    })
}

/// One handler; `None` (with a warning) for a type agentry does not run.
fn read_handler<E: serde::de::Error>(
    event: &str,
    handler: Value,
    warnings: &mut Vec<String>,
) -> Result<Option<HookHandler>, E> {
    let Value::Object(mut fields) = handler else {
        return Err(E::custom(format!("a hook of {event} is not a table")));
    };
    let kind = match fields.remove("type") {
        None => "command".to_owned(),
        Some(Value::String(kind)) => kind,
        Some(other) => return Err(E::custom(format!("a hook of {event} has type {other}"))),
    };
    let text =
        |fields: &mut serde_json::Map<String, Value>, key: &str| -> Result<Option<String>, E> {
            match fields.remove(key) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(text)) => Ok(Some(text)),
                Some(other) => Err(E::custom(format!(
                    "`{key}` of a {event} hook is {other}, not text"
                ))),
            }
        };
    let required = |value: Option<String>, key: &str| {
        value.ok_or_else(|| E::custom(format!("a `{kind}` hook of {event} needs `{key}`")))
    };
    let timeout = match fields.remove("timeout") {
        None | Some(Value::Null) => None,
        Some(value) => Some(value.as_u64().ok_or_else(|| {
            E::custom(format!("`timeout` of a {event} hook must be whole seconds"))
        })?),
    };
    // Claude Code's fields agentry shows no spinner for.
    fields.remove("statusMessage");
    let filter = text(&mut fields, "if")?;
    if let Some(rule) = &filter {
        if !FILTERED_EVENTS.contains(&event) {
            warnings.push(format!(
                "a hook of {event} has `if`, which only tool events read: it never runs \
                 (as in Claude Code)"
            ));
        } else if let Err(error) = PermissionRule::parse(RuleAction::Allow, rule) {
            warnings.push(format!(
                "the `if` of a {event} hook is not a permission rule ({error}): the hook runs \
                 for every call"
            ));
        }
    }
    let flag = |fields: &mut serde_json::Map<String, Value>, key: &str| {
        fields
            .remove(key)
            .and_then(|v| v.as_bool())
            .unwrap_or(false)
    };
    let handler = match kind.as_str() {
        "command" => {
            let command = required(text(&mut fields, "command")?, "command")?;
            HookHandler::Command {
                command,
                timeout,
                run_async: flag(&mut fields, "async"),
                once: flag(&mut fields, "once"),
                filter,
            }
        }
        "http" => {
            let url = required(text(&mut fields, "url")?, "url")?;
            let headers = match fields.remove("headers") {
                None | Some(Value::Null) => BTreeMap::new(),
                Some(value) => serde_json::from_value(value).map_err(|_| {
                    E::custom(format!(
                        "`headers` of a {event} hook must map names to text"
                    ))
                })?,
            };
            let allowed_env_vars = match fields.remove("allowedEnvVars") {
                None | Some(Value::Null) => Vec::new(),
                Some(value) => serde_json::from_value(value).map_err(|_| {
                    E::custom(format!(
                        "`allowedEnvVars` of a {event} hook must list names"
                    ))
                })?,
            };
            HookHandler::Http {
                url,
                headers,
                allowed_env_vars,
                timeout,
                filter,
            }
        }
        "prompt" => HookHandler::Prompt {
            prompt: required(text(&mut fields, "prompt")?, "prompt")?,
            model: text(&mut fields, "model")?,
            timeout,
            filter,
        },
        other => {
            warnings.push(format!(
                "a hook of {event} has the type `{other}`, which agentry does not run \
                 (it runs `command`, `http` and `prompt` hooks)"
            ));
            return Ok(None);
        }
    };
    for key in fields.keys() {
        warnings.push(format!(
            "a `{kind}` hook of {event} has `{key}`, which agentry does not know"
        ));
    }
    Ok(Some(handler))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn unknown_events_types_and_fields_are_warnings_not_silence() {
        let settings: HookSettings = serde_json::from_value(json!({
            "PreToolUse": [{"matcher": "Bash", "hooks": [
                {"type": "command", "command": "check.sh", "timeout": 5, "shell": "bash"},
                {"type": "agent", "prompt": "look"}
            ]}],
            "TeammateIdle": [{"hooks": [{"type": "command", "command": "x"}]}],
        }))
        .unwrap();
        let settings = settings.located(Path::new("/p/.claude/settings.json"), None);
        assert_eq!(settings.groups("PreToolUse")[0].hooks.len(), 1);
        assert!(settings.groups("TeammateIdle").is_empty());
        let warnings = settings.warnings.join("\n");
        assert!(
            warnings.contains("`TeammateIdle` is not one agentry has"),
            "{warnings}"
        );
        assert!(warnings.contains("the type `agent`"), "{warnings}");
        assert!(warnings.contains("has `shell`"), "{warnings}");
        assert!(
            warnings.starts_with("/p/.claude/settings.json: "),
            "{warnings}"
        );
    }

    #[test]
    fn a_handler_written_in_two_files_runs_once() {
        let hooks = |command: &str| -> HookSettings {
            serde_json::from_value(json!({"Stop": [{"hooks": [{"command": command}]}]})).unwrap()
        };
        let merged = hooks("a.sh")
            .located(Path::new("/u.json"), None)
            .merged(hooks("a.sh").located(Path::new("/p.json"), None))
            .merged(hooks("b.sh"));
        let commands: Vec<&str> = merged.handlers().map(|(_, h)| h.target()).collect();
        assert_eq!(commands, ["a.sh", "b.sh"]);
    }

    #[test]
    fn an_if_is_kept_where_a_call_has_one_and_said_where_it_cannot_work() {
        let settings: HookSettings = serde_json::from_value(json!({
            "PreToolUse": [{"hooks": [
                {"command": "a.sh", "if": "Bash(git *)"},
                {"command": "a.sh"},
                {"command": "b.sh", "if": "Bash("},
            ]}],
            "Stop": [{"hooks": [{"command": "c.sh", "if": "Bash(git *)"}]}],
        }))
        .unwrap();
        let filters: Vec<Option<&str>> = settings.groups("PreToolUse")[0]
            .hooks
            .iter()
            .map(HookHandler::filter)
            .collect();
        assert_eq!(filters, [Some("Bash(git *)"), None, Some("Bash(")]);
        let warnings = settings.warnings.join("\n");
        assert!(
            warnings.contains("a hook of Stop has `if`, which only tool events read"),
            "{warnings}"
        );
        assert!(
            warnings.contains("the `if` of a PreToolUse hook is not a permission rule"),
            "{warnings}"
        );
        // The same command with and without a filter are two handlers.
        let twice = settings.clone().merged(settings);
        assert_eq!(twice.groups("PreToolUse")[0].hooks.len(), 3);
    }

    #[test]
    fn missing_required_fields_are_errors() {
        let error = serde_json::from_value::<HookSettings>(json!({
            "Stop": [{"hooks": [{"type": "http"}]}]
        }))
        .unwrap_err();
        assert!(error.to_string().contains("needs `url`"), "{error}");
    }
}
