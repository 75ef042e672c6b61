//! The `agentry` binary: argument parsing, configuration and wiring; the work is the framework's.

mod access;
mod acp;
mod answers;
mod assemble;
mod chat;
mod cli;
mod commands;
mod config;
mod enabled_plugins;
mod exit;
mod hooks;
mod linked;
mod manual;
mod mcp;
mod models;
mod output;
mod permissions;
mod plugin;
mod providers;
mod record;
mod rewind;
mod run;
mod sandbox;
mod sections;
mod serve;
mod sessions;
mod tool_plugins;
mod trust;

use agentry_otlp::Traces;
use clap::Parser;
use cli::{Cli, Command, LogFormat};
use exit::CliError;
use std::io::IsTerminal;
use std::process::ExitCode;
use tracing_subscriber::Layer;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

fn main() -> ExitCode {
    let cli = Cli::parse();
    trust::set_flag(cli.trust);
    let format = match &cli.command {
        Some(Command::Serve(args)) => args.log_format,
        Some(Command::Acp(args)) => args.log_format,
        _ => LogFormat::Text,
    };
    let traces = match traces() {
        Ok(traces) => traces,
        Err(error) => {
            eprintln!("agentry: error: cannot send traces: {error:#}");
            return exit::Exit::Usage.into();
        }
    };
    init_logs(
        cli.command.is_none() && interactive(),
        format,
        traces.as_ref(),
    );
    // Agents that were killed left their sessions' temporary folders behind; they are removed
    // beside the work, not before it.
    std::thread::spawn(agentry::session::remove_stale_temp_folders);
    let outcome = match cli.command {
        None => on_runtime(chat::chat(cli.chat)),
        Some(command) => subcommand(command),
    };
    if let Some(traces) = traces {
        traces.shutdown();
    }
    match outcome {
        Ok(exit) => exit.into(),
        Err(CliError { exit, error }) => {
            // An error may carry what a server or a file said: shown, not obeyed.
            let error = format!("{error:#}");
            eprintln!(
                "agentry: error: {}",
                agentry_plugin::terminal_text::visible(&error)
            );
            exit.into()
        }
    }
}

/// Runs `work` on a new Tokio runtime. A blocking read of standard input still pending at the
/// end (`agentry acp` ends when stdout breaks, stdin still open) is left behind after a moment
/// rather than waited for.
fn on_runtime(
    work: impl std::future::Future<Output = Result<exit::Exit, CliError>>,
) -> Result<exit::Exit, CliError> {
    let runtime = tokio::runtime::Runtime::new().map_err(CliError::internal)?;
    let outcome = runtime.block_on(work);
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    outcome
}

/// Whether the interactive chat runs (standard input and output are terminals).
fn interactive() -> bool {
    std::io::stdin().is_terminal() && std::io::stdout().is_terminal()
}

/// Logs go to standard error (standard output is the protocol's in `agentry acp`), except
/// during the interactive chat, which owns the terminal: then to `agentry.log` in the data
/// folder. The ACP library logs every error answer as a warning; the client gets those
/// answers, so only its errors are shown.
fn init_logs(to_file: bool, format: LogFormat, traces: Option<&Traces>) {
    let filter = std::env::var("AGENTRY_LOG")
        .ok()
        .filter(|filter| tracing_subscriber::EnvFilter::try_new(filter).is_ok())
        .unwrap_or_else(|| "warn,agent_client_protocol=error".to_owned());
    let log_file = to_file
        .then(|| {
            let dir = agentry_stock::data_folder();
            agentry_plugin::private::folder(&dir).ok()?;
            let log = dir.join("agentry.log");
            let file = agentry_plugin::private::file_options()
                .create(true)
                .append(true)
                .open(&log)
                .ok()?;
            agentry_plugin::private::file(&log).ok()?;
            Some((file, log))
        })
        .flatten();
    // Plugins log where agentry does.
    agentry_plugin_host::log_to(agentry_plugin_host::LogTarget {
        filter: filter.clone(),
        file: log_file.as_ref().map(|(_, path)| path.clone()),
    });
    let filter = tracing_subscriber::EnvFilter::new(filter);
    let logs = match log_file {
        Some((file, _)) => tracing_subscriber::fmt::layer()
            .with_writer(std::sync::Mutex::new(file))
            .with_ansi(false)
            .boxed(),
        None if format == LogFormat::Json => tracing_subscriber::fmt::layer()
            .json()
            .with_current_span(true)
            .with_span_list(true)
            .with_writer(std::io::stderr)
            .boxed(),
        None => tracing_subscriber::fmt::layer()
            .with_writer(std::io::stderr)
            .with_ansi(std::io::stderr().is_terminal())
            .boxed(),
    };
    tracing_subscriber::registry()
        .with(logs.with_filter(filter))
        .with(traces.map(Traces::layer))
        .init();
}

/// The traces `[telemetry]` and the `OTEL_*` variables ask for (the configuration read from
/// the current folder, as far as it is trusted; a broken one is reported by the command, which
/// reads it again).
fn traces() -> Result<Option<Traces>, String> {
    let settings = std::env::current_dir()
        .ok()
        .and_then(|cwd| trust::load_quietly(&cwd).ok())
        .map(|config| config.telemetry)
        .unwrap_or_default();
    Traces::configured(&settings).map_err(|error| error.to_string())
}

/// Runs a subcommand.
fn subcommand(command: Command) -> Result<exit::Exit, CliError> {
    match command {
        Command::Run(args) => on_runtime(run::run(*args)),
        Command::Sessions(args) => sessions::list(&args),
        Command::Acp(args) => on_runtime(acp::acp(args)),
        Command::Serve(args) => on_runtime(serve::serve(args)),
        Command::Mcp(args) => on_runtime(mcp::mcp(args)),
        Command::Providers(args) => on_runtime(providers::list(&args)),
        Command::Models(args) => models::list(&args),
        Command::Commands(args) => on_runtime(commands::list(&args)),
        Command::Permissions(args) => on_runtime(permissions::list(&args)),
        Command::Hooks(args) => hooks::list(&args),
        Command::Plugin(args) => plugin::plugin(args),
        Command::Plugins(args) => on_runtime(tool_plugins::plugins(args)),
        Command::Completions { shell } => manual::completions(shell),
        Command::Man { out_dir } => manual::man(out_dir.as_deref()),
        Command::Trust(args) => trust::trust(args.path).map(|()| exit::Exit::EndTurn),
        Command::Untrust(args) => trust::untrust(args.path).map(|()| exit::Exit::EndTurn),
    }
}
