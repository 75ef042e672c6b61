//! One model response streamed into a chat: its text and thinking as they come (each delta an
//! event), its tool calls announced as they arrive, its usage, and how it ended.

use super::Chat;
use super::recording::Recording;
use crate::event::{AgentEvent, Refusal, Usage};
use crate::executor::{CallScope, PendingCall};
use crate::model::{AssistantContent, FinishReason, Message, ModelError, ModelEvent, ModelRequest};
use crate::telemetry;
use futures::StreamExt;
use tracing::Instrument;

/// How one model response ended.
pub(super) enum StreamEnd {
    Finished(FinishReason),
    Cancelled,
    Failed(ModelError),
}

/// One model response, as streamed.
pub(super) struct Response {
    pub(super) content: Vec<AssistantContent>,
    pub(super) calls: Vec<PendingCall>,
    pub(super) usage: Usage,
    pub(super) end: StreamEnd,
}

/// The conversation a request sends (the history, then this chat's messages), serialized only
/// when a trace records it.
struct Conversation<'a>(&'a [Message], &'a [Message]);

impl serde::Serialize for Conversation<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter().chain(self.1))
    }
}

impl Chat<'_> {
    /// Streams one model response, announcing tool calls as they arrive, in the request's span;
    /// the response is taken only once `record` (the round's record, written meanwhile) is.
    pub(super) async fn stream_response(
        &self,
        scope: &CallScope,
        record: Option<&mut Recording>,
    ) -> Response {
        let model = self.session.model.name();
        let conversation = Conversation(&self.session.history, &self.new_messages);
        let span = telemetry::model_span(&self.session.id, &model, &conversation);
        let response = self
            .request_response(scope, record)
            .instrument(span.clone())
            .await;
        let ended = match &response.end {
            StreamEnd::Finished(reason) => Ok(*reason),
            StreamEnd::Cancelled => Err("cancelled"),
            StreamEnd::Failed(error) => Err(error.kind()),
        };
        telemetry::model_ended(&span, ended, response.usage, &response.content);
        response
    }

    /// Streams one model response, announcing tool calls as they arrive.
    async fn request_response(
        &self,
        scope: &CallScope,
        mut record: Option<&mut Recording>,
    ) -> Response {
        let mut response = Response {
            content: Vec::new(),
            calls: Vec::new(),
            usage: Usage::default(),
            end: StreamEnd::Cancelled,
        };
        let model = &self.session.model;
        let request = ModelRequest::for_model(
            model.as_ref(),
            self.request.system.clone(),
            self.session
                .history
                .iter()
                .chain(&self.new_messages)
                .cloned(),
            self.request.tools.clone(),
        )
        .with_environment(self.request.environment.clone());
        let cancel = &self.io.cancel;
        let mut stream = tokio::select! {
            biased;
            () = cancel.cancelled() => return response,
            started = model.stream(request) => match started {
                Ok(stream) => stream,
                Err(error) => {
                    response.end = StreamEnd::Failed(error);
                    return response;
                }
            },
        };
        response.end = loop {
            let next = tokio::select! {
                biased;
                () = cancel.cancelled() => break StreamEnd::Cancelled,
                next = stream.next() => next,
            };
            // The request went out beside the round's record; its response waits for it.
            if let Some(record) = record.take() {
                record.wait().await;
            }
            match next {
                None => {
                    break StreamEnd::Failed(ModelError::Protocol(
                        "the response ended before the model said it was finished".to_owned(),
                    ));
                }
                Some(Err(error)) => break StreamEnd::Failed(error),
                Some(Ok(ModelEvent::Finished { reason })) => break StreamEnd::Finished(reason),
                Some(Ok(event)) => self.take_event(event, scope, &mut response),
            }
        };
        response
    }

    fn take_event(&self, event: ModelEvent, scope: &CallScope, response: &mut Response) {
        let turn_id = scope.turn_id.clone();
        match event {
            ModelEvent::TextDelta { text } => {
                match response.content.last_mut() {
                    Some(AssistantContent::Text { text: so_far }) => so_far.push_str(&text),
                    _ => response
                        .content
                        .push(AssistantContent::Text { text: text.clone() }),
                }
                self.emit(AgentEvent::TextDelta { turn_id, text });
            }
            ModelEvent::ThinkingDelta { text } => {
                match response.content.last_mut() {
                    Some(AssistantContent::Thinking {
                        text: so_far,
                        signature: None,
                    }) => so_far.push_str(&text),
                    _ => response.content.push(AssistantContent::Thinking {
                        text: text.clone(),
                        signature: None,
                    }),
                }
                self.emit(AgentEvent::ThinkingDelta { turn_id, text });
            }
            // A signature closes the reasoning before it, unless that is closed already.
            ModelEvent::ThinkingSignature { signature } => match response.content.last_mut() {
                Some(AssistantContent::Thinking {
                    signature: slot @ None,
                    ..
                }) => {
                    *slot = Some(signature);
                }
                _ => response.content.push(AssistantContent::Thinking {
                    text: String::new(),
                    signature: Some(signature),
                }),
            },
            ModelEvent::RedactedThinking { data } => {
                response
                    .content
                    .push(AssistantContent::RedactedThinking { data });
            }
            ModelEvent::ToolCall(request) => {
                response.content.push(AssistantContent::ToolCall {
                    id: request.id.clone(),
                    name: request.name.clone(),
                    arguments: request.arguments.raw_input(),
                });
                let max = self.session.agent.inner.config.max_calls_per_answer;
                let executor = &self.session.executor;
                let call = if response.calls.len() < max {
                    executor.announce(request, scope)
                } else {
                    executor.announce_refused(request, Refusal::TooManyCalls { max }, scope)
                };
                response.calls.push(call);
            }
            ModelEvent::Usage { usage } => {
                response.usage = usage;
                let model = self.session.model.as_ref();
                let (cost_usd, session_cost_usd) = self.meter.record(model, usage);
                self.emit(AgentEvent::Usage {
                    turn_id,
                    usage,
                    model: model.name(),
                    cost_usd,
                    session_cost_usd,
                });
            }
            ModelEvent::Notice { message } => self.emit(AgentEvent::Notice { message }),
            ModelEvent::Finished { .. } => {}
        }
    }
}
