//! Questions for the user and their answers, as data: what a tool asks, what a paused chat
//! waits for, and what the user answered (the chat-flow protocol's shapes).

use crate::ids::ToolCallId;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One question.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Question {
    /// The question, ending with a question mark.
    pub question: String,
    /// A very short label for it (at most 12 characters: "Auth method").
    pub header: String,
    /// The choices (2–4); the user may always answer in their own words instead.
    pub options: Vec<QuestionOption>,
    /// Whether several options may be chosen.
    #[serde(default, rename = "multiSelect")]
    pub multi_select: bool,
}

/// One choice.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct QuestionOption {
    /// The choice (1–5 words).
    pub label: String,
    /// What it means.
    #[serde(default)]
    pub description: Option<String>,
}

/// The user's answers: per question index (`"0"`, `"1"`, …), the chosen options' indexes and/or
/// text of their own.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Answers {
    /// Chosen options, by question.
    #[serde(default)]
    pub selections: BTreeMap<String, Vec<usize>>,
    /// Answers in the user's own words, by question.
    #[serde(default)]
    pub custom: BTreeMap<String, String>,
}

/// The answers to one paused question: the chat-flow protocol's `askuser_answer`
/// (`{"tool_call_id": …, "selections": {"0": [1]}, "custom": {}}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct QuestionAnswer {
    /// The call that asked.
    pub tool_call_id: ToolCallId,
    /// The answers.
    #[serde(flatten)]
    pub answers: Answers,
}

/// A question waiting for the user's answer in a paused chat.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingQuestion {
    /// The call that asked (the answer names it).
    pub tool_call_id: ToolCallId,
    /// What it asks.
    pub questions: Vec<Question>,
    /// The sub-agent's loop that asked; `None` when the main loop did.
    pub source_loop: Option<SourceLoop>,
}

/// A sub-agent's loop, as a question names where it was asked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceLoop {
    /// The loop's id.
    pub loop_id: String,
    /// The Agent call that started the sub-agent.
    pub parent_fork_tool_call_id: ToolCallId,
}

/// Why questions or answers do not have the protocol's shape (naming the field).
pub fn check_questions(questions: &[Question]) -> Result<(), String> {
    if !(1..=4).contains(&questions.len()) {
        return Err(format!(
            "`questions` has {} questions; ask 1 to 4",
            questions.len()
        ));
    }
    for (index, question) in questions.iter().enumerate() {
        let at = |field: &str| format!("`questions[{index}].{field}`");
        if question.question.trim().is_empty() {
            return Err(format!("{} is empty", at("question")));
        }
        let header = question.header.chars().count();
        if header == 0 || header > 12 {
            return Err(format!(
                "{} has {header} characters; give 1 to 12",
                at("header")
            ));
        }
        if !(2..=4).contains(&question.options.len()) {
            return Err(format!(
                "{} has {} options; give 2 to 4 (the user can always answer in their own words)",
                at("options"),
                question.options.len()
            ));
        }
        if let Some(option) = question
            .options
            .iter()
            .position(|o| o.label.trim().is_empty())
        {
            return Err(format!(
                "`questions[{index}].options[{option}].label` is empty"
            ));
        }
    }
    Ok(())
}

/// The answers as the model reads them: each question quoted with its answer. Fails (for the
/// front-end to say) when a question has no answer or an answer names no option.
pub fn answers_text(questions: &[Question], answers: &Answers) -> Result<String, String> {
    let mut lines = Vec::with_capacity(questions.len());
    for (index, question) in questions.iter().enumerate() {
        let key = index.to_string();
        let mut parts: Vec<String> = Vec::new();
        for &chosen in answers.selections.get(&key).into_iter().flatten() {
            let option = question.options.get(chosen).ok_or_else(|| {
                format!(
                    "question {index} has no option {chosen} (it has {})",
                    question.options.len()
                )
            })?;
            parts.push(option.label.clone());
        }
        if !question.multi_select && parts.len() > 1 {
            return Err(format!(
                "question {index} takes one option, not {}",
                parts.len()
            ));
        }
        if let Some(own) = answers.custom.get(&key).filter(|t| !t.trim().is_empty()) {
            parts.push(own.trim().to_owned());
        }
        if parts.is_empty() {
            return Err(format!(
                "question {index} (\"{}\") has no answer",
                question.question
            ));
        }
        lines.push(format!(
            "\"{}\" = \"{}\"",
            question.question,
            parts.join(", ")
        ));
    }
    Ok(format!(
        "The user answered: {}. Go on with these answers in mind.",
        lines.join(", ")
    ))
}
