//! How `agentry run` shows a turn: the answer on stdout, activity on stderr, or every event as
//! a JSON line on stdout (`stream-json`).

use crate::cli::OutputFormat;
use agentry::event::{AgentEvent, ChatSummary, ToolCallBook, ToolCallStatus};
use agentry::ids::SessionId;
use agentry_plugin::terminal_text::visible;
use serde_json::json;
use std::io::Write;
use tokio::sync::mpsc::UnboundedReceiver;

/// Shows events as they come, until the channel closes.
pub async fn render_events(mut events: UnboundedReceiver<AgentEvent>, format: OutputFormat) {
    let mut calls = ToolCallBook::new();
    while let Some(event) = events.recv().await {
        match format {
            OutputFormat::StreamJson => print_json_line(&event),
            OutputFormat::Text | OutputFormat::Json => report_activity(&event, &mut calls),
        }
    }
}

fn print_json_line(event: &AgentEvent) {
    let mut stdout = std::io::stdout().lock();
    // A closed stdout (the reader went away) must not stop the turn.
    if let Ok(line) = serde_json::to_string(event) {
        let _ = writeln!(stdout, "{line}");
        let _ = stdout.flush();
    }
}

/// One line on stderr per tool call start and end, and per notice; what a model, a tool or a
/// server wrote is shown, not obeyed ([`visible`]).
fn report_activity(event: &AgentEvent, calls: &mut ToolCallBook) {
    let call = calls.apply(event);
    match event {
        AgentEvent::ToolCall(call) => eprintln!("agentry: → {}", visible(&call.title)),
        AgentEvent::ToolCallUpdate(update) => {
            let title =
                visible(call.map_or(update.tool_call_id.as_str(), |call| call.title.as_str()));
            let text = update
                .content
                .iter()
                .flatten()
                .filter_map(|c| c.model_text())
                .collect::<Vec<_>>()
                .join(" ");
            match update.status {
                Some(ToolCallStatus::Completed) => eprintln!(
                    "agentry: ✓ {title} ({} ms)",
                    update.duration_ms.unwrap_or_default()
                ),
                Some(ToolCallStatus::Failed) => {
                    let reason = visible(text.lines().last().unwrap_or_default());
                    eprintln!("agentry: ✗ {title}: {reason}");
                }
                _ => {}
            }
        }
        AgentEvent::Notice { message } => eprintln!("agentry: {}", visible(message)),
        AgentEvent::Compacted(compaction) => eprintln!("agentry: {}", compaction.describe()),
        _ => {}
    }
}

/// Prints the outcome of a finished turn in the chosen format.
pub fn print_summary(summary: &ChatSummary, format: OutputFormat) {
    match format {
        OutputFormat::Text => print_line(&visible(&summary.answer())),
        OutputFormat::Json => print_line(
            &json!({
                "type": "result",
                "is_error": false,
                "session_id": summary.session_id,
                "stop_reason": summary.stop_reason,
                "result": summary.result,
                "usage": summary.usage,
                "total_cost_usd": summary.cost_usd(),
                "model_usage": summary.spending,
                "model_requests": summary.model_requests,
                "duration_ms": summary.duration_ms,
            })
            .to_string(),
        ),
        // The chat_ended event already said it.
        OutputFormat::StreamJson => {}
    }
}

/// Prints a failed turn in the chosen format (the message also goes to stderr from `main`).
pub fn print_failure(session_id: &SessionId, error: &str, format: OutputFormat) {
    if format == OutputFormat::Json {
        print_line(
            &json!({"type": "result", "is_error": true, "session_id": session_id, "error": error})
                .to_string(),
        );
    }
}

/// Prints a line on stdout; a reader that went away (`agentry run … | head`) is not an error.
pub fn print_line(line: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{line}");
    let _ = stdout.flush();
}
