//! Side questions: a tool that needs a model's answer of its own (WebFetch applies its prompt to
//! a page) asks the session's model through [`SessionModel`], which the chat offers every tool
//! call, with no tools and no history; [`answer_text`] reads any response down to its text.

use super::{Message, Model, ModelError, ModelEvent, ModelRequest};
use crate::event::Usage;
use crate::tool::ToolContext;
use futures::StreamExt;
use std::sync::Arc;

/// The session's model, offered to each tool call (in [`ToolContext::extensions`]).
pub struct SessionModel {
    model: Arc<dyn Model>,
}

impl SessionModel {
    /// The session model of `model`.
    pub fn new(model: Arc<dyn Model>) -> Self {
        Self { model }
    }

    /// The session model the chat offers a tool call, if any (none outside a chat).
    pub fn of(ctx: &ToolContext) -> Option<Arc<SessionModel>> {
        ctx.extensions.get::<SessionModel>()
    }

    /// The model itself.
    pub fn model(&self) -> &Arc<dyn Model> {
        &self.model
    }
}

/// Asks `model` one question (`question` under the `system` prompt, no tools) and returns its
/// answer's text and the tokens it used.
pub async fn ask(
    model: &dyn Model,
    system: &str,
    question: String,
) -> Result<(String, Usage), ModelError> {
    let request = ModelRequest::for_model(
        model,
        system.to_owned(),
        [Message::user_text(question)],
        Vec::new(),
    );
    let mut usage = Usage::default();
    let text = answer_text(model, request, &mut usage).await?;
    Ok((text, usage))
}

/// Sends `request` and reads the response's text to its end, adding the tokens used to `usage`.
pub async fn answer_text(
    model: &dyn Model,
    request: ModelRequest,
    usage: &mut Usage,
) -> Result<String, ModelError> {
    let mut stream = model.stream(request).await?;
    let mut text = String::new();
    while let Some(event) = stream.next().await {
        match event? {
            ModelEvent::TextDelta { text: delta } => text.push_str(&delta),
            ModelEvent::Usage { usage: used } => *usage += used,
            ModelEvent::Finished { .. } => break,
            _ => {}
        }
    }
    Ok(text)
}
