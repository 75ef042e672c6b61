//! What the agent running a call does for its tool, beyond the front-end's client (gathered in
//! [`HostServices`](super::HostServices)): the services that need no call of their own, and
//! what all of them are asked and answer. A built-in tool and a plugin's tool find the same
//! services; a plugin's reach the host through the ABI's service requests.

use super::ToolError;
use crate::question::Answers;
use futures::future::BoxFuture;

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
    /// The most tokens the answer may have; the model's own limit when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
}

impl SideQuestion {
    /// `question` under the `system` prompt, to the session's model.
    pub fn new(system: impl Into<String>, question: impl Into<String>) -> Self {
        Self {
            system: system.into(),
            question: question.into(),
            model: None,
            max_tokens: None,
        }
    }

    /// To `model` (as the configuration names models) instead of the session's.
    pub fn to_model(mut self, model: Option<String>) -> Self {
        self.model = model;
        self
    }

    /// With its answer limited to `max_tokens`.
    pub fn with_max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = Some(max_tokens);
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

/// What a sub-agent is to do, and what it is.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SubAgentTask {
    /// Its system prompt (in place of the agent's base prompt).
    pub system_prompt: String,
    /// The task: all it knows of the calling conversation.
    pub prompt: String,
    /// The tools it may call, by name (those the agent lacks are left out, with a warning);
    /// all of the calling loop's when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<String>>,
    /// Its model, as the configuration names models (one that cannot be opened leaves it the
    /// caller's, with a warning); the caller's when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The most model requests it may make; the agent's limit when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_requests: Option<u32>,
    /// Its permission mode (`default`, `accept_edits`, `plan` or `bypass`; Claude Code's
    /// `acceptEdits` and `bypassPermissions` too); the caller's when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission_mode: Option<String>,
    /// Its type, as hooks see it (its definition's name); `general-purpose` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_type: Option<String>,
}

impl SubAgentTask {
    /// `prompt` for a sub-agent with `system_prompt` and everything else inherited.
    pub fn new(system_prompt: impl Into<String>, prompt: impl Into<String>) -> Self {
        Self {
            system_prompt: system_prompt.into(),
            prompt: prompt.into(),
            tools: None,
            model: None,
            max_requests: None,
            permission_mode: None,
            agent_type: None,
        }
    }
}

/// A sub-agent's report.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SubAgentReport {
    /// Its final answer.
    pub answer: String,
    /// Why it stopped (ACP's stop reasons: `end_turn`, `max_turn_requests`, …).
    pub stop_reason: String,
    /// The tokens it used, as the host counts them (`input_tokens`, `output_tokens`, …).
    pub usage: serde_json::Value,
    /// How many model requests it made.
    pub model_requests: u32,
    /// Its loop's id (its events carry it).
    pub loop_id: String,
}

/// How a host service that waits on the user or the agent ended, as the host answers a
/// plugin's request (`run_sub_agent`, `ask_user`): `{"done": …}`, `"cancelled"` or
/// `"awaiting_answer"`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Ended<T> {
    /// It ended with this.
    Done(T),
    /// The call was cancelled, and the service's work with it.
    Cancelled,
    /// It waits for the user's answer, which comes later: the chat pauses.
    AwaitingAnswer,
}

impl<T> Ended<T> {
    /// The end of a service's work, as a service returns it (other errors are messages).
    pub fn of(result: Result<T, ToolError>) -> Result<Self, String> {
        match result {
            Ok(value) => Ok(Ended::Done(value)),
            Err(ToolError::Cancelled) => Ok(Ended::Cancelled),
            Err(ToolError::AwaitingAnswer) => Ok(Ended::AwaitingAnswer),
            Err(other) => Err(other.to_string()),
        }
    }

    /// The work's result, as a service returns it.
    pub fn into_result(self) -> Result<T, ToolError> {
        match self {
            Ended::Done(value) => Ok(value),
            Ended::Cancelled => Err(ToolError::Cancelled),
            Ended::AwaitingAnswer => Err(ToolError::AwaitingAnswer),
        }
    }
}

/// What the user did with questions.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UserAnswer {
    /// They answered.
    Answered(Answers),
    /// They chose not to answer.
    Declined,
}

/// The session's permission rules for requests a tool receives during its call, each named as
/// a rule names it: `Sampling(docs)` is the MCP server `docs` asking to use the session's
/// model. A rule `Sampling(docs)` (or `Sampling(*)`, `Sampling`) under `allow` lets it without
/// asking, under `deny` refuses it, under `ask` asks even when another rule allows it.
pub trait RequestRules: Send + Sync {
    /// What the rules (and the session's mode) say of `request` from `subject`.
    fn decide(&self, request: &str, subject: &str) -> BoxFuture<'static, RequestDecision>;
}

/// What the session's rules say of a request (see [`RequestRules`]).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RequestDecision {
    /// Let it without asking.
    Allow,
    /// Refuse it, for this reason.
    Deny(String),
    /// Ask the user (when someone can answer).
    Ask,
}
