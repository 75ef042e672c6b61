//! An MCP server asking for a message from the client's model (`sampling/createMessage`):
//! answered by the session's model, as a side question (no tools, no history), once the user
//! allows it, for the tool call the server asked during.
//!
//! The session's permission rules decide first: `Sampling(SERVER)` under `allow` lets the
//! server's requests through without asking, under `deny` refuses them (see
//! [`RequestRules`](agentry::tool::RequestRules)). Otherwise the user is asked through the
//! front-end's question flow ("Allow", "Allow for this session", "Deny"); with nobody to ask
//! the request is refused. The answer is kept within the server's `maxTokens` and `[mcp]
//! sampling_max_tokens`, whichever is lower, and shows in the call's progress.
//!
//! Sampling is deprecated in the newest protocol version (SEP-2577), but servers on the
//! earlier versions still ask for it.
#![allow(deprecated)]

use crate::McpOptions;
use crate::elicitation::remembered;
use agentry::question::{Question, QuestionOption};
use agentry::sync::lock;
use agentry::tool::{
    RequestDecision, SideQuestion, ToolContent, ToolContext, ToolError, ToolProgress, UserAnswer,
};
use rmcp::model::{
    CreateMessageRequestParams, CreateMessageResult, Role, SamplingMessage,
    SamplingMessageContentBlock,
};
use std::collections::HashSet;
use std::sync::Mutex;

/// How the session's model may answer a server.
#[derive(Debug, Clone)]
pub(crate) struct SamplingPolicy {
    /// The most tokens of an answer.
    pub(crate) max_tokens: u32,
}

impl SamplingPolicy {
    /// The policy `options` set.
    pub(crate) fn of(options: &McpOptions) -> Self {
        Self {
            max_tokens: options.sampling_max_tokens,
        }
    }
}

/// Why a server gets no message.
#[derive(Debug)]
pub(crate) enum Refused {
    /// The user denied it, nobody could be asked, or the model failed: said to the server.
    Said(String),
    /// The asking ended the call (the chat pauses for the answer, or it was cancelled).
    Ended(ToolError),
}

/// The servers the user allowed for the rest of the session.
#[derive(Default)]
struct AllowedForSession(Mutex<HashSet<String>>);

/// Answers `server`'s request with the session's model, once allowed.
pub(crate) async fn answer(
    server: &str,
    params: &CreateMessageRequestParams,
    ctx: &ToolContext,
    policy: &SamplingPolicy,
) -> Result<CreateMessageResult, Refused> {
    let prompt = conversation(params);
    let decided = match &ctx.host.request_rules {
        Some(rules) => rules.decide("Sampling", server).await,
        None => RequestDecision::Ask,
    };
    let allowed = match decided {
        RequestDecision::Allow => true,
        RequestDecision::Deny(why) => return Err(Refused::Said(why)),
        RequestDecision::Ask => allowed_by_user(server, &prompt, ctx).await?,
    };
    if !allowed {
        return Err(Refused::Said(format!(
            "the user did not let `{server}` use the model"
        )));
    }
    let Some(model) = ctx.host.side_questions.clone() else {
        return Err(Refused::Said(
            "this agent offers no model to its tools".to_owned(),
        ));
    };
    let system = params.system_prompt.clone().unwrap_or_else(|| {
        format!("You answer a request from the MCP server `{server}`, which a tool call of the user's session started.")
    });
    let max_tokens = params.max_tokens.min(policy.max_tokens);
    let question = SideQuestion::new(system, prompt).with_max_tokens(max_tokens);
    let answer = model.ask(question).await.map_err(Refused::Said)?;
    ctx.progress
        .report(ToolProgress::Content(vec![ToolContent::text(format!(
            "`{server}` asked the session's model ({}): {}",
            answer.model,
            excerpt(&answer.text)
        ))]));
    Ok(CreateMessageResult::new(
        SamplingMessage::new(
            Role::Assistant,
            SamplingMessageContentBlock::text(answer.text),
        ),
        answer.model,
    )
    .with_stop_reason(CreateMessageResult::STOP_REASON_END_TURN))
}

/// Asks the user whether `server` may have the model answer `prompt`; "for this session"
/// is remembered in the session's state.
async fn allowed_by_user(server: &str, prompt: &str, ctx: &ToolContext) -> Result<bool, Refused> {
    let session = ctx.state.get_or_init(AllowedForSession::default);
    if lock(&session.0).contains(server) {
        return Ok(true);
    }
    let Some(asker) = ctx.host.ask_user.clone() else {
        return Ok(false);
    };
    let option = |label: &str| QuestionOption {
        label: label.to_owned(),
        description: None,
    };
    let question = Question {
        question: format!(
            "The MCP server `{server}` asks the session's model to answer: “{}”. Allow it?",
            excerpt(prompt)
        ),
        header: "Sampling".to_owned(),
        options: vec![
            option("Allow"),
            option("Allow for this session"),
            option("Deny"),
        ],
        multi_select: false,
    };
    let answer = remembered(asker.as_ref(), ctx, vec![question])
        .await
        .map_err(Refused::Ended)?;
    let chosen = match &answer {
        UserAnswer::Answered(answers) => answers.selections.get("0").and_then(|c| c.first()),
        UserAnswer::Declined => None,
    };
    match chosen {
        Some(0) => Ok(true),
        Some(1) => {
            lock(&session.0).insert(server.to_owned());
            Ok(true)
        }
        _ => Ok(false),
    }
}

/// The server's messages as one prompt: each text under its speaker (other content noted).
fn conversation(params: &CreateMessageRequestParams) -> String {
    params
        .messages
        .iter()
        .map(|message| {
            let speaker = match message.role {
                Role::User => "User",
                Role::Assistant => "Assistant",
            };
            let text: Vec<String> = message
                .content
                .clone()
                .into_vec()
                .iter()
                .map(|block| match block.as_text() {
                    Some(text) => text.text.clone(),
                    None => "[content other than text]".to_owned(),
                })
                .collect();
            format!("{speaker}: {}", text.join("\n"))
        })
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// The start of `text`, for a question or a progress line.
fn excerpt(text: &str) -> String {
    const MOST: usize = 300;
    match text.char_indices().nth(MOST) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}
