//! [`HostServices`]: what the agent running a call does for its tool, beyond the front-end's
//! client. A built-in tool and a plugin's tool find the same services here; a plugin's reach
//! the host through the ABI's service requests.

use futures::future::BoxFuture;
use std::sync::Arc;

/// What the agent running a call offers its tool, when it offers it (outside a chat, nothing).
#[derive(Clone, Default)]
pub struct HostServices {
    /// Side questions to the session's model (WebFetch applies its prompt to a page).
    pub side_questions: Option<Arc<dyn SideQuestions>>,
}

impl std::fmt::Debug for HostServices {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostServices")
            .field("side_questions", &self.side_questions.is_some())
            .finish()
    }
}

/// A model a tool may ask one question of, with no tools and no history: the session's, or
/// one the question names.
pub trait SideQuestions: Send + Sync {
    /// Asks the question. Errors are messages for the model.
    fn ask(&self, question: SideQuestion) -> BoxFuture<'static, Result<SideAnswer, String>>;
}

/// One side question.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SideQuestion {
    /// The system prompt.
    pub system: String,
    /// The question.
    pub question: String,
    /// The model to ask, as the configuration names models (`openai/gpt-4.1-mini`); the
    /// session's when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

impl SideQuestion {
    /// `question` under the `system` prompt, to the session's model.
    pub fn new(system: impl Into<String>, question: impl Into<String>) -> Self {
        Self {
            system: system.into(),
            question: question.into(),
            model: None,
        }
    }

    /// To `model` (as the configuration names models) instead of the session's.
    pub fn to_model(mut self, model: Option<String>) -> Self {
        self.model = model;
        self
    }
}

/// A side question's answer.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SideAnswer {
    /// The answer's text.
    pub text: String,
    /// The model that answered.
    pub model: String,
    /// The tokens it used, as the host counts them (`input_tokens`, `output_tokens`, …).
    pub usage: serde_json::Value,
}
