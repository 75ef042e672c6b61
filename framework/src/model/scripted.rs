//! [`ScriptedModel`]: a model that plays back a list of responses. For the framework's own tests,
//! for users' unit tests of their agents, and for `agentry run --model scripted:PATH`.
//!
//! The script is JSON:
//!
//! ```json
//! {"responses": [
//!   {"events": [{"thinking": "The user wants a file."}, {"signature": "sig-1"},
//!               {"text": "Reading it."},
//!               {"tool_call": {"name": "Read", "arguments": {"file_path": "a.txt"}}}]},
//!   {"events": [{"delay_ms": 50}, {"text": "Done."}], "usage": {"input_tokens": 12, "output_tokens": 3}},
//!   {"error": "overloaded"}
//! ]}
//! ```
//!
//! Each model request plays the next response. A response's `stop` defaults to `tool_use` when it
//! has tool calls and `end_turn` otherwise. `{"raw_arguments": "…"}` in place of `arguments` sends
//! arguments that are not valid JSON, as real models sometimes do.

use super::{
    FinishReason, Model, ModelError, ModelEvent, ModelRequest, ModelStream, ToolArguments,
    ToolCallRequest,
};
use crate::cost::Price;
use crate::event::Usage;
use crate::ids::ToolCallId;
use crate::sync::lock;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::VecDeque;
use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;

/// A whole script.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Script {
    /// The responses, one per model request.
    pub responses: Vec<ScriptedResponse>,
    /// The context window the model claims, in tokens (none by default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_window: Option<u64>,
    /// Whether the model claims to take images (yes by default).
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub images: bool,
    /// The price the model claims, so that its usage is priced (none by default: unpriced).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub price: Option<Price>,
}

fn yes() -> bool {
    true
}

fn is_true(value: &bool) -> bool {
    *value
}

/// One scripted model response.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptedResponse {
    /// What the response streams, in order.
    #[serde(default)]
    pub events: Vec<ScriptStep>,
    /// Why it ends; derived from the events when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<FinishReason>,
    /// The usage it reports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// When set, the request fails with this API error instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl ScriptedResponse {
    /// A response that streams `text` and ends the turn.
    pub fn text(text: impl Into<String>) -> Self {
        Self::default().then_text(text)
    }

    /// A response that calls one tool.
    pub fn tool_call(name: impl Into<String>, arguments: Value) -> Self {
        Self::default().then_tool_call(name, arguments)
    }

    /// A response that calls one tool, under a call id the test chooses.
    pub fn tool_call_with_id(
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: Value,
    ) -> Self {
        Self {
            events: vec![ScriptStep::ToolCall(ScriptedToolCall {
                id: Some(id.into()),
                name: name.into(),
                arguments: Some(arguments),
                raw_arguments: None,
            })],
            ..Self::default()
        }
    }

    /// Adds streamed text.
    pub fn then_text(mut self, text: impl Into<String>) -> Self {
        self.events.push(ScriptStep::Text(text.into()));
        self
    }

    /// Adds a tool call.
    pub fn then_tool_call(mut self, name: impl Into<String>, arguments: Value) -> Self {
        self.events.push(ScriptStep::ToolCall(ScriptedToolCall {
            id: None,
            name: name.into(),
            arguments: Some(arguments),
            raw_arguments: None,
        }));
        self
    }

    /// Adds a pause.
    pub fn then_delay(mut self, millis: u64) -> Self {
        self.events.push(ScriptStep::DelayMs(millis));
        self
    }

    /// Sets the finish reason.
    pub fn with_stop(mut self, stop: FinishReason) -> Self {
        self.stop = Some(stop);
        self
    }

    fn finish_reason(&self) -> FinishReason {
        self.stop.unwrap_or_else(|| {
            if self
                .events
                .iter()
                .any(|e| matches!(e, ScriptStep::ToolCall(_)))
            {
                FinishReason::ToolUse
            } else {
                FinishReason::EndTurn
            }
        })
    }
}

