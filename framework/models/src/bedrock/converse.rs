//! The ConverseStream request body: `messages` of `text`, `image`, `toolUse`, `toolResult` and
//! `reasoningContent` blocks, `system`, `toolConfig.tools[].toolSpec`, `inferenceConfig`, and
//! cache points after the system prompt and the tool definitions where the model caches.

use crate::tool_names::{CALL_IDS, CONVERSE};
use crate::turns::Blocks;
use agentry::model::{AssistantContent, Message, ModelRequest, resource_text};
use agentry::tool::ContentBlock;
use base64::Engine;
use serde_json::{Value, json};

/// A cache point: what comes before it is cached.
fn cache_point() -> Value {
    json!({"cachePoint": {"type": "default"}})
}

/// The body of a ConverseStream request; `cache` places cache points (only the models that
/// cache take them: Claude and Nova).
pub fn converse_body(request: &ModelRequest, max_tokens: u32, cache: bool) -> Value {
    let mut body = json!({
        "messages": messages(&request.conversation()),
        "inferenceConfig": {"maxTokens": max_tokens},
    });
    // Bedrock refuses a blank text block, the system prompt's included.
    if !request.system.trim().is_empty() {
        let mut system = vec![json!({"text": request.system})];
        if cache {
            system.push(cache_point());
        }
        body["system"] = Value::Array(system);
    }
    if !request.tools.is_empty() {
        let mut tools: Vec<Value> = request
            .tools
            .iter()
            .map(|tool| {
                json!({"toolSpec": {
                    "name": CONVERSE.name_for(&tool.name),
                    "description": tool.description,
                    "inputSchema": {"json": tool.input_schema},
                }})
            })
            .collect();
        if cache {
            tools.push(cache_point());
        }
        body["toolConfig"] = json!({"tools": tools});
    }
    body
}

fn messages(history: &[Message]) -> Vec<Value> {
    crate::turns::alternating(
        history,
        &Blocks {
            user: user_block,
            assistant: assistant_block,
            tool_result: |result| {
                let mut content: Vec<Value> =
                    result.content.iter().filter_map(user_block).collect();
                if content.is_empty() {
                    content.push(json!({"text": "(no output)"}));
                }
                json!({"toolResult": {
                    "toolUseId": CALL_IDS.name_for(result.tool_call_id.as_str()),
                    "content": content,
                    "status": if result.is_error { "error" } else { "success" },
                }})
            },
        },
    )
}

/// A user's block: text, an image in one of the four formats Converse takes, or a resource as
/// text; blank text is left out (Converse refuses it).
fn user_block(block: &ContentBlock) -> Option<Value> {
    match block {
        ContentBlock::Text { text } if text.trim().is_empty() => None,
        ContentBlock::Text { text } => Some(json!({"text": text})),
        ContentBlock::Image { data, mime_type } => {
            let format = mime_type.strip_prefix("image/").unwrap_or_default();
            if ["png", "jpeg", "gif", "webp"].contains(&format) {
                Some(json!({"image": {"format": format, "source": {"bytes": data}}}))
            } else {
                Some(
                    json!({"text": format!("[an image of type {mime_type}, which Bedrock does not take]")}),
                )
            }
        }
        other => Some(json!({"text": resource_text(other)})),
    }
}

fn assistant_block(part: &AssistantContent) -> Option<Value> {
    match part {
        AssistantContent::Text { text } if text.trim().is_empty() => None,
        AssistantContent::Text { text } => Some(json!({"text": text})),
        // Reasoning goes back with its signature; unsigned reasoning cannot be verified by the
        // service and is left out.
        AssistantContent::Thinking {
            text,
            signature: Some(signature),
        } => Some(json!({"reasoningContent": {
            "reasoningText": {"text": text, "signature": signature},
        }})),
        AssistantContent::Thinking {
            signature: None, ..
        } => None,
        // Redacted reasoning is the service's bytes, base64 in JSON as it arrived.
        AssistantContent::RedactedThinking { data } => {
            let valid = base64::engine::general_purpose::STANDARD
                .decode(data.as_bytes())
                .is_ok();
            valid.then(|| json!({"reasoningContent": {"redactedContent": data}}))
        }
        AssistantContent::ToolCall {
            id,
            name,
            arguments,
        } => Some(json!({"toolUse": {
            "toolUseId": CALL_IDS.name_for(id.as_str()),
            "name": CONVERSE.name_for(name),
            "input": crate::turns::object_arguments(arguments),
        }})),
    }
}
