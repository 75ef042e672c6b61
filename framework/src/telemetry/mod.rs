//! The spans a chat runs in, named and attributed per OpenTelemetry's semantic conventions for
//! generative AI, as `tracing` spans: a subscriber with an OpenTelemetry layer
//! (`tracing-opentelemetry`) exports them as they are, and a log formatter shows their fields.
//!
//! - a chat (the main loop's or a sub-agent's): `invoke_agent {agent}`, with the session as
//!   `gen_ai.conversation.id` and the chat's usage when it ends;
//! - each model request in it: `chat {model}` (a client span), with the request's model and
//!   provider, the finish reason and the tokens;
//! - each tool call: `execute_tool {tool}`, with the tool's name and the call's id. A
//!   sub-agent's chat is a child of the call that started it.
//!
//! A failure is recorded on its span (`error.type`, and an error status). Prompts, answers,
//! tool arguments and results are recorded only when the [`CONTENT_TARGET`] is enabled at the
//! `TRACE` level by the subscriber: `agentry`'s `[telemetry] include_content = true` does so.
//! `agentry-otlp` sends the spans to an OpenTelemetry collector.

use crate::event::{StopReason, Usage};
use crate::ids::SessionId;
use crate::model::FinishReason;
use serde::Serialize;
use tracing::Span;
use tracing::field::Empty;

/// The target a subscriber enables (at `TRACE`) for spans to carry what was said: the
/// messages sent to the model and its answers (`gen_ai.input.messages`,
/// `gen_ai.output.messages`), and the tools' arguments and results.
pub const CONTENT_TARGET: &str = "gen_ai.content";

/// The target of a chat's own log lines (it started, it ended, it failed). Their spans show
/// the same (their start, end, usage and error), so the OpenTelemetry layer takes only the
/// failures of them, which say why.
pub const CHAT_LOG_TARGET: &str = "agentry::chat";

/// Whether the subscriber wants what was said recorded on the spans.
pub fn content_recorded() -> bool {
    tracing::enabled!(target: CONTENT_TARGET, tracing::Level::TRACE)
}

/// A model's provider and name, from `provider/name` (the whole for a model without one).
fn provider_and_model(model: &str) -> (&str, &str) {
    model.split_once('/').unwrap_or(("agentry", model))
}

/// The span of one chat of `agent` (`agentry` for the main loop) in session `session`, with the
/// model it starts with. Its log fields are `session_id` and a `chat_id` of its own.
pub(crate) fn chat_span(agent: &str, session: &SessionId, model: &str) -> Span {
    let (provider, model) = provider_and_model(model);
    tracing::info_span!(
        "chat",
        otel.name = format!("invoke_agent {agent}"),
        gen_ai.operation.name = "invoke_agent",
        gen_ai.agent.name = agent,
        gen_ai.conversation.id = %session,
        gen_ai.provider.name = provider,
        gen_ai.request.model = model,
        gen_ai.usage.input_tokens = Empty,
        gen_ai.usage.output_tokens = Empty,
        agentry.stop_reason = Empty,
        error.type = Empty,
        otel.status_code = Empty,
        session_id = %session,
        chat_id = %uuid::Uuid::new_v4().simple(),
    )
}

/// Records how the chat of `span` ended: its usage and stop reason, or its failure.
pub(crate) fn chat_ended(span: &Span, ended: Result<(StopReason, Usage), &str>) {
    match ended {
        Ok((stop_reason, usage)) => {
            record_usage(span, usage);
            span.record("agentry.stop_reason", stop_reason.as_str());
        }
        Err(error_type) => failed(span, error_type),
    }
}

