//! The model's questions to the user (AskUserQuestion) as ACP's `elicitation/create` in form
//! mode, for clients that advertise `elicitation.form`: one field per question — a single
//! choice as a titled `oneOf`, several as an array of titled choices — and, beside each, an
//! optional field for an answer in the user's own words. Declining (or dismissing) the form is
//! a declined question.

use crate::view::ChatView;
use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema as acp;
use agentry::question::{Answers, Question, QuestionHandler, QuestionOutcome, QuestionRequest};
use agentry::sync::lock;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};

/// Asks the client's user with `elicitation/create`.
pub struct ClientQuestions {
    /// The connection to the client.
    pub connection: ConnectionTo<Client>,
    /// The turn's calls and sub-agents, to say which sub-agent asks, in which session.
    pub view: Arc<Mutex<ChatView>>,
}

#[async_trait::async_trait]
impl QuestionHandler for ClientQuestions {
    async fn ask(&self, request: QuestionRequest) -> QuestionOutcome {
        let (session_id, asking) = {
            let view = lock(&self.view);
            let asking = request
                .asked_by_fork
                .as_ref()
                .and_then(|fork| view.book.get(fork).map(|call| call.title.clone()));
            (view.session_of_call(&request.tool_call_id), asking)
        };
        let form = match form_request(&session_id, &request, asking.as_deref()) {
            Ok(form) => form,
            Err(problem) => {
                tracing::warn!("the questions could not be put as a form ({problem}); declined");
                return QuestionOutcome::Declined;
            }
        };
        match self.connection.send_request(form).block_task().await {
            Ok(response) => match response.action {
                acp::ElicitationAction::Accept(accepted) => QuestionOutcome::Answered(answers(
                    &request.questions,
                    accepted.content.unwrap_or_default(),
                )),
                _ => QuestionOutcome::Declined,
            },
            Err(error) => {
                tracing::warn!("elicitation/create failed ({error}); the question is declined");
                QuestionOutcome::Declined
            }
        }
    }
}

/// The form for `request` (`asking`: the title of the sub-agent's Agent call, when one asks).
pub fn form_request(
    session_id: &acp::SessionId,
    request: &QuestionRequest,
    asking: Option<&str>,
) -> Result<acp::CreateElicitationRequest, serde_json::Error> {
    let mut properties = serde_json::Map::new();
    for (index, question) in request.questions.iter().enumerate() {
        properties.insert(format!("q{index}"), choice_field(question));
        properties.insert(
            format!("q{index}_other"),
            json!({"type": "string", "title": format!("{}: or in your own words", question.header)}),
        );
    }
    let message = match asking {
        Some(sub_agent) => format!("The sub-agent \u{201c}{sub_agent}\u{201d} asks:"),
        None => "The agent asks:".to_owned(),
    };
    let message = request
        .questions
        .iter()
        .fold(message, |message, q| format!("{message}\n- {}", q.question));
    serde_json::from_value(json!({
        "mode": "form",
        "sessionId": session_id.to_string(),
        "toolCallId": request.tool_call_id.to_string(),
        "message": message,
        "requestedSchema": {"type": "object", "properties": properties},
    }))
}

/// A question's choices as a form field.
fn choice_field(question: &Question) -> Value {
    let choices: Vec<Value> = question
        .options
        .iter()
        .enumerate()
        .map(|(index, option)| json!({"const": index.to_string(), "title": option.label}))
        .collect();
    let described = question
        .options
        .iter()
        .filter_map(|o| o.description.as_ref().map(|d| format!("{}: {d}", o.label)))
        .collect::<Vec<_>>()
        .join("; ");
    let mut field = if question.multi_select {
        json!({"type": "array", "title": question.question, "items": {"anyOf": choices}})
    } else {
        json!({"type": "string", "title": question.question, "oneOf": choices})
    };
    if !described.is_empty() {
        field["description"] = Value::String(described);
    }
    field
}

/// The form's content as answers (fields it does not know, and choices that are not
/// numbers, are left out; the framework says what is missing).
pub fn answers(
    questions: &[Question],
    content: std::collections::BTreeMap<String, acp::ElicitationContentValue>,
) -> Answers {
    let mut answers = Answers::default();
    for index in 0..questions.len() {
        let key = index.to_string();
        let chosen: Vec<usize> = match content.get(&format!("q{index}")) {
            Some(acp::ElicitationContentValue::String(one)) => one.parse().into_iter().collect(),
            Some(acp::ElicitationContentValue::StringArray(many)) => {
                many.iter().filter_map(|c| c.parse().ok()).collect()
            }
            _ => Vec::new(),
        };
        if !chosen.is_empty() {
            answers.selections.insert(key.clone(), chosen);
        }
        if let Some(acp::ElicitationContentValue::String(own)) =
            content.get(&format!("q{index}_other"))
            && !own.trim().is_empty()
        {
            answers.custom.insert(key, own.clone());
        }
    }
    answers
}
