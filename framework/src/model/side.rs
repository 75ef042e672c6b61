//! Side questions: a tool that needs a model's answer of its own (WebFetch applies its prompt to
//! a page) asks the session's model, which the chat offers every tool call as its
//! [`SideQuestions`] service ([`SessionModel`]), with no tools and
//! no history; [`answer_text`] reads any response down to its text.

use super::named::NamedModels;
use super::{Message, Model, ModelError, ModelEvent, ModelRequest};
use crate::event::Usage;
use crate::tool::{SideAnswer, SideQuestion, SideQuestions};
use futures::StreamExt;
use futures::future::BoxFuture;
use std::sync::Arc;

/// A model as the [`SideQuestions`] service: the chat offers each tool call the session's
/// (in [`ToolContext::host`](crate::tool::ToolContext::host)), and the agent's
/// [`NamedModels`] for a question that names another.
pub struct SessionModel {
    model: Arc<dyn Model>,
    named: Option<Arc<NamedModels>>,
    guard: Option<Arc<dyn SpendGuard>>,
}

/// What a session's side questions are held to and counted by: its budget, and what it spent.
pub(crate) trait SpendGuard: Send + Sync {
    /// Why a question of about `prompt_tokens` to `model` may not be asked, if it may not.
    fn refuses(&self, model: &dyn Model, prompt_tokens: u64) -> Option<String>;
    /// Counts a question to `model` and what its answer used.
    fn spent(&self, model: &dyn Model, usage: Usage);
}

impl SessionModel {
    /// The service of `model`.
    pub fn new(model: Arc<dyn Model>) -> Self {
        Self {
            model,
            named: None,
            guard: None,
        }
    }

    /// Its questions held to a session's budget and counted in its spending.
    pub(crate) fn guarded(mut self, guard: Arc<dyn SpendGuard>) -> Self {
        self.guard = Some(guard);
        self
    }

    /// Answering a question that names a model with that model, from `named` (without them,
    /// such a question fails).
    pub fn with_named(mut self, named: Option<Arc<NamedModels>>) -> Self {
        self.named = named;
        self
    }

    /// The model `question` is for.
    fn model_for(&self, question: &SideQuestion) -> Result<Arc<dyn Model>, String> {
        let Some(name) = &question.model else {
            return Ok(self.model.clone());
        };
        let named = self
            .named
            .as_ref()
            .ok_or_else(|| format!("this agent opens no model by name, so not `{name}`"))?;
        named
            .open(name)
            .map_err(|e| format!("cannot open the model `{name}`: {e}"))
    }
}

impl SideQuestions for SessionModel {
    fn ask(&self, question: SideQuestion) -> BoxFuture<'static, Result<SideAnswer, String>> {
        let model = self.model_for(&question);
        let guard = self.guard.clone();
        Box::pin(async move {
            let model = model?;
            if let Some(guard) = &guard {
                let prompt = (question.system.len() + question.question.len()).div_ceil(4) as u64;
                if let Some(why) = guard.refuses(model.as_ref(), prompt) {
                    return Err(why);
                }
            }
            let (text, usage) = ask(
                model.as_ref(),
                &question.system,
                question.question,
                question.max_tokens,
            )
            .await
            .map_err(|e| e.to_string())?;
            if let Some(guard) = &guard {
                guard.spent(model.as_ref(), usage);
            }
            Ok(SideAnswer {
                text,
                model: model.name().to_owned(),
                usage: serde_json::to_value(usage).unwrap_or_default(),
            })
        })
    }
}

/// Asks `model` one question (`question` under the `system` prompt, no tools; its answer
/// within `max_tokens` when given) and returns its answer's text and the tokens it used.
pub async fn ask(
    model: &dyn Model,
    system: &str,
    question: String,
    max_tokens: Option<u32>,
) -> Result<(String, Usage), ModelError> {
    let mut request = ModelRequest::for_model(
        model,
        system.to_owned(),
        [Message::user_text(question)],
        Vec::new(),
    );
    if let Some(max) = max_tokens {
        request = request.with_max_output_tokens(max);
    }
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