/// One step of a scripted response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum ScriptStep {
    /// Streams text.
    Text(String),
    /// Streams reasoning.
    Thinking(String),
    /// Closes the reasoning block with a signature.
    Signature(String),
    /// Calls a tool.
    ToolCall(ScriptedToolCall),
    /// Waits.
    DelayMs(u64),
    /// Breaks the stream off with an error.
    Error(String),
}

/// A scripted tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptedToolCall {
    /// The call's id (generated when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The tool's name.
    pub name: String,
    /// The arguments as JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Value>,
    /// The arguments as a raw string (for invalid JSON).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_arguments: Option<String>,
}

/// A model that plays back a [`Script`] and records every request it gets.
#[derive(Debug, Default)]
pub struct ScriptedModel {
    responses: Mutex<VecDeque<ScriptedResponse>>,
    requests: Mutex<Vec<ModelRequest>>,
    context_window: Option<u64>,
    text_only: bool,
    price: Option<Price>,
}

impl ScriptedModel {
    /// A model that plays these responses in order.
    pub fn new(responses: impl IntoIterator<Item = ScriptedResponse>) -> Self {
        Self {
            responses: Mutex::new(responses.into_iter().collect()),
            requests: Mutex::default(),
            context_window: None,
            text_only: false,
            price: None,
        }
    }

    /// Claims a price (so that its usage is priced and a budget can be kept).
    pub fn with_price(mut self, price: Price) -> Self {
        self.price = Some(price);
        self
    }

    /// Claims a context window (so the agent compacts history to fit it).
    pub fn with_context_window(mut self, tokens: u64) -> Self {
        self.context_window = Some(tokens);
        self
    }

    /// Claims to take no images (so the agent sends notes in their place).
    pub fn without_images(mut self) -> Self {
        self.text_only = true;
        self
    }

    /// Reads a script from a JSON file.
    pub fn from_file(path: &Path) -> Result<Self, ModelError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| script_error(format!("cannot read script {}: {e}", path.display())))?;
        let script: Script = serde_json::from_str(&text)
            .map_err(|e| script_error(format!("invalid script {}: {e}", path.display())))?;
        let mut model = Self::new(script.responses);
        model.context_window = script.context_window;
        model.text_only = !script.images;
        model.price = script.price;
        Ok(model)
    }

    /// Adds responses after those still to be played (a test that learns what to answer only
    /// after the session exists, say).
    pub fn push_responses(&self, responses: impl IntoIterator<Item = ScriptedResponse>) {
        lock(&self.responses).extend(responses);
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<ModelRequest> {
        lock(&self.requests).clone()
    }
}

#[async_trait::async_trait]
impl Model for ScriptedModel {
    fn name(&self) -> String {
        "scripted".to_owned()
    }

    fn context_window(&self) -> Option<u64> {
        self.context_window
    }

    fn price(&self) -> Option<Price> {
        self.price
    }

    fn accepts_images(&self) -> bool {
        !self.text_only
    }

    async fn stream(&self, request: ModelRequest) -> Result<ModelStream, ModelError> {
        let request_number = {
            let mut requests = lock(&self.requests);
            requests.push(request);
            requests.len()
        };
        let response = lock(&self.responses).pop_front().ok_or_else(|| {
            script_error(format!(
                "no response left for request {request_number}: the script has {} responses",
                request_number - 1
            ))
        })?;
        if let Some(message) = response.error {
            return Err(ModelError::Api {
                status: None,
                message,
            });
        }
        let finish = response.finish_reason();
        let mut steps: VecDeque<Step> = response
            .events
            .into_iter()
            .enumerate()
            .map(|(index, step)| Step::Script(request_number, index, step))
            .collect();
        if let Some(usage) = response.usage {
            steps.push_back(Step::Event(ModelEvent::Usage { usage }));
        }
        steps.push_back(Step::Event(ModelEvent::Finished { reason: finish }));
        Ok(Box::pin(futures::stream::unfold(steps, play_next)))
    }
}

