//! A chat's answer: the text of its last assistant message, or, when the caller gave an output
//! schema, that text read as JSON and checked, the model asked to correct it until it fits.

use super::Chat;
use crate::error::AgentError;
use crate::model::{AssistantContent, Message};
use crate::tool::ContentBlock;
use serde_json::Value;

/// The schema a chat's answer must satisfy, if the caller gave one, and how many answers were
/// checked against it.
pub(super) struct OutputCheck {
    schema: Option<Value>,
    checker: Option<jsonschema::Validator>,
    attempts: u32,
}

impl OutputCheck {
    /// The check of `schema`; fails when it is not a JSON Schema.
    pub(super) fn new(schema: Option<&Value>) -> Result<Self, AgentError> {
        let checker = schema
            .map(|schema| {
                jsonschema::validator_for(schema)
                    .map_err(|e| AgentError::InvalidOutputSchema(e.to_string()))
            })
            .transpose()?;
        Ok(Self {
            schema: schema.cloned(),
            checker,
            attempts: 0,
        })
    }

    /// The schema, if there is one.
    pub(super) fn schema(&self) -> Option<&Value> {
        self.schema.as_ref()
    }
}

impl Chat<'_> {
    /// The text of the chat's last assistant message.
    pub(super) fn last_answer(&self) -> Value {
        let text = self
            .new_messages
            .iter()
            .rev()
            .find_map(|m| match m {
                Message::Assistant { content, .. } => Some(
                    content
                        .iter()
                        .filter_map(|c| match c {
                            AssistantContent::Text { text } => Some(text.as_str()),
                            _ => None,
                        })
                        .collect::<String>(),
                ),
                _ => None,
            })
            .unwrap_or_default();
        Value::String(text)
    }

    /// With an output schema: the answer as JSON when it satisfies the schema; otherwise asks
    /// the model for a corrected answer (`None`: go on) until the retries run out.
    pub(super) fn check_output(&mut self) -> Result<Option<Value>, AgentError> {
        let answer = self.last_answer();
        let Some(checker) = &self.output.checker else {
            return Ok(Some(answer));
        };
        self.output.attempts += 1;
        let text = answer.as_str().unwrap_or_default();
        let problems = match parse_json_answer(text) {
            Ok(value) => match crate::schema::check(checker, &value) {
                Ok(()) => return Ok(Some(value)),
                Err(problems) => problems,
            },
            Err(error) => format!("the answer is not JSON ({error})"),
        };
        let retries = self.session.agent.inner.config.output_schema_retries;
        if self.output.attempts > retries {
            return Err(AgentError::OutputSchema {
                attempts: self.output.attempts,
                problems,
            });
        }
        self.user_turn(vec![ContentBlock::Text {
            text: format!(
                "Your answer does not satisfy the required JSON Schema: {problems}. Reply with only the corrected JSON value."
            ),
        }]);
        Ok(None)
    }
}

/// Reads an answer as JSON, accepting it inside a Markdown code fence.
fn parse_json_answer(text: &str) -> Result<Value, serde_json::Error> {
    let trimmed = text.trim();
    let unfenced = trimmed
        .strip_prefix("```json")
        .or_else(|| trimmed.strip_prefix("```"))
        .and_then(|rest| rest.strip_suffix("```"))
        .unwrap_or(trimmed);
    serde_json::from_str(unfenced.trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_answers_may_come_fenced() {
        assert_eq!(parse_json_answer(" {\"a\":1} ").unwrap()["a"], 1);
        assert_eq!(parse_json_answer("```json\n[1]\n```").unwrap()[0], 1);
        assert!(parse_json_answer("Sure! {\"a\":1}").is_err());
    }
}
