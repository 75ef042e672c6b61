//! `agentry run`: one prompt turn, headless.

use crate::answers::FileAnswers;
use crate::cli::{OutputFormat, RunArgs};
use crate::exit::{CliError, Exit};
use crate::output::{print_failure, print_summary, render_events};
use crate::providers::ServerStart;
use agentry::agent::{Agent, ChatIo, ChatOptions, SessionOptions};
use agentry::commands::CommandPrompt;
use agentry::event::{AgentEvent, EventSink};
use agentry::hooks::SessionEndReason;
use agentry::permission::{PermissionOutcome, PermissionRequest, handler_fn};
use agentry::question::QuestionHandler;
use agentry::tool::ContentBlock;
use anyhow::{Context, anyhow};
use std::io::{IsTerminal, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Runs `agentry run` and returns the exit code its stop reason means.
pub async fn run(args: RunArgs) -> Result<Exit, CliError> {
    let cwd = working_directory(args.cwd.as_deref())?;
    let config = crate::config::load_config(&cwd)?;
    if let Some(target) = &args.rewind {
        return crate::rewind::run(&args, target, &config, &cwd).await;
    }
    let policy = crate::assemble::policy(&config, &args.agent, &cwd)?;
    let output_schema = args.output_schema.as_deref().map(read_schema).transpose()?;
    let answers = args
        .answers
        .as_deref()
        .map(FileAnswers::read)
        .transpose()
        .map_err(CliError::usage)?;
    let prompt = read_prompt(args.prompt.as_deref())?;
    let model = crate::assemble::model(&config, &args.agent).map_err(CliError::usage)?;
    let agent =
        crate::assemble::agent(&config, &args.agent, &cwd, model, ServerStart::Wait, None).await?;
    let prompt = expand_command(prompt, &agent).await?;
    let mut options = SessionOptions::new(cwd);
    options.policy = policy;
    let mut session = match &args.resume {
        Some(id) => agent.resume_session(&id.as_str().into(), options)?,
        None => agent.new_session(options)?,
    };
    if let Some(file) = &args.record {
        session.record_to(file, crate::record::redactor(&config)?)?;
    }

    let (events, receiver) = tokio::sync::mpsc::unbounded_channel();
    let renderer = tokio::spawn(render_events(receiver, args.output_format));
    let cancel = CancellationToken::new();
    tokio::spawn(cancel_on_sigint(cancel.clone()));
    let events: Arc<dyn EventSink> = match args.output_format {
        OutputFormat::StreamJson => Arc::new(events),
        // The text and JSON formats print the answer at the end and report only calls and
        // notices meanwhile: the answer's chunks are not handed to the printer one by one.
        OutputFormat::Text | OutputFormat::Json => Arc::new(move |event: AgentEvent| {
            if is_activity(&event) {
                let _ = events.send(event);
            }
        }),
    };
    let io = ChatIo {
        events,
        permissions: Arc::new(handler_fn(|request: PermissionRequest| async move {
            eprintln!("agentry: {}", cannot_ask(&request));
            PermissionOutcome::Unanswered
        })),
        cancel,
        questions: answers.map(|answers| Arc::new(answers) as Arc<dyn QuestionHandler>),
    };
    let outcome = session
        .prompt_with(prompt, &ChatOptions { output_schema }, &io)
        .await;
    drop(io);
    // The renderer ends once every sender is gone; it has then printed every event.
    let _ = renderer.await;
    for notice in session.end(SessionEndReason::Other).await {
        eprintln!(
            "agentry: {}",
            agentry_plugin::terminal_text::visible(&notice)
        );
    }
    match outcome {
        Ok(summary) => {
            print_summary(&summary, args.output_format);
            Ok(Exit::for_stop(summary.stop_reason))
        }
        Err(error) => {
            print_failure(session.id(), &error.to_string(), args.output_format);
            Err(error.into())
        }
    }
}

/// Whether the text and JSON formats report an event while the turn runs.
fn is_activity(event: &AgentEvent) -> bool {
    matches!(
        event,
        AgentEvent::ToolCall(_)
            | AgentEvent::ToolCallUpdate(_)
            | AgentEvent::Notice { .. }
            | AgentEvent::Compacted(_)
    )
}

fn working_directory(flag: Option<&Path>) -> Result<PathBuf, CliError> {
    let dir = match flag {
        Some(dir) => dir.to_path_buf(),
        None => std::env::current_dir().map_err(CliError::internal)?,
    };
    canonical_dir(&dir)
        .with_context(|| format!("--cwd {}: no such directory", dir.display()))
        .map_err(CliError::usage)
}

fn canonical_dir(dir: &Path) -> std::io::Result<PathBuf> {
    let canonical = dir.canonicalize()?;
    if canonical.is_dir() {
        Ok(canonical)
    } else {
        Err(std::io::Error::new(
            std::io::ErrorKind::NotADirectory,
            "not a directory",
        ))
    }
}

fn read_schema(path: &Path) -> Result<serde_json::Value, CliError> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read --output-schema {}", path.display()))
        .map_err(CliError::usage)?;
    let schema = serde_json::from_str(&text)
        .with_context(|| format!("--output-schema {} is not JSON", path.display()))
        .map_err(CliError::usage)?;
    Ok(schema)
}

