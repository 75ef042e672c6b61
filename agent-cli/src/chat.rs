//! `agentry` without a subcommand: the interactive chat in the terminal, or, when standard
//! input is not a terminal, `agentry run` on what it carries.

use crate::cli::{ChatArgs, OutputFormat, RunArgs};
use crate::exit::{CliError, Exit};
use crate::providers::ServerStart;
use agentry_tui::{Start, TuiSettings};
use std::io::{IsTerminal, Read};
use std::sync::Arc;

/// Runs the chat, or a headless run when there is no terminal to chat in.
pub async fn chat(args: ChatArgs) -> Result<Exit, CliError> {
    if !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
        return crate::run::run(headless(args)?).await;
    }
    let cwd = std::env::current_dir().map_err(CliError::internal)?;
    crate::trust::ask_in_terminal(&cwd)?;
    let config = crate::config::load_config(&cwd)?;
    let policy = crate::assemble::policy(&config, &args.agent, &cwd)?;
    let model = crate::assemble::model(&config, &args.agent).map_err(CliError::usage)?;
    let offered = config.offered_models(model.name().to_owned());
    let agent = crate::assemble::agent(
        &config,
        &args.agent,
        &cwd,
        model,
        ServerStart::Background,
        None,
    )
    .await?;
    let start = match (args.r#continue, args.resume) {
        (true, _) => Start::Continue,
        (false, Some(id)) if id.is_empty() => Start::Resume(None),
        (false, Some(id)) => Start::Resume(Some(id.as_str().into())),
        (false, None) => Start::New,
    };
    let mut settings = TuiSettings::new(cwd);
    settings.policy = policy;
    settings.start = start;
    settings.first_message = args.prompt;
    settings.models = Some(Arc::new(offered));
    settings.sandbox = crate::sandbox::session_mode(&config, &args.agent, &agent);
    settings.data_folder = config.data_folder();
    agentry_tui::run(agent, settings)
        .await
        .map_err(|e| CliError::internal(anyhow::anyhow!(e)))?;
    Ok(Exit::EndTurn)
}

/// `agentry run` on the piped text (after the prompt argument, when there is one).
fn headless(args: ChatArgs) -> Result<RunArgs, CliError> {
    let prompt = match args.prompt {
        Some(prompt) if !std::io::stdin().is_terminal() => {
            let mut piped = String::new();
            std::io::stdin()
                .read_to_string(&mut piped)
                .map_err(CliError::usage)?;
            Some(if piped.trim().is_empty() {
                prompt
            } else {
                format!("{prompt}\n\n{piped}")
            })
        }
        prompt => prompt,
    };
    let resume = match (args.r#continue, args.resume) {
        (true, _) => {
            return Err(CliError::usage(anyhow::anyhow!(
                "--continue needs a terminal; without one, pass --resume ID"
            )));
        }
        (false, Some(id)) if id.is_empty() => {
            return Err(CliError::usage(anyhow::anyhow!(
                "--resume without an id needs a terminal to pick one in"
            )));
        }
        (false, resume) => resume,
    };
    Ok(RunArgs {
        prompt,
        agent: args.agent,
        output_format: OutputFormat::Text,
        output_schema: None,
        resume,
        rewind: None,
        rewind_scope: crate::cli::RewindWhat::Both,
        overwrite_hand_edits: false,
        cwd: None,
        answers: None,
        record: None,
    })
}