enum Step {
    Script(usize, usize, ScriptStep),
    Event(ModelEvent),
}

async fn play_next(
    mut steps: VecDeque<Step>,
) -> Option<(Result<ModelEvent, ModelError>, VecDeque<Step>)> {
    loop {
        let event = match steps.pop_front()? {
            Step::Event(event) => event,
            Step::Script(_, _, ScriptStep::DelayMs(ms)) => {
                tokio::time::sleep(Duration::from_millis(ms)).await;
                continue;
            }
            Step::Script(_, _, ScriptStep::Error(message)) => {
                steps.clear();
                return Some((Err(ModelError::Connection(message)), steps));
            }
            Step::Script(_, _, ScriptStep::Text(text)) => ModelEvent::TextDelta { text },
            Step::Script(_, _, ScriptStep::Thinking(text)) => ModelEvent::ThinkingDelta { text },
            Step::Script(_, _, ScriptStep::Signature(signature)) => {
                ModelEvent::ThinkingSignature { signature }
            }
            Step::Script(request, index, ScriptStep::ToolCall(call)) => {
                ModelEvent::ToolCall(ToolCallRequest {
                    id: ToolCallId(call.id.unwrap_or_else(|| format!("call_{request}_{index}"))),
                    name: call.name,
                    arguments: match (call.raw_arguments, call.arguments) {
                        (Some(raw), _) => ToolArguments::parse(&raw),
                        (None, Some(value)) => ToolArguments::Json(value),
                        (None, None) => ToolArguments::parse(""),
                    },
                })
            }
        };
        return Some((Ok(event), steps));
    }
}

/// The error of a scripted model that cannot answer: `message` says why.
fn script_error(message: impl Into<String>) -> ModelError {
    ModelError::Failed {
        model: "scripted model",
        message: message.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::StreamExt;
    use serde_json::json;

    fn request() -> ModelRequest {
        ModelRequest {
            system: String::new(),
            messages: vec![],
            tools: vec![],
            environment: None,
            max_output_tokens: None,
        }
    }

    #[tokio::test]
    async fn plays_responses_in_order_and_records_requests() {
        let script: Script = serde_json::from_value(json!({"responses": [
            {"events": [{"thinking": "hm"}, {"signature": "s"}, {"text": "a"},
                        {"tool_call": {"name": "T", "arguments": {"x": 1}}}]},
            {"events": [{"text": "b"}], "usage": {"input_tokens": 3, "output_tokens": 1}}
        ]}))
        .unwrap();
        let model = ScriptedModel::new(script.responses);
        let first: Vec<_> = model.stream(request()).await.unwrap().collect().await;
        let first: Vec<_> = first.into_iter().map(Result::unwrap).collect();
        assert_eq!(
            first,
            [
                ModelEvent::ThinkingDelta { text: "hm".into() },
                ModelEvent::ThinkingSignature {
                    signature: "s".into()
                },
                ModelEvent::TextDelta { text: "a".into() },
                ModelEvent::ToolCall(ToolCallRequest {
                    id: "call_1_3".into(),
                    name: "T".into(),
                    arguments: ToolArguments::Json(json!({"x": 1}))
                }),
                ModelEvent::Finished {
                    reason: FinishReason::ToolUse
                },
            ]
        );
        let second: Vec<_> = model.stream(request()).await.unwrap().collect().await;
        assert_eq!(second.len(), 3);
        assert_eq!(
            second[2],
            Ok(ModelEvent::Finished {
                reason: FinishReason::EndTurn
            })
        );
        assert_eq!(model.requests().len(), 2);
        let third = model.stream(request()).await.err().unwrap();
        assert!(third.to_string().contains("no response left for request 3"));
    }

    #[test]
    fn unknown_script_fields_are_rejected() {
        let bad = serde_json::from_value::<Script>(json!({"responses": [{"evnts": []}]}));
        assert!(bad.is_err());
    }
}
