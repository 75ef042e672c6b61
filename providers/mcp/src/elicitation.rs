//! An MCP server's questions for the user (`elicitation/create`), put through the front-end's
//! own question flow (the terminal's menu, an editor's form, a headless run's `--answers`):
//! the host service the `AskUserQuestion` tool uses, for the tool call the server asked during.
//!
//! A form becomes one question per field, four to a round (required fields first, then by
//! name): a field's default comes first
//! (answering a form with every first option accepts the defaults, SEP-1034), an enum offers
//! its values (SEP-1330), a boolean yes and no, an optional field "Leave it empty"; every
//! question ends with "Decline", and any field may be answered in the user's own words. A URL
//! elicitation asks the user to open the address. With nobody to ask, the server is told no.

use agentry::question::{Answers, Question, QuestionOption};
use agentry::sync::lock;
use agentry::tool::{
    AskUser, ElicitationAnswer, HookElicitation, HookElicitationResult, ToolContext, ToolError,
    ToolHookEvent, UserAnswer,
};
use rmcp::model::{ElicitRequestParams, ElicitResult, ElicitationAction};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::Mutex;

/// What an option stands for.
#[derive(Debug, Clone, PartialEq)]
enum Pick {
    /// This value.
    Value(Value),
    /// The field left out.
    Empty,
    /// The user types the value.
    Own,
    /// The whole question declined.
    Decline,
}

/// One field of a form, as asked.
struct Field {
    name: String,
    schema: Value,
    required: bool,
    question: Question,
    picks: Vec<Pick>,
}

/// Asks the user `server`'s elicitation through `ctx`'s front-end, and the answer for the
/// server. A front-end that answers later (a web page) ends the asking with
/// [`ToolError::AwaitingAnswer`]: the server is told the user cancelled, and the call ends so
/// that the chat pauses; when it resumes, the call runs again and the same question gets the
/// answer given meanwhile. A call cancelled while asking ends with [`ToolError::Cancelled`].
///
/// The session's hooks hear of it first (`Elicitation`: they may answer in the user's place,
/// or decline it) and of the user's answer before the server does (`ElicitationResult`: they
/// may change it).
pub(crate) async fn ask(
    server: &str,
    params: &ElicitRequestParams,
    ctx: &ToolContext,
) -> Result<ElicitResult, ToolError> {
    let Some(hooks) = ctx.host.hooks.clone() else {
        return ask_user(server, params, ctx).await;
    };
    let asked = asked_of(server, params);
    let (mode, elicitation_id) = (asked.mode.clone(), asked.elicitation_id.clone());
    let before = hooks.report(ctx, ToolHookEvent::Elicitation(asked)).await;
    if let Some(answer) = before.answer {
        return Ok(result_of(answer));
    }
    let result = ask_user(server, params, ctx).await?;
    let answered = HookElicitationResult {
        mcp_server_name: server.to_owned(),
        answer: ElicitationAnswer {
            action: serde_json::to_value(&result.action)
                .ok()
                .and_then(|action| action.as_str().map(str::to_owned))
                .unwrap_or_default(),
            content: result.content.clone(),
        },
        mode,
        elicitation_id,
    };
    let after = hooks
        .report(ctx, ToolHookEvent::ElicitationResult(answered))
        .await;
    Ok(after.answer.map(result_of).unwrap_or(result))
}

/// A server's question as hooks see it.
fn asked_of(server: &str, params: &ElicitRequestParams) -> HookElicitation {
    let mut asked = HookElicitation {
        mcp_server_name: server.to_owned(),
        message: String::new(),
        mode: "form".to_owned(),
        url: None,
        elicitation_id: None,
        requested_schema: None,
    };
    match params {
        ElicitRequestParams::UrlElicitationParams {
            message,
            url,
            elicitation_id,
            ..
        } => {
            asked.message = message.clone();
            asked.mode = "url".to_owned();
            asked.url = Some(url.clone());
            asked.elicitation_id = Some(elicitation_id.clone());
        }
        ElicitRequestParams::FormElicitationParams {
            message,
            requested_schema,
            ..
        } => {
            asked.message = message.clone();
            asked.requested_schema = serde_json::to_value(requested_schema).ok();
        }
        _ => {}
    }
    asked
}

/// The answer hooks gave, as the server reads it (an action it does not know declines).
fn result_of(answer: ElicitationAnswer) -> ElicitResult {
    let action =
        serde_json::from_value(Value::String(answer.action)).unwrap_or(ElicitationAction::Decline);
    let accepted = action == ElicitationAction::Accept;
    let result = ElicitResult::new(action);
    match answer.content {
        Some(content) if accepted => result.with_content(content),
        _ => result,
    }
}

