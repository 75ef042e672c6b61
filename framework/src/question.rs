//! Questions for the user (the builtin `AskUserQuestion` tool): the front-end's
//! [`QuestionHandler`] shows them and returns the answers, the way a
//! [`PermissionHandler`](crate::permission::PermissionHandler) answers permission questions.
//! A chat whose front-end has no handler does not offer tools that need one
//! ([`Tool::needs_user`](crate::tool::Tool::needs_user)).
//!
//! The shapes are the chat-flow protocol's: 1–4 questions, each with a `header` of at most 12
//! characters and 2–4 options; answers give, per question index, the chosen options'
//! indexes (`selections`) and/or free text (`custom`).
//!
//! A front-end that cannot ask at once (a web page, which answers in a later message) gives
//! its chats [`PauseForAnswers`]: the question then pauses the chat, and
//! [`Session::answer`](crate::agent::Session::answer) resumes it (see [`pause`](crate::pause)).

use crate::event::{AgentEvent, EventSink};
use crate::ids::ToolCallId;
use crate::pause::ChatPauses;
use crate::tool::{AskUser, ToolContext, ToolError, UserAnswer};
pub use agentry_plugin::question::{
    Answers, PendingQuestion, Question, QuestionAnswer, QuestionOption, SourceLoop, answers_text,
    check_questions,
};
use futures::future::BoxFuture;
use std::sync::Arc;

/// What a tool asks the front-end.
#[derive(Debug, Clone, PartialEq)]
pub struct QuestionRequest {
    /// The call asking.
    pub tool_call_id: ToolCallId,
    /// The questions.
    pub questions: Vec<Question>,
    /// The Agent call whose sub-agent asks, when a sub-agent does.
    pub asked_by_fork: Option<ToolCallId>,
}

/// How a question ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QuestionOutcome {
    /// The user answered.
    Answered(Answers),
    /// The user chose not to answer.
    Declined,
    /// The chat was cancelled while asking.
    Cancelled,
    /// The answer comes later: the chat pauses until then.
    Paused,
}

/// The front-end's side of questions: shows them and returns the answers.
#[async_trait::async_trait]
pub trait QuestionHandler: Send + Sync {
    /// Asks the user.
    async fn ask(&self, request: QuestionRequest) -> QuestionOutcome;
}

/// The handler of a front-end that answers later: every question pauses the chat.
#[derive(Debug, Clone, Copy, Default)]
pub struct PauseForAnswers;

#[async_trait::async_trait]
impl QuestionHandler for PauseForAnswers {
    async fn ask(&self, _request: QuestionRequest) -> QuestionOutcome {
        QuestionOutcome::Paused
    }
}

/// The chat's question handler, as offered to a tool call (as its
/// [`HostServices::ask_user`](crate::tool::HostServices::ask_user), and in its
/// [`Extensions`](crate::tool::Extensions)).
#[derive(Clone)]
pub struct UserQuestions {
    pub(crate) handler: Arc<dyn QuestionHandler>,
    /// Where the calls run: the main loop, or which sub-agent's.
    pub(crate) source_loop: Option<SourceLoop>,
    /// The chat's paused questions and the answer it resumes with.
    pub(crate) pauses: Arc<ChatPauses>,
    /// Where the chat's events go.
    pub(crate) events: Arc<dyn EventSink>,
}

impl UserQuestions {
    /// The handler offered to this call, if its front-end can ask.
    pub fn of(ctx: &ToolContext) -> Option<Arc<UserQuestions>> {
        ctx.extensions.get::<UserQuestions>()
    }

