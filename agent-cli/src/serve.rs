//! `agentry serve`: the chat protocol over WebSocket, and the REST API, on one address.

use crate::cli::ServeArgs;
use crate::exit::{CliError, Exit};
use crate::providers::ServerStart;
use agentry::agent::Agent;
use agentry_fanout::{Fanout, LocalFanout};
use agentry_redis::RedisFanout;
use agentry_serve::ServeSettings;
use agentry_serve::live::{Limits, SessionDefaults};
use std::sync::Arc;

/// Serves until interrupted (Ctrl-C or SIGTERM).
pub async fn serve(mut args: ServeArgs) -> Result<Exit, CliError> {
    let project = std::env::current_dir().map_err(CliError::internal)?;
    let config = crate::config::load_config(&project)?;
    // The flag (or AGENTRY_STORE), else the configuration's `[serve] store`.
    if args.agent.store.location.is_none() {
        args.agent.store.location = config.serve.store.clone();
    }
    // Bound first: the admission rules hold the port clients must name in `Host`.
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .map_err(|e| CliError::usage(anyhow::anyhow!("cannot listen on {}: {e}", args.listen)))?;
    let address = listener.local_addr().map_err(CliError::internal)?;
    let admission = crate::access::admission(
        &args.access,
        address,
        &args.allow_origin,
        &config.data_folder(),
    )?;
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
    let lease = match config.serve.lease_secs {
        Some(0) => {
            return Err(CliError::usage(anyhow::anyhow!(
                "invalid configuration: [serve] lease_secs must be at least 1"
            )));
        }
        Some(secs) => std::time::Duration::from_secs(secs),
        None => agentry_serve::DEFAULT_LEASE,
    };
    let settings = ServeSettings {
        defaults: SessionDefaults {
            cwd: project,
            policy,
            max_message_bytes: args.max_message_bytes,
            lease,
            limits: Limits {
                max_running_chats: args.max_running_chats,
                max_messages_per_second: args.max_messages_per_second,
                max_sessions_per_token: args.max_sessions_per_token,
            },
            chat_metrics: true,
        },
        admission: admission.clone(),
        models: Some(std::sync::Arc::new(offered)),
    };
    let fanout = fanout(
        args.broker.as_deref().or(config.serve.broker.as_deref()),
        &agent,
    )
    .await?;
    println!("agentry serve: listening on http://{address}");
    match admission.token() {
        Some(token) => println!("agentry serve: open http://{address}/?token={token}"),
        None => println!("agentry serve: open http://{address}/"),
    }
    let listener = agentry_serve::GuardedListener::new(
        listener,
        agentry_serve::Timeouts {
            first_byte: std::time::Duration::from_secs(args.header_timeout),
            ..agentry_serve::Timeouts::default()
        },
    );
    let app = agentry_serve::app(agent, settings, fanout);
    if let Some(address) = args.metrics_listen {
        let metrics = tokio::net::TcpListener::bind(address).await.map_err(|e| {
            CliError::usage(anyhow::anyhow!(
                "cannot listen on {address} for metrics: {e}"
            ))
        })?;
        let bound = metrics.local_addr().map_err(CliError::internal)?;
        println!("agentry serve: metrics on http://{bound}/metrics");
        let routes = agentry_serve::metrics_routes(app.metrics.clone());
        tokio::spawn(async move {
            if let Err(error) = axum::serve(metrics, routes).await {
                tracing::warn!("the metrics address stopped: {error}");
            }
        });
    }
    let drain = app.drain;
    let drain_timeout = std::time::Duration::from_secs(args.drain_timeout);
    axum::serve(listener, app.router)
        .with_graceful_shutdown(async move {
            shutdown().await;
            // A log line, not plain text: JSON logs stay JSON.
            tracing::warn!(
                "stopping: running chats have {} s to finish",
                drain_timeout.as_secs()
            );
            drain.run(drain_timeout).await;
        })
        .await
        .map_err(CliError::internal)?;
    Ok(Exit::EndTurn)
}

/// How live events reach clients: through the Redis `broker` when one is given (which needs a
/// store the instances share), else within this process.
async fn fanout(broker: Option<&str>, agent: &Agent) -> Result<Arc<dyn Fanout>, CliError> {
    let Some(url) = broker else {
        return Ok(Arc::new(LocalFanout::default()));
    };
    let shared = agent.store().is_some_and(|store| store.leases().is_some());
    if !shared {
        return Err(CliError::usage(anyhow::anyhow!(
            "--broker shares live events between instances that share a store: give them \
             --store postgres://… as well"
        )));
    }
    let fanout = RedisFanout::connect(url)
        .await
        .map_err(|e| CliError::usage(anyhow::anyhow!("{e}")))?;
    Ok(Arc::new(fanout))
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
