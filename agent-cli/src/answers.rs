//! `agentry run --answers FILE`: the answers to the model's questions for a run nobody
//! watches, read from a JSON file — a list of answers in the order the questions come, each
//! `{"selections": {"0": [1]}, "custom": {"1": "text"}}`. Questions beyond the list are
//! declined.

use agentry::question::{Answers, QuestionHandler, QuestionOutcome, QuestionRequest};
use agentry::sync::lock;
use anyhow::Context;
use std::collections::VecDeque;
use std::path::Path;
use std::sync::Mutex;

/// Answers from a file, one per question asked.
pub struct FileAnswers(Mutex<VecDeque<Answers>>);

impl FileAnswers {
    /// Reads the answers in `path`.
    pub fn read(path: &Path) -> anyhow::Result<Self> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the answers file {}", path.display()))?;
        let answers: Vec<Answers> = serde_json::from_str(&text).with_context(|| {
            format!(
                "{} is not a list of answers like [{{\"selections\": {{\"0\": [1]}}}}]",
                path.display()
            )
        })?;
        Ok(Self(Mutex::new(answers.into())))
    }
}

#[agentry::async_trait]
impl QuestionHandler for FileAnswers {
    async fn ask(&self, request: QuestionRequest) -> QuestionOutcome {
        match lock(&self.0).pop_front() {
            Some(answers) => QuestionOutcome::Answered(answers),
            None => {
                eprintln!(
                    "agentry: the answers file has no answer left for `{}`: declined",
                    request
                        .questions
                        .first()
                        .map_or("a question", |q| q.question.as_str())
                );
                QuestionOutcome::Declined
            }
        }
    }
}
