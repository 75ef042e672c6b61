//! `agentry permissions`: the permission mode, the effective rules and where each comes from,
//! and the rules that can never match (with why).

use crate::cli::PermissionsArgs;
use crate::exit::{CliError, Exit};
use agentry::permission::PermissionPolicy;
use agentry::permission::lint::{RuleWarning, check_rules};
use serde_json::json;

/// Lists the policy of this folder's agent, as text or JSON.
pub async fn list(args: &PermissionsArgs) -> Result<Exit, CliError> {
    let project = std::env::current_dir().map_err(CliError::internal)?;
    let config = crate::config::load_config(&project)?;
    let policy = crate::assemble::policy(&config, &args.agent, &project)?;
    let registry = crate::providers::tool_registry(&config, &args.agent.plugin, &project).await?;
    let warnings = check_rules(&policy, registry.tools(), &project);
    if args.json {
        println!("{}", as_json(&policy, &warnings));
    } else {
        print!("{}", as_text(&policy, &warnings));
    }
    Ok(Exit::EndTurn)
}

/// The policy and its warnings as one JSON object.
fn as_json(policy: &PermissionPolicy, warnings: &[RuleWarning]) -> serde_json::Value {
    let rules: Vec<_> = policy
        .rules
        .iter()
        .map(|rule| {
            json!({
                "action": rule.action.as_str(),
                "rule": rule.target.to_string(),
                "source": rule.origin.to_string(),
            })
        })
        .collect();
    json!({
        "mode": policy.mode.as_str(),
        "rules": rules,
        "additional_directories": policy.additional_directories,
        "warnings": warnings,
    })
}

/// The policy and its warnings for people.
fn as_text(policy: &PermissionPolicy, warnings: &[RuleWarning]) -> String {
    let mut text = format!("mode: {}\n", policy.mode);
    if policy.rules.is_empty() {
        text.push_str("no rules\n");
    }
    let width = policy
        .rules
        .iter()
        .map(|rule| rule.target.to_string().len())
        .max()
        .unwrap_or(0);
    for rule in &policy.rules {
        text.push_str(&format!(
            "{:<5} {:<width$}  {}\n",
            rule.action.as_str(),
            rule.target.to_string(),
            rule.origin,
        ));
    }
    for folder in &policy.additional_directories {
        text.push_str(&format!("additional directory: {}\n", folder.display()));
    }
    for warning in warnings {
        text.push_str(&format!("warning: {warning}\n"));
    }
    text
}
