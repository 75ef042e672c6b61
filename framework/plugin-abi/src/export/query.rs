//! The host's queries outside a call's run (ABI 1.1's `query`), answered from the plugin's
//! providers, calls and sessions.

use super::{Plugin, Slot};
use crate::wire::{CommandDescription, LogTarget, Query};
use agentry_plugin::sync::lock;
use serde_json::{Value, json};
use std::sync::Mutex;

/// The answer to `query`, as JSON.
pub(super) fn answer(plugin: &Plugin, query: Query) -> Result<Value, String> {
    let providers = &plugin.providers;
    Ok(match query {
        Query::MatchesRule {
            call,
            pattern,
            subject,
        } => match lock(&plugin.calls).get(&call) {
            Some(Slot::Prepared(prepared)) => json!(prepared.matches_rule(&pattern, &subject)),
            _ => return Err(format!("the plugin has no prepared call {call}")),
        },
        Query::CheckRulePattern {
            provider,
            tool,
            pattern,
        } => json!(
            providers
                .tool(provider, &tool)?
                .check_rule_pattern(&pattern)
                .err()
        ),
        Query::TakeNotices { session_id } => {
            let state = lock(&plugin.sessions).get(&session_id).cloned();
            json!(
                state
                    .map(|state| state.notices().take())
                    .unwrap_or_default()
            )
        }
        Query::Configure(settings) => json!(plugin.configure(settings)?),
        Query::Commands { provider } => {
            let listed: Vec<CommandDescription> = providers
                .commands(provider)?
                .iter()
                .flat_map(|source| source.commands())
                .map(|command| CommandDescription::of(command.as_ref()))
                .collect();
            json!(listed)
        }
        Query::CommandContent {
            provider,
            name,
            origin,
            arguments,
        } => {
            let command = providers.command(provider, &name, origin.as_deref())?;
            json!(plugin.runtime()?.block_on(command.content(arguments))?)
        }
        Query::Describe { provider } => json!(providers.describe(provider)?),
        Query::State { provider } => json!(providers.state(provider)?),
        Query::ConnectServer { server, cwd } => {
            let hook = providers.session_servers()?;
            // The server starts in the background, on the plugin's runtime.
            let _runtime = plugin.runtime()?.enter();
            json!(providers.connect(hook.connect(&server, &cwd)?))
        }
        Query::Release { provider } => {
            providers.release(provider);
            Value::Null
        }
        Query::EndSession { session_id } => {
            let ended = lock(&plugin.sessions).remove(&session_id);
            drop(ended);
            Value::Null
        }
        Query::Login { provider } => {
            let login = providers.login(provider)?;
            plugin.runtime()?.block_on(login.log_in())?;
            Value::Null
        }
        Query::Logout { provider } => {
            let login = providers.login(provider)?;
            json!(plugin.runtime()?.block_on(login.log_out())?)
        }
        Query::Logs(target) => {
            log_to(&target)?;
            Value::Null
        }
    })
}

/// Sends the plugin's `tracing` events where `target` says (once: a later target is ignored).
fn log_to(target: &LogTarget) -> Result<(), String> {
    use std::io::IsTerminal;
    let filter = tracing_subscriber::EnvFilter::try_new(&target.filter)
        .map_err(|e| format!("the log filter `{}` is not valid: {e}", target.filter))?;
    let logs = tracing_subscriber::fmt().with_env_filter(filter);
    // Another subscriber set already (a plugin loaded twice): the first one stays.
    let _ = match &target.file {
        Some(file) => {
            let file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(file)
                .map_err(|e| format!("cannot open {}: {e}", file.display()))?;
            logs.with_writer(Mutex::new(file))
                .with_ansi(false)
                .try_init()
        }
        None => logs
            .with_writer(std::io::stderr)
            .with_ansi(std::io::stderr().is_terminal())
            .try_init(),
    };
    Ok(())
}
