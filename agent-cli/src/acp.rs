//! `agentry acp`: the agent as an ACP agent on stdio, for Zed and other ACP clients. Standard
//! output carries only protocol messages; logs go to standard error.

use crate::cli::AcpArgs;
use crate::exit::{CliError, Exit};
use crate::providers::ServerStart;
use agentry::model::Model;
use agentry::model::unavailable::UnavailableModel;
use agentry_acp::{AcpSettings, serve_stdio};
use std::sync::Arc;

/// Serves ACP on stdio until the client closes it.
pub async fn acp(args: AcpArgs) -> Result<Exit, CliError> {
    let project = std::env::current_dir().map_err(CliError::internal)?;
    let config = crate::config::load_config(&project)?;
    let policy = crate::assemble::policy(&config, &args.agent, &project)?;
    // An editor starts its agent before the user can see anything: without a model, serve
    // anyway and tell the client why (each session then fails with `auth_required`).
    let (model, model_problem): (Arc<dyn Model>, _) =
        match crate::assemble::model(&config, &args.agent) {
            Ok(model) => (model, None),
            Err(problem) => {
                let reason = problem.to_string();
                tracing::error!("{reason}");
                (
                    Arc::new(UnavailableModel::new(reason.clone())),
                    Some(reason),
                )
            }
        };
    let offered = config.offered_models(model.name());
    let agent = crate::assemble::agent(
        &config,
        &args.agent,
        &project,
        model,
        ServerStart::Background,
        args.record.as_deref(),
    )
    .await?;
    crate::assemble::warn_about_rules(&agent, &policy, &project);
    let settings = AcpSettings {
        name: "agentry".to_owned(),
        version: env!("CARGO_PKG_VERSION").to_owned(),
        policy,
        model_problem,
        models: Some(Arc::new(offered)),
        sandbox: crate::sandbox::session_mode(&config, &args.agent, &agent),
        trust: crate::trust::editor_question(&project)?,
    };
    serve_stdio(agent, settings)
        .await
        .map_err(|e| CliError::internal(anyhow::anyhow!("the ACP connection failed: {e}")))?;
    Ok(Exit::EndTurn)
}