/// Puts the question to the user (see [`ask`]).
async fn ask_user(
    server: &str,
    params: &ElicitRequestParams,
    ctx: &ToolContext,
) -> Result<ElicitResult, ToolError> {
    let Some(asker) = ctx.host.ask_user.clone() else {
        return Ok(ElicitResult::new(ElicitationAction::Decline));
    };
    match params {
        ElicitRequestParams::UrlElicitationParams { message, url, .. } => {
            let question = Question {
                question: format!(
                    "The MCP server `{server}` asks you to open {url}: {message}. Done?"
                ),
                header: "MCP server".to_owned(),
                options: vec![option("Done", None), option("Decline", None)],
                multi_select: false,
            };
            Ok(
                match remembered(asker.as_ref(), ctx, vec![question]).await? {
                    UserAnswer::Answered(answers) if selected(&answers, 0) == Some(0) => {
                        ElicitResult::new(ElicitationAction::Accept)
                    }
                    _ => ElicitResult::new(ElicitationAction::Decline),
                },
            )
        }
        ElicitRequestParams::FormElicitationParams {
            message,
            requested_schema,
            ..
        } => {
            let schema = serde_json::to_value(requested_schema).unwrap_or_default();
            let fields = fields(server, message, &schema);
            let mut content = Map::new();
            for round in fields.chunks(4) {
                let questions = round.iter().map(|field| field.question.clone()).collect();
                let answers = match remembered(asker.as_ref(), ctx, questions).await? {
                    UserAnswer::Answered(answers) => answers,
                    UserAnswer::Declined => {
                        return Ok(ElicitResult::new(ElicitationAction::Decline));
                    }
                };
                for (index, field) in round.iter().enumerate() {
                    match field.answer(&answers, index) {
                        Some(Pick::Value(value)) => {
                            content.insert(field.name.clone(), value);
                        }
                        Some(Pick::Empty) if !field.required => {}
                        _ => return Ok(ElicitResult::new(ElicitationAction::Decline)),
                    }
                }
            }
            Ok(ElicitResult::new(ElicitationAction::Accept).with_content(Value::Object(content)))
        }
        _ => Ok(ElicitResult::new(ElicitationAction::Decline)),
    }
}

/// The answers given in this session to questions of a call, by call and questions: a call
/// the chat paused for an answer runs again from its start when the chat resumes, and the
/// server asks its earlier rounds again.
#[derive(Default)]
struct Given(Mutex<HashMap<String, Answers>>);

/// Asks `questions` for `ctx`'s call, unless the user answered the same ones for it already.
pub(crate) async fn remembered(
    asker: &dyn AskUser,
    ctx: &ToolContext,
    questions: Vec<Question>,
) -> Result<UserAnswer, ToolError> {
    let given = ctx.state.get_or_init(Given::default);
    let key = format!(
        "{}\n{}",
        ctx.tool_call_id,
        serde_json::to_string(&questions).unwrap_or_default()
    );
    if let Some(answers) = lock(&given.0).get(&key) {
        return Ok(UserAnswer::Answered(answers.clone()));
    }
    let answer = asker.ask(ctx, questions).await?;
    if let UserAnswer::Answered(answers) = &answer {
        lock(&given.0).insert(key, answers.clone());
    }
    Ok(answer)
}