/// The span of one model request of `model` (`provider/name`) in session `session`; `input` is
/// what it sends, recorded only when content is.
pub(crate) fn model_span(session: &SessionId, model: &str, input: impl Serialize) -> Span {
    let (provider, model) = provider_and_model(model);
    let span = tracing::info_span!(
        "model_request",
        otel.name = format!("chat {model}"),
        otel.kind = "client",
        gen_ai.operation.name = "chat",
        gen_ai.provider.name = provider,
        gen_ai.request.model = model,
        gen_ai.conversation.id = %session,
        gen_ai.response.finish_reasons = Empty,
        gen_ai.usage.input_tokens = Empty,
        gen_ai.usage.output_tokens = Empty,
        gen_ai.usage.cache_read.input_tokens = Empty,
        gen_ai.usage.cache_creation.input_tokens = Empty,
        gen_ai.input.messages = Empty,
        gen_ai.output.messages = Empty,
        error.type = Empty,
        otel.status_code = Empty,
    );
    record_content(&span, "gen_ai.input.messages", input);
    span
}

/// Records how the model request of `span` ended: its finish reason (or its failure), its
/// tokens (those of the cache when there were any), and what it answered (when content is
/// recorded).
pub(crate) fn model_ended(
    span: &Span,
    ended: Result<FinishReason, &str>,
    usage: Usage,
    output: impl Serialize,
) {
    match ended {
        Ok(reason) => {
            let reason = match reason {
                FinishReason::EndTurn => "stop",
                FinishReason::ToolUse => "tool_calls",
                FinishReason::MaxTokens => "length",
                FinishReason::Refusal => "content_filter",
            };
            span.record("gen_ai.response.finish_reasons", format!("[\"{reason}\"]"));
        }
        Err(error_type) => failed(span, error_type),
    }
    record_usage(span, usage);
    // A count of none is what a provider that says nothing of its cache reports too: only a
    // cache's tokens said are recorded.
    for (field, count) in [
        (
            "gen_ai.usage.cache_read.input_tokens",
            usage.cache_read_tokens,
        ),
        (
            "gen_ai.usage.cache_creation.input_tokens",
            usage.cache_write_tokens,
        ),
    ] {
        if count > 0 {
            span.record(field, integer(count));
        }
    }
    record_content(span, "gen_ai.output.messages", output);
}

/// The span of tool call `call_id` of `tool` in session `session`; `arguments` are recorded
/// only when content is.
pub(crate) fn tool_span(
    session: &SessionId,
    tool: &str,
    call_id: &str,
    arguments: &impl Serialize,
) -> Span {
    let span = tracing::info_span!(
        "tool_call",
        otel.name = format!("execute_tool {tool}"),
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = tool,
        gen_ai.tool.call.id = call_id,
        gen_ai.tool.type = "function",
        gen_ai.conversation.id = %session,
        gen_ai.tool.call.arguments = Empty,
        gen_ai.tool.call.result = Empty,
        error.type = Empty,
        otel.status_code = Empty,
    );
    record_content(&span, "gen_ai.tool.call.arguments", arguments);
    span
}

/// Records how the tool call of `span` ended: what the model reads of it (when content is
/// recorded), and `error_type` when it failed.
pub(crate) fn tool_ended(span: &Span, error_type: Option<&str>, result: impl Serialize) {
    if let Some(error_type) = error_type {
        failed(span, error_type);
    }
    record_content(span, "gen_ai.tool.call.result", result);
}

/// Marks `span` failed, with the kind of failure.
fn failed(span: &Span, error_type: &str) {
    span.record("error.type", error_type);
    span.record("otel.status_code", "ERROR");
}

/// Records a chat's or a request's tokens; the input counts every token of the prompt (those
/// read from and written to the cache too), as the conventions say.
fn record_usage(span: &Span, usage: Usage) {
    span.record("gen_ai.usage.input_tokens", integer(usage.prompt_tokens()));
    span.record("gen_ai.usage.output_tokens", integer(usage.output_tokens));
}

/// A count as the signed integer OpenTelemetry's attributes hold (an unsigned one would reach
/// the collector as text), saturating.
fn integer(count: u64) -> i64 {
    i64::try_from(count).unwrap_or(i64::MAX)
}

/// Records `value` as JSON in `field` of `span`, when content is recorded.
fn record_content(span: &Span, field: &str, value: impl Serialize) {
    if span.is_disabled() || !content_recorded() {
        return;
    }
    if let Ok(json) = serde_json::to_string(&value) {
        span.record(field, json);
    }
}
