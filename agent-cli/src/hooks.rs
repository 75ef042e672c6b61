//! `agentry hooks`: the hooks in force in this folder — by event, each handler with its
//! matcher, type, what it runs and the file it was written in (an enabled plugin's with its
//! folder) — and what of the settings
//! agentry does not know (left out, with why).

use crate::cli::HooksArgs;
use crate::exit::{CliError, Exit};
use agentry_stock::hooks::HookSettings;
use serde_json::{Value, json};

/// Lists this folder's hooks, as text or JSON.
pub fn list(args: &HooksArgs) -> Result<Exit, CliError> {
    let project = std::env::current_dir().map_err(CliError::internal)?;
    let config = crate::config::load_config(&project)?;
    let (config, _) = crate::enabled_plugins::with_plugins(&config);
    let off = config.disable_all_hooks == Some(true);
    if args.json {
        let mut listed = as_json(&config.hooks_in_force());
        listed["disabled"] = json!(off);
        println!("{listed}");
    } else if off {
        println!("no hooks: `disableAllHooks` turns them off");
    } else {
        print!("{}", as_text(&config.hooks));
    }
    Ok(Exit::EndTurn)
}

/// Every handler as one JSON object each, with the warnings.
fn as_json(hooks: &HookSettings) -> Value {
    let mut listed = Vec::new();
    for (event, groups) in hooks.events() {
        for group in groups {
            for handler in &group.hooks {
                listed.push(json!({
                    "event": event,
                    "matcher": group.matcher,
                    "type": handler.kind(),
                    "run": handler.target(),
                    "timeout": handler.timeout(),
                    "if": handler.filter(),
                    "source": group.source.file,
                    "plugin_root": group.source.plugin_root,
                }));
            }
        }
    }
    json!({"hooks": listed, "warnings": hooks.warnings})
}

/// The hooks by event, for people.
fn as_text(hooks: &HookSettings) -> String {
    let mut text = String::new();
    if hooks.is_empty() {
        text.push_str("no hooks\n");
    }
    for (event, groups) in hooks.events() {
        text.push_str(&format!("{event}\n"));
        for group in groups {
            let matcher = group
                .matcher
                .as_deref()
                .filter(|m| !m.is_empty())
                .unwrap_or("*");
            let source = group
                .source
                .file
                .as_ref()
                .map_or_else(String::new, |file| format!("  ({})", file.display()));
            for handler in &group.hooks {
                let only_if = handler
                    .filter()
                    .map_or_else(String::new, |rule| format!(" if {rule}"));
                text.push_str(&format!(
                    "  {matcher:<16} [{}{only_if}] {}{source}\n",
                    handler.kind(),
                    handler.target().lines().next().unwrap_or_default()
                ));
            }
        }
    }
    for warning in &hooks.warnings {
        text.push_str(&format!("warning: {warning}\n"));
    }
    text
}
