//! The REST API's OpenAPI 3.1 document (`GET /api/openapi.json`), its schemas generated from
//! the very types the handlers answer with.

use crate::chat::ChatRequest;
use crate::error::ErrorBody;
use crate::protocol::ChatEnd;
use crate::rest::{
    Cancelled, CreateSession, Messages, RenderRequest, Rendered, SessionChoices, SessionCreated,
    SessionList, UpdateSession,
};
use crate::rewind::{RewindRequest, Rewound};
use schemars::generate::SchemaSettings;
use serde_json::{Value, json};

/// The document.
pub fn document() -> Value {
    let mut generator = SchemaSettings::draft2020_12()
        .with(|s| {
            s.definitions_path = "/components/schemas".into();
            s.meta_schema = None;
        })
        .into_generator();
    let schema = |of: Value| json!({"application/json": {"schema": of}});
    let create = schema(generator.subschema_for::<CreateSession>().to_value());
    let created = schema(generator.subschema_for::<SessionCreated>().to_value());
    let list = schema(generator.subschema_for::<SessionList>().to_value());
    let messages = schema(generator.subschema_for::<Messages>().to_value());
    let chat = schema(generator.subschema_for::<ChatRequest>().to_value());
    let end = schema(generator.subschema_for::<ChatEnd>().to_value());
    let cancelled = schema(generator.subschema_for::<Cancelled>().to_value());
    let choices = schema(generator.subschema_for::<SessionChoices>().to_value());
    let rewind = schema(generator.subschema_for::<RewindRequest>().to_value());
    let rewound = schema(generator.subschema_for::<Rewound>().to_value());
    let update = schema(generator.subschema_for::<UpdateSession>().to_value());
    let render = schema(generator.subschema_for::<RenderRequest>().to_value());
    let rendered = schema(generator.subschema_for::<Rendered>().to_value());
    let error = schema(generator.subschema_for::<ErrorBody>().to_value());
    let fails = |codes: &[(&str, &str)]| -> Value {
        codes
            .iter()
            .map(|(code, what)| {
                (
                    (*code).to_owned(),
                    json!({"description": what, "content": error}),
                )
            })
            .collect::<serde_json::Map<_, _>>()
            .into()
    };
    let session_id = json!([{"name": "session_id", "in": "path", "required": true, "schema": {"type": "string"}}]);
    let with = |mut answers: Value, more: Value| {
        if let (Some(answers), Value::Object(more)) = (answers.as_object_mut(), more) {
            answers.extend(more);
        }
        answers
    };
    json!({
        "openapi": "3.1.0",
        "info": {"title": "agentry serve", "version": env!("CARGO_PKG_VERSION")},
        "paths": {
            "/api/sessions": {
                "post": {
                    "summary": "Create a session",
                    "requestBody": {"required": false, "content": create},
                    "responses": with(json!({"201": {"description": "Created", "content": created}}),
                        fails(&[("400", "Unreadable body"), ("422", "Invalid body"), ("429", "The token holds its most sessions (too_many_sessions)")])),
                },
                "get": {
                    "summary": "List the stored sessions",
                    "responses": {"200": {"description": "The sessions", "content": list}},
                },
            },
            "/api/sessions/{session_id}": {
                "delete": {
                    "summary": "Delete a session",
                    "parameters": session_id,
                    "responses": with(json!({"204": {"description": "Deleted"}}),
                        fails(&[("404", "No such session")])),
                },
                "patch": {
                    "summary": "Rename a session or set its permission mode",
                    "parameters": session_id,
                    "requestBody": {"required": true, "content": update},
                    "responses": with(json!({"204": {"description": "Changed"}}),
                        fails(&[("400", "Unreadable body"), ("404", "No such session"), ("409", "A chat is running"), ("413", "Body too large"), ("422", "Invalid body")])),
                },
            },
            "/api/options": {
                "get": {
                    "summary": "The models and permission modes sessions may have",
                    "responses": {"200": {"description": "The choices", "content": choices}},
                },
            },
            "/api/sessions/{session_id}/messages": {
                "get": {
                    "summary": "Every turn of a session",
                    "parameters": session_id,
                    "responses": with(json!({"200": {"description": "The turns", "content": messages}}),
                        fails(&[("404", "No such session")])),
                },
            },
            "/api/sessions/{session_id}/chat": {
                "post": {
                    "summary": "Run a chat to its end (headless)",
                    "parameters": session_id,
                    "requestBody": {"required": true, "content": chat},
                    "responses": with(json!({"200": {"description": "How it ended (chat:end)", "content": end}}),
                        fails(&[("400", "Unreadable body"), ("404", "No such session"), ("409", "A chat is running, or the session's folder is not on this server"), ("413", "Body too large"), ("422", "Invalid body or answer"), ("503", "The server runs its most chats (busy) or is stopping (draining)")])),
                },
            },
            "/api/sessions/{session_id}/cancel": {
                "post": {
                    "summary": "Cancel the running chat",
                    "parameters": session_id,
                    "responses": with(json!({"200": {"description": "Whether one ran", "content": cancelled}}),
                        fails(&[("404", "No such session")])),
                },
            },
            "/api/sessions/{session_id}/rewind": {
                "post": {
                    "summary": "Rewind to just before a chat: its files, the conversation, or both",
                    "parameters": session_id,
                    "requestBody": {"required": true, "content": rewind},
                    "responses": with(json!({"200": {"description": "What was restored (session:rewound)", "content": rewound}}),
                        fails(&[("400", "Unreadable body"), ("404", "No such session"), ("409", "A chat is running"), ("413", "Body too large"), ("422", "Invalid body, or no such chat")])),
                },
            },
            "/api/render": {
                "post": {
                    "summary": "Render Markdown as the page shows it (sanitised HTML)",
                    "requestBody": {"required": true, "content": render},
                    "responses": with(json!({"200": {"description": "The HTML", "content": rendered}}),
                        fails(&[("400", "Unreadable body"), ("413", "Body too large"), ("422", "Invalid body")])),
                },
            },
        },
        "components": {"schemas": generator.take_definitions(true)},
    })
}