/// The fields of a form's `schema`, each as a question.
fn fields(server: &str, message: &str, schema: &Value) -> Vec<Field> {
    let required: Vec<&str> = schema["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    // Required fields first, then by name: the same order whatever order the JSON was read in.
    let mut properties: Vec<(&String, &Value)> = schema["properties"]
        .as_object()
        .into_iter()
        .flatten()
        .collect();
    properties.sort_by_key(|(name, _)| (!required.contains(&name.as_str()), name.to_owned()));
    properties
        .into_iter()
        .map(|(name, property)| {
            let required = required.contains(&name.as_str());
            let title = property["title"].as_str().unwrap_or(name);
            let (options, picks) = choices(property, required);
            let described = property["description"]
                .as_str()
                .map_or(String::new(), |d| format!(" ({d})"));
            Field {
                name: name.clone(),
                schema: property.clone(),
                required,
                question: Question {
                    question: format!("`{server}` asks: {message} — {title}{described}?"),
                    header: title.chars().take(12).collect(),
                    options,
                    multi_select: property["type"] == "array",
                },
                picks,
            }
        })
        .collect()
}

/// A field's options and what each stands for: its default first, then its values (an enum's,
/// a boolean's), "Leave it empty" when optional, and "Decline"; at most four.
fn choices(property: &Value, required: bool) -> (Vec<QuestionOption>, Vec<Pick>) {
    let default = property.get("default").cloned();
    let mut values: Vec<(Value, String)> = enum_values(property);
    if property["type"] == "boolean" {
        values = vec![
            (Value::Bool(true), "Yes".to_owned()),
            (Value::Bool(false), "No".to_owned()),
        ];
    }
    if let Some(default) = &default
        && let Some(at) = values.iter().position(|(value, _)| value == default)
    {
        let first = values.remove(at);
        values.insert(0, first);
    } else if let Some(default) = &default {
        // A list's default (of a multiple choice) is one option; its items are not offered
        // again on their own.
        let items = default.as_array().cloned().unwrap_or_default();
        let label = items
            .iter()
            .map(|item| {
                values
                    .iter()
                    .find(|(value, _)| value == item)
                    .map_or_else(|| label_of(item), |(_, label)| label.clone())
            })
            .collect::<Vec<_>>()
            .join(", ");
        values.retain(|(value, _)| !items.contains(value));
        let label = if items.is_empty() {
            label_of(default)
        } else {
            label
        };
        values.insert(0, (default.clone(), label));
    }
    let mut options = Vec::new();
    let mut picks = Vec::new();
    let room = if required { 3 } else { 2 };
    for (value, label) in values.into_iter().take(room) {
        let label = match Some(&value) == default.as_ref() {
            true => format!("{label} (default)"),
            false => label,
        };
        options.push(option(&label, None));
        picks.push(Pick::Value(value));
    }
    if !required {
        options.push(option("Leave it empty", None));
        picks.push(Pick::Empty);
    }
    if options.is_empty() {
        options.push(option("My own answer", Some("type it as your answer")));
        picks.push(Pick::Own);
    }
    options.push(option("Decline", Some("do not answer the server")));
    picks.push(Pick::Decline);
    (options, picks)
}

/// An enum field's values with their labels (`enum`, `oneOf` / `anyOf` of `const` + `title`,
/// or an array's `items` of either).
fn enum_values(property: &Value) -> Vec<(Value, String)> {
    let property = match property["type"] == "array" {
        true => &property["items"],
        false => property,
    };
    if let Some(values) = property["enum"].as_array() {
        let names = property["enumNames"].as_array();
        return values
            .iter()
            .enumerate()
            .map(|(i, value)| {
                let name = names.and_then(|names| names.get(i)).and_then(Value::as_str);
                (
                    value.clone(),
                    name.map_or_else(|| label_of(value), str::to_owned),
                )
            })
            .collect();
    }
    ["oneOf", "anyOf"]
        .iter()
        .filter_map(|key| property[key].as_array())
        .flatten()
        .filter_map(|choice| {
            let value = choice.get("const")?.clone();
            let label = choice["title"]
                .as_str()
                .map_or_else(|| label_of(&value), str::to_owned);
            Some((value, label))
        })
        .collect()
}

impl Field {
    /// The field's answer at `index` of a round: the user's own words (read as the field's
    /// type), else the options chosen.
    fn answer(&self, answers: &Answers, index: usize) -> Option<Pick> {
        let key = index.to_string();
        if let Some(text) = answers
            .custom
            .get(&key)
            .map(|t| t.trim())
            .filter(|t| !t.is_empty())
        {
            return self.read(text).map(Pick::Value);
        }
        let chosen = answers.selections.get(&key)?;
        if self.question.multi_select {
            let values: Vec<Value> = chosen
                .iter()
                .filter_map(|at| match self.picks.get(*at) {
                    Some(Pick::Value(Value::Array(values))) => Some(values.clone()),
                    Some(Pick::Value(value)) => Some(vec![value.clone()]),
                    _ => None,
                })
                .flatten()
                .collect();
            if chosen
                .iter()
                .any(|at| self.picks.get(*at) == Some(&Pick::Decline))
            {
                return Some(Pick::Decline);
            }
            return Some(Pick::Value(Value::Array(values)));
        }
        self.picks.get(*chosen.first()?).cloned()
    }

    /// Text typed for the field, as a value of its type.
    fn read(&self, text: &str) -> Option<Value> {
        match self.schema["type"].as_str() {
            Some("integer") => text.parse::<i64>().ok().map(Value::from),
            Some("number") => text.parse::<f64>().ok().map(Value::from),
            Some("boolean") => match text.to_lowercase().as_str() {
                "yes" | "true" | "y" => Some(Value::Bool(true)),
                "no" | "false" | "n" => Some(Value::Bool(false)),
                _ => None,
            },
            Some("array") => Some(Value::Array(
                text.split(',')
                    .map(|item| Value::from(item.trim()))
                    .collect(),
            )),
            _ => Some(Value::from(text)),
        }
    }
}

/// Whether, and which, option was chosen for question `index`.
fn selected(answers: &Answers, index: usize) -> Option<usize> {
    answers.selections.get(&index.to_string())?.first().copied()
}

/// A value as an option's label.
fn label_of(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Array(items) => items.iter().map(label_of).collect::<Vec<_>>().join(", "),
        other => other.to_string(),
    }
}

