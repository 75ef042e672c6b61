//! `agentry serve`: the chat protocol over WebSocket, and the REST API, on one address.

use crate::cli::ServeArgs;
use crate::exit::{CliError, Exit};
use crate::providers::ServerStart;
use agentry_serve::ServeSettings;
use agentry_serve::live::SessionDefaults;

/// Serves until interrupted (Ctrl-C or SIGTERM).
pub async fn serve(args: ServeArgs) -> Result<Exit, CliError> {
    let project = std::env::current_dir().map_err(CliError::internal)?;
    let config = crate::assemble::load_config(&project)?;
    let policy = crate::assemble::policy(&config, &args.agent, &project)?;
    let model = crate::assemble::model(&config, &args.agent).map_err(CliError::usage)?;
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
    let token = match args.token {
        Some(token) => Some(token),
        None if !args.listen.ip().is_loopback() => {
            let token = uuid::Uuid::new_v4().simple().to_string();
            eprintln!("agentry serve: clients must send `Authorization: Bearer {token}`");
            Some(token)
        }
        None => None,
    };
    let settings = ServeSettings {
        defaults: SessionDefaults {
            cwd: project,
            policy,
            max_message_bytes: args.max_message_bytes,
        },
        token,
        allowed_origins: args.allow_origin,
        models: Some(std::sync::Arc::new(offered)),
    };
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .map_err(|e| CliError::usage(anyhow::anyhow!("cannot listen on {}: {e}", args.listen)))?;
    let address = listener.local_addr().map_err(CliError::internal)?;
    println!("agentry serve: listening on http://{address}");
    let listener = agentry_serve::without_delay(listener);
    axum::serve(listener, agentry_serve::router(agent, settings))
        .with_graceful_shutdown(shutdown())
        .await
        .map_err(CliError::internal)?;
    Ok(Exit::EndTurn)
}

/// Ctrl-C or SIGTERM.
async fn shutdown() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut terminate =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(signal) => signal,
                Err(_) => return std::future::pending().await,
            };
        tokio::select! {
            _ = interrupt => {}
            _ = terminate.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = interrupt.await;
}