    /// Asks the user `questions` for the call `ctx` belongs to; a cancelled call stops waiting.
    /// When the chat resumes with the answer to this call, that is the answer. When the
    /// handler pauses, the question is recorded with the chat
    /// ([`AgentEvent::QuestionPending`]) and the call should end with
    /// [`ToolError::AwaitingAnswer`].
    pub async fn ask(&self, ctx: &ToolContext, questions: Vec<Question>) -> QuestionOutcome {
        if let Some(answers) = self.pauses.take_answer(&ctx.tool_call_id) {
            return QuestionOutcome::Answered(answers);
        }
        let request = QuestionRequest {
            tool_call_id: ctx.tool_call_id.clone(),
            questions: questions.clone(),
            asked_by_fork: self
                .source_loop
                .as_ref()
                .map(|source| source.parent_fork_tool_call_id.clone()),
        };
        let outcome = tokio::select! {
            outcome = self.handler.ask(request) => outcome,
            () = ctx.cancel.cancelled() => QuestionOutcome::Cancelled,
        };
        if outcome == QuestionOutcome::Paused {
            let pending = PendingQuestion {
                tool_call_id: ctx.tool_call_id.clone(),
                questions,
                source_loop: self.source_loop.clone(),
            };
            self.pauses.ask(pending.clone());
            self.events.emit(AgentEvent::QuestionPending(pending));
        }
        outcome
    }
}

/// The chat's questions as the [`AskUser`] host service (what AskUserQuestion uses, linked or
/// from a plugin).
impl AskUser for UserQuestions {
    fn ask(
        &self,
        call: &ToolContext,
        questions: Vec<Question>,
    ) -> BoxFuture<'static, Result<UserAnswer, ToolError>> {
        let asker = self.clone();
        let call = call.clone();
        Box::pin(async move {
            match UserQuestions::ask(&asker, &call, questions).await {
                QuestionOutcome::Answered(answers) => Ok(UserAnswer::Answered(answers)),
                QuestionOutcome::Declined => Ok(UserAnswer::Declined),
                QuestionOutcome::Cancelled => Err(ToolError::Cancelled),
                QuestionOutcome::Paused => Err(ToolError::AwaitingAnswer),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn question(multi: bool) -> Question {
        Question {
            question: "Which database?".into(),
            header: "Database".into(),
            options: vec![
                QuestionOption {
                    label: "PostgreSQL".into(),
                    description: None,
                },
                QuestionOption {
                    label: "SQLite".into(),
                    description: Some("A file".into()),
                },
            ],
            multi_select: multi,
        }
    }

    #[test]
    fn bad_shapes_name_the_field() {
        assert!(check_questions(&[]).unwrap_err().contains("ask 1 to 4"));
        let mut long = question(false);
        long.header = "Database engine".into();
        assert_eq!(
            check_questions(&[long]).unwrap_err(),
            "`questions[0].header` has 15 characters; give 1 to 12"
        );
        let mut one = question(false);
        one.options.truncate(1);
        assert!(
            check_questions(&[question(false), one])
                .unwrap_err()
                .starts_with("`questions[1].options` has 1 options")
        );
        assert!(check_questions(&[question(false)]).is_ok());
    }

    #[test]
    fn answers_quote_each_question_with_its_options_or_own_words() {
        let questions = [question(false), question(true)];
        let answers = Answers {
            selections: [("0".into(), vec![1]), ("1".into(), vec![0, 1])].into(),
            custom: [("1".into(), "and Redis".into())].into(),
        };
        assert_eq!(
            answers_text(&questions, &answers).unwrap(),
            "The user answered: \"Which database?\" = \"SQLite\", \"Which database?\" = \"PostgreSQL, SQLite, and Redis\". Go on with these answers in mind."
        );
        let missing = Answers {
            selections: [("0".into(), vec![0])].into(),
            ..Answers::default()
        };
        assert!(
            answers_text(&questions, &missing)
                .unwrap_err()
                .contains("question 1")
        );
        let two = Answers {
            selections: [("0".into(), vec![0, 1]), ("1".into(), vec![0])].into(),
            ..Answers::default()
        };
        assert!(
            answers_text(&questions, &two)
                .unwrap_err()
                .contains("takes one option")
        );
        let no_such = Answers {
            selections: [("0".into(), vec![5]), ("1".into(), vec![0])].into(),
            ..Answers::default()
        };
        assert!(
            answers_text(&questions, &no_such)
                .unwrap_err()
                .contains("no option 5")
        );
    }
}