/// An option.
fn option(label: &str, description: Option<&str>) -> QuestionOption {
    QuestionOption {
        label: label.to_owned(),
        description: description.map(str::to_owned),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn form() -> Value {
        json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "title": "Your name"},
                "color": {"type": "string", "enum": ["red", "green", "blue"], "default": "green"},
                "count": {"type": "integer", "default": 3},
                "agree": {"type": "boolean"},
                "pets": {"type": "array", "items": {"anyOf": [
                    {"const": "cat", "title": "Cats"}, {"const": "dog", "title": "Dogs"}
                ]}, "default": ["dog"]}
            },
            "required": ["name"]
        })
    }

    fn field<'a>(fields: &'a [Field], name: &str) -> &'a Field {
        fields.iter().find(|field| field.name == name).unwrap()
    }

    fn labels(field: &Field) -> Vec<&str> {
        field
            .question
            .options
            .iter()
            .map(|o| o.label.as_str())
            .collect()
    }

    fn answers(selections: &[(usize, Vec<usize>)], custom: &[(usize, &str)]) -> Answers {
        Answers {
            selections: selections
                .iter()
                .map(|(at, chosen)| (at.to_string(), chosen.clone()))
                .collect(),
            custom: custom
                .iter()
                .map(|(at, text)| (at.to_string(), (*text).to_owned()))
                .collect(),
        }
    }

    #[test]
    fn each_field_is_a_question_with_its_default_first_and_a_way_to_decline() {
        let fields = fields("docs", "Tell me more", &form());
        assert_eq!(fields.len(), 5);
        for field in &fields {
            agentry::question::check_questions(std::slice::from_ref(&field.question)).unwrap();
            assert_eq!(field.question.options.last().unwrap().label, "Decline");
        }
        let color = field(&fields, "color");
        assert_eq!(
            labels(color),
            ["green (default)", "red", "Leave it empty", "Decline"]
        );
        assert!(
            color
                .question
                .question
                .contains("`docs` asks: Tell me more")
        );
        assert_eq!(
            labels(field(&fields, "agree")),
            ["Yes", "No", "Leave it empty", "Decline"]
        );
        assert_eq!(
            labels(field(&fields, "count")),
            ["3 (default)", "Leave it empty", "Decline"]
        );
        let name = field(&fields, "name");
        assert_eq!(labels(name), ["My own answer", "Decline"]);
        assert_eq!(name.question.header, "Your name");
        let pets = field(&fields, "pets");
        assert!(pets.question.multi_select);
        assert_eq!(
            labels(pets),
            ["Dogs (default)", "Cats", "Leave it empty", "Decline"]
        );
        let order: Vec<&str> = fields.iter().map(|field| field.name.as_str()).collect();
        assert_eq!(order, ["name", "agree", "color", "count", "pets"]);
    }

    #[test]
    fn answers_become_values_of_each_fields_type() {
        let fields = fields("docs", "Tell me more", &form());
        let count = field(&fields, "count");
        assert_eq!(
            count.answer(&answers(&[(0, vec![0])], &[]), 0),
            Some(Pick::Value(json!(3)))
        );
        assert_eq!(
            count.answer(&answers(&[], &[(0, "12")]), 0),
            Some(Pick::Value(json!(12)))
        );
        assert_eq!(count.answer(&answers(&[], &[(0, "twelve")]), 0), None);
        assert_eq!(
            count.answer(&answers(&[(0, vec![1])], &[]), 0),
            Some(Pick::Empty)
        );
        assert_eq!(
            count.answer(&answers(&[(0, vec![2])], &[]), 0),
            Some(Pick::Decline)
        );
        let agree = field(&fields, "agree");
        assert_eq!(
            agree.answer(&answers(&[], &[(0, "No")]), 0),
            Some(Pick::Value(json!(false)))
        );
        let pets = field(&fields, "pets");
        assert_eq!(
            pets.answer(&answers(&[(0, vec![0, 1])], &[]), 0),
            Some(Pick::Value(json!(["dog", "cat"])))
        );
        let name = field(&fields, "name");
        assert_eq!(
            name.answer(&answers(&[], &[(0, " Ada ")]), 0),
            Some(Pick::Value(json!("Ada")))
        );
        assert_eq!(
            name.answer(&answers(&[(0, vec![0])], &[]), 0),
            Some(Pick::Own)
        );
    }
}