fn read_prompt(arg: Option<&str>) -> Result<Vec<ContentBlock>, CliError> {
    let text = match arg {
        Some(text) if text != "-" => text.to_owned(),
        _ if std::io::stdin().is_terminal() => {
            return Err(CliError::usage(anyhow!(
                "no prompt: pass it as an argument or on standard input"
            )));
        }
        _ => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .context("cannot read the prompt from standard input")
                .map_err(CliError::usage)?;
            text
        }
    };
    if text.trim().is_empty() {
        return Err(CliError::usage(anyhow!("the prompt is empty")));
    }
    Ok(vec![ContentBlock::Text { text }])
}

/// The prompt, or that of the slash command it runs (`/review src/lib.rs`): a prompt template,
/// a plugin's command or an MCP server's prompt. Text that names no command is the prompt as
/// it is.
async fn expand_command(
    prompt: Vec<ContentBlock>,
    agent: &Agent,
) -> Result<CommandPrompt, CliError> {
    let [ContentBlock::Text { text }] = prompt.as_slice() else {
        return Ok(prompt.into());
    };
    if !text.trim_start().starts_with('/') {
        return Ok(prompt.into());
    }
    match agent.slash_commands().expand(text).await {
        None => Ok(prompt.into()),
        Some(expanded) => expanded.map_err(|problem| CliError::usage(anyhow!(problem))),
    }
}

/// The first SIGINT cancels the turn cleanly; a second one exits at once.
async fn cancel_on_sigint(cancel: CancellationToken) {
    if tokio::signal::ctrl_c().await.is_err() {
        return;
    }
    eprintln!("agentry: cancelling (press Ctrl-C again to quit at once)");
    cancel.cancel();
    if tokio::signal::ctrl_c().await.is_ok() {
        std::process::exit(Exit::Cancelled as i32);
    }
}

/// What a headless run says of a call that needs permission: that nobody was asked, and the
/// flags that would allow exactly that call.
fn cannot_ask(request: &PermissionRequest) -> String {
    let call = &request.tool_call;
    let allow = match request.allow_rules.as_slice() {
        [] => format!("allow {} with --allow {}", call.tool_name, call.tool_name),
        rules => format!(
            "allow it with {}",
            rules
                .iter()
                .map(|rule| format!("--allow '{}'", rule.replace('\'', r"'\''")))
                .collect::<Vec<_>>()
                .join(" ")
        ),
    };
    let title = agentry_plugin::terminal_text::visible(&call.title);
    match &request.unseen {
        Some(why) => format!(
            "{} `{title}` needs permission, and no rule can allow it ({}): a headless run cannot ask, so it did not run. Run it where you can be asked, or write each command plainly.",
            call.tool_name,
            agentry_plugin::terminal_text::visible(why)
        ),
        None => format!(
            "{} `{title}` needs permission, and a headless run cannot ask, so it did not run: {allow}, or choose a --permission-mode.",
            call.tool_name
        ),
    }
}
