//! **AskUserQuestion**: the model asks the user 1–4 multiple-choice questions (an answer in the
//! user's own words is always possible) and reads the answers. Offered only where a front-end
//! can ask (see [`agentry_plugin::question`]).

use agentry_plugin::question::{Question, answers_text, check_questions};
use agentry_plugin::tool::{Tool, ToolContext, ToolError, ToolKind, ToolOutput, UserAnswer};
use schemars::JsonSchema;
use serde::Deserialize;

/// Asks the user questions.
#[derive(Debug, Clone, Copy, Default)]
pub struct AskUserQuestion;

/// AskUserQuestion's input.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AskUserQuestionInput {
    /// The questions (1–4).
    pub questions: Vec<Question>,
}

impl Tool for AskUserQuestion {
    type Input = AskUserQuestionInput;
    type Output = ToolOutput;

    fn name(&self) -> &str {
        "AskUserQuestion"
    }

    fn description(&self) -> String {
        "Asks the user 1–4 questions, each with 2–4 options (they can always answer in their \
         own words instead), when you need their preference or a decision to go on. Keep \
         `header` to 12 characters; set `multiSelect` when several options may apply."
            .to_owned()
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Think
    }

    fn needs_user(&self) -> bool {
        true
    }

    fn title(&self, input: &AskUserQuestionInput) -> String {
        match input.questions.as_slice() {
            [only] => only.question.clone(),
            _ => format!("Ask the user {} questions", input.questions.len()),
        }
    }

    async fn call(
        &self,
        input: AskUserQuestionInput,
        ctx: ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        check_questions(&input.questions).map_err(ToolError::InvalidInput)?;
        let asker = ctx.host.ask_user.clone().ok_or_else(|| {
            ToolError::failed("nobody can answer questions here: decide yourself")
        })?;
        match asker.ask(&ctx, input.questions.clone()).await? {
            UserAnswer::Answered(answers) => {
                let text = answers_text(&input.questions, &answers)
                    .map_err(|e| ToolError::failed(format!("the answers do not fit: {e}")))?;
                Ok(ToolOutput::text(text).with_raw_output(serde_json::json!({
                    "selections": answers.selections,
                    "custom": answers.custom,
                })))
            }
            UserAnswer::Declined => Ok(ToolOutput::text(
                "The user chose not to answer. Go on with your best judgement, or ask differently.",
            )),
        }
    }
}
