//! Running a prepared call to its end: its progress as updates, cancellation with a grace
//! period, and the final status with what the model reads.

use super::{CANCEL_GRACE, CallResult};
use crate::event::{AgentEvent, CallTracker, EventSink, Refusal, ToolCallStatus, ToolCallUpdate};
use crate::model::ToolResult;
use crate::sync::{lock, panic_message};
use crate::tool::ContentBlock;
use crate::tool::{
    PreparedCall, ProgressSink, ToolContent, ToolContext, ToolError, ToolOutput, ToolProgress,
};
use futures::FutureExt;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex};
use tokio_util::sync::CancellationToken;

pub(super) fn progress_sink(
    tracker: Arc<Mutex<CallTracker>>,
    events: Arc<dyn EventSink>,
) -> ProgressSink {
    ProgressSink::new(move |progress| match progress {
        ToolProgress::Content(content) => lock(&tracker).progress(ToolCallUpdate {
            content: Some(content),
            ..ToolCallUpdate::default()
        }),
        ToolProgress::Locations(locations) => lock(&tracker).progress(ToolCallUpdate {
            locations: Some(locations),
            ..ToolCallUpdate::default()
        }),
        ToolProgress::Plan(entries) => events.emit(AgentEvent::Plan { entries }),
        ToolProgress::Notice(message) => events.emit(AgentEvent::Notice { message }),
        ToolProgress::RawOutput(raw_output) => lock(&tracker).progress(ToolCallUpdate {
            raw_output: Some(raw_output),
            ..ToolCallUpdate::default()
        }),
        other => tracing::debug!("progress this executor does not show: {other:?}"),
    })
}

/// Runs a prepared call; on cancellation the tool gets [`CANCEL_GRACE`] to stop by itself, and
/// a panicking tool becomes a failure.
pub(super) async fn run_cancellable(
    prepared: Box<dyn PreparedCall>,
    ctx: ToolContext,
    cancel: &CancellationToken,
) -> Result<ToolOutput, ToolError> {
    let mut run = AssertUnwindSafe(prepared.run(ctx)).catch_unwind();
    let outcome = tokio::select! {
        outcome = &mut run => outcome,
        () = cancel.cancelled() => match tokio::time::timeout(CANCEL_GRACE, run).await {
            Ok(outcome) => outcome,
            Err(_) => Ok(Err(ToolError::Cancelled)),
        },
    };
    outcome.unwrap_or_else(|panic| {
        Err(ToolError::failed(format!(
            "the tool panicked: {}",
            panic_message(panic.as_ref())
        )))
    })
}

pub(super) fn finish(
    tracker: &mut CallTracker,
    outcome: Result<ToolOutput, ToolError>,
    cancel: &CancellationToken,
) -> CallResult {
    let result = match outcome {
        Ok(output) => {
            let result = ToolResult {
                tool_call_id: tracker.snapshot().tool_call_id.clone(),
                content: model_content(&output),
                is_error: false,
            };
            let update = ToolCallUpdate {
                content: Some(output.content),
                raw_output: output.raw_output,
                ..ToolCallUpdate::default()
            };
            match tracker.transition(ToolCallStatus::Completed, update) {
                Ok(()) => result,
                Err(illegal) => fail(tracker, illegal.to_string(), None),
            }
        }
        Err(ToolError::Cancelled) => refuse(tracker, Refusal::Cancelled { started: true }),
        Err(_) if cancel.is_cancelled() => refuse(tracker, Refusal::Cancelled { started: true }),
        Err(ToolError::AwaitingAnswer) => {
            match tracker.transition(ToolCallStatus::AwaitingAnswer, ToolCallUpdate::default()) {
                Ok(()) => {
                    return CallResult::AwaitingAnswer(tracker.snapshot().tool_call_id.clone());
                }
                Err(illegal) => fail(tracker, illegal.to_string(), None),
            }
        }
        Err(ToolError::Failed { message, output }) => fail(tracker, message, output),
        Err(error) => fail(tracker, error.to_string(), None),
    };
    CallResult::Done(result)
}

/// Ends the call for a reason of the executor's own; the model reads the reason.
pub(super) fn refuse(tracker: &mut CallTracker, refusal: Refusal) -> ToolResult {
    let message = refusal.to_string();
    end_failed(tracker, message, None, Some(refusal))
}

/// Fails the call with the tool's own error.
pub(super) fn fail(
    tracker: &mut CallTracker,
    message: String,
    output: Option<ToolOutput>,
) -> ToolResult {
    end_failed(tracker, message, output, None)
}

/// Fails the call (from `pending` or `in_progress`) and returns the error the model reads.
fn end_failed(
    tracker: &mut CallTracker,
    message: String,
    output: Option<ToolOutput>,
    refusal: Option<Refusal>,
) -> ToolResult {
    let mut content = output
        .as_ref()
        .map(|o| o.content.clone())
        .unwrap_or_default();
    content.push(ToolContent::text(message.clone()));
    let model_text = match output.as_ref().map(ToolOutput::model_text) {
        Some(text) if !text.is_empty() => format!("{text}\n{message}"),
        _ => message,
    };
    let update = ToolCallUpdate {
        content: Some(content),
        raw_output: output.and_then(|o| o.raw_output),
        refusal,
        ..ToolCallUpdate::default()
    };
    if let Err(illegal) = tracker.transition(ToolCallStatus::Failed, update) {
        // Only a call that ended already cannot fail: its end is what the stream showed.
        tracing::error!("{illegal}: the call had ended already");
    }
    ToolResult {
        tool_call_id: tracker.snapshot().tool_call_id.clone(),
        content: vec![ContentBlock::Text { text: model_text }],
        is_error: true,
    }
}

/// What the model reads of a successful output: its text, then any images.
fn model_content(output: &ToolOutput) -> Vec<ContentBlock> {
    let mut content = vec![ContentBlock::Text {
        text: output.model_text(),
    }];
    content.extend(output.content.iter().filter_map(|c| match c {
        ToolContent::Content {
            content: image @ ContentBlock::Image { .. },
        } => Some(image.clone()),
        _ => None,
    }));
    content
}
