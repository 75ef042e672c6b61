//! The `generateContent` request body: `contents` of `user` and `model` turns, whose parts are
//! text, thought summaries, inline images, `functionCall`s and `functionResponse`s, each part
//! with the `thoughtSignature` it came with; `systemInstruction`; the tools as
//! `functionDeclarations` with `parametersJsonSchema`; `generationConfig`.

use crate::tool_names::GEMINI;
use crate::turns::{merged, object_arguments};
use agentry::model::{AssistantContent, Message, ModelRequest, resource_text};
use agentry::tool::ContentBlock;
use serde_json::{Map, Value, json};
use std::collections::HashMap;

/// The body for `model` (whose thoughts are asked for when it thinks).
pub fn generate_body(model: &str, request: &ModelRequest, max_tokens: Option<u32>) -> Value {
    let mut body = json!({"contents": contents(&request.conversation())});
    if !request.system.trim().is_empty() {
        body["systemInstruction"] = json!({"parts": [{"text": request.system}]});
    }
    if !request.tools.is_empty() {
        let declarations: Vec<Value> = request
            .tools
            .iter()
            .map(|tool| {
                json!({
                    "name": GEMINI.name_for(&tool.name),
                    "description": tool.description,
                    "parametersJsonSchema": tool.input_schema,
                })
            })
            .collect();
        body["tools"] = json!([{"functionDeclarations": declarations}]);
    }
    let mut config = Map::new();
    if let Some(max) = max_tokens {
        config.insert("maxOutputTokens".to_owned(), json!(max));
    }
    if thinks(model) {
        config.insert(
            "thinkingConfig".to_owned(),
            json!({"includeThoughts": true}),
        );
    }
    if !config.is_empty() {
        body["generationConfig"] = Value::Object(config);
    }
    body
}

/// Whether the model thinks (Gemini 2.5 and later; the 1.x and 2.0 models refuse a thinking
/// configuration).
fn thinks(model: &str) -> bool {
    let id = model.rsplit('/').next().unwrap_or(model);
    !(id.starts_with("gemini-1") || id.starts_with("gemini-2.0") || id.starts_with("gemma"))
}

fn contents(history: &[Message]) -> Vec<Value> {
    // A function's response names the function: the calls' names by id, as the history goes.
    let mut called: HashMap<&str, &str> = HashMap::new();
    let turns = history.iter().map(|message| match message {
        Message::User { content } => ("user", content.iter().map(user_part).collect()),
        Message::Assistant { content, .. } => {
            for part in content {
                if let AssistantContent::ToolCall { id, name, .. } = part {
                    called.insert(id.as_str(), name.as_str());
                }
            }
            ("model", model_parts(content))
        }
        Message::ToolResults { results } => {
            let mut parts = Vec::new();
            for result in results {
                let name = called
                    .get(result.tool_call_id.as_str())
                    .copied()
                    .unwrap_or("unknown_tool");
                let text = result.text();
                let outcome = if result.is_error { "error" } else { "output" };
                parts.push(json!({"functionResponse": {
                    "id": result.tool_call_id,
                    "name": GEMINI.name_for(name),
                    "response": {outcome: text},
                }}));
                // Images of a result follow it, as parts of their own.
                parts.extend(
                    result
                        .content
                        .iter()
                        .filter(|block| matches!(block, ContentBlock::Image { .. }))
                        .map(user_part),
                );
            }
            ("user", parts)
        }
    });
    let turns: Vec<(&str, Vec<Value>)> = turns.collect();
    merged(turns)
        .into_iter()
        .map(|(role, parts)| json!({"role": role, "parts": parts}))
        .collect()
}

fn user_part(block: &ContentBlock) -> Value {
    match block {
        ContentBlock::Text { text } => json!({"text": text}),
        ContentBlock::Image { data, mime_type } => {
            json!({"inlineData": {"mimeType": mime_type, "data": data}})
        }
        other => json!({"text": resource_text(other)}),
    }
}

/// An answer's parts, each with its signature: a reasoning block of no text that carries one
/// is the signature of the part before it (the decoder puts it there).
fn model_parts(content: &[AssistantContent]) -> Vec<Value> {
    let mut parts: Vec<Value> = Vec::new();
    for part in content {
        match part {
            AssistantContent::Thinking {
                text,
                signature: Some(signature),
            } if text.is_empty() => match parts.last_mut() {
                Some(previous) if previous.get("thoughtSignature").is_none() => {
                    previous["thoughtSignature"] = json!(signature);
                }
                _ => parts.push(json!({"text": "", "thoughtSignature": signature})),
            },
            AssistantContent::Thinking { text, signature } => {
                let mut thought = json!({"text": text, "thought": true});
                if let Some(signature) = signature {
                    thought["thoughtSignature"] = json!(signature);
                }
                parts.push(thought);
            }
            AssistantContent::Text { text } => parts.push(json!({"text": text})),
            // Another provider's encrypted reasoning means nothing to Gemini.
            AssistantContent::RedactedThinking { .. } => {}
            AssistantContent::ToolCall {
                id,
                name,
                arguments,
            } => parts.push(json!({"functionCall": {
                "id": id,
                "name": GEMINI.name_for(name),
                "args": object_arguments(arguments),
            }})),
        }
    }
    parts
}
