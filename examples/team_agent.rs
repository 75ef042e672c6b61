//! A team's own agent binary: two providers linked statically (file_ops and bash), one tool
//! plugin loaded at run time, any model. Here the model is scripted so the example runs offline:
//! it lists the files, then counts with the plugin's tool.
//!
//! ```text
//! cargo run -p agentry-examples --example team_agent [PLUGIN_FILE]
//! ```
//!
//! Without PLUGIN_FILE it loads the example plugin cargo built beside it.

use agentry::model::scripted::{ScriptedModel, ScriptedResponse};
use agentry::permission::{PermissionMode, PermissionPolicy};
use agentry::prelude::*;
use std::path::PathBuf;
use std::sync::Arc;

fn example_plugin() -> anyhow::Result<PathBuf> {
    let exe = std::env::current_exe()?;
    let target = exe
        .parent()
        .and_then(|dir| dir.parent())
        .ok_or_else(|| anyhow::anyhow!("no target folder"))?;
    let name = format!(
        "{}agentry_plugin_hello{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    );
    Ok(target.join("deps").join(name))
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let plugin_file = match std::env::args().nth(1) {
        Some(path) => PathBuf::from(path),
        None => example_plugin()?,
    };
    let plugin = agentry_plugin_host::load(&plugin_file)?;
    let model = ScriptedModel::new([
        ScriptedResponse::tool_call(
            "Bash",
            serde_json::json!({"command": "ls | head -3", "description": "List files"}),
        ),
        ScriptedResponse::tool_call("SlowCount", serde_json::json!({"to": 3})),
        ScriptedResponse::text("Listed the files and counted to three."),
    ]);
    let agent = Agent::builder(Arc::new(model))
        .provider(agentry_file_ops::FileOps::default())
        .provider(agentry_bash::Shell::default())
        .provider(plugin)
        .build()?;
    for provider in agent.registry().providers() {
        println!(
            "provider {} ({}): {}",
            provider.name,
            provider.origin,
            provider.tools.join(", ")
        );
    }
    let mut options = SessionOptions::new(std::env::current_dir()?);
    options.policy = PermissionPolicy::new(PermissionMode::Bypass, vec![]);
    let mut session = agent.new_session(options)?;
    let io = ChatIo::new(|event: AgentEvent| {
        if let AgentEvent::ToolCallUpdate(update) = event
            && let Some(status) = update.status
        {
            println!("tool call {}: {status:?}", update.tool_call_id);
        }
    });
    let summary = session
        .prompt_with(
            vec![ContentBlock::text("List the files, then count to 3.")],
            &ChatOptions::default(),
            &io,
        )
        .await?;
    println!("{} ({})", summary.answer(), summary.stop_reason);
    Ok(())
}
