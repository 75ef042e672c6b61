//! One MCP tool as an agentry tool.

use crate::auth::{NO_TOKEN_FOLDER, open_in_browser};
use crate::content::tool_output;
use crate::handler::{Unanswered, input_response};
use crate::link::Link;
use crate::sampling::SamplingPolicy;
use agentry::tool::{
    DynTool, PreparedCall, ToolCallLocation, ToolContent, ToolContext, ToolError, ToolKind,
    ToolOutput, ToolProgress,
};
use futures::future::BoxFuture;
use futures::{FutureExt, StreamExt};
use rmcp::RoleClient;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotificationParam, ClientRequest,
    DEFAULT_MRTR_MAX_ROUNDS, InputRequiredResult, InputResponses, JsonObject,
    ProgressNotificationParam, ServerResult, ToolAnnotations,
};
use rmcp::service::{Peer, PeerRequestOptions, ServiceError};
use serde_json::Value;
use std::path::Path;
use std::sync::Arc;

/// The longest tool name hosted model APIs take.
const MAX_TOOL_NAME: usize = 64;

/// The name the model calls a server's tool by: `mcp__SERVER__TOOL`, with every character
/// model APIs refuse in tool names (anything but letters, digits, `_` and `-`) made `_`. A name
/// longer than the 64 characters hosted APIs take is cut, and ends with a digest of the whole
/// so that two long names stay apart.
pub fn tool_name(server: &str, tool: &str) -> String {
    let whole = format!("{}{}", tool_prefix(server), clean_name(tool));
    if whole.len() <= MAX_TOOL_NAME {
        return whole;
    }
    let digest = format!("_{:08x}", fnv1a(whole.as_bytes()));
    let kept: String = whole.chars().take(MAX_TOOL_NAME - digest.len()).collect();
    format!("{kept}{digest}")
}

/// What every tool name of `server` starts with (`mcp__SERVER__`, cleaned as in
/// [`tool_name`], and with no `__` inside SERVER, so a rule naming one server never names
/// another): how configuration recognises a server's tools before it lists them.
pub fn tool_prefix(server: &str) -> String {
    let mut cleaned = clean_name(server);
    while cleaned.contains("__") {
        cleaned = cleaned.replace("__", "_");
    }
    format!("mcp__{}__", cleaned.trim_matches('_'))
}

/// `text` with every character but letters, digits, `_` and `-` made `_`.
fn clean_name(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The 32-bit FNV-1a digest of `bytes`: stable from run to run, for names rules may name.
fn fnv1a(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5, |hash: u32, byte| {
        (hash ^ u32::from(*byte)).wrapping_mul(0x0100_0193)
    })
}

/// The kind a tool's annotations suggest. The MCP specification calls them untrusted, so a
/// server's hints may make agentry ask more, never less: `destructiveHint` makes it a delete;
/// `readOnlyHint` makes it a read (which runs unasked) only for a server whose hints the user's
/// configuration trusts (`[mcp] trusted_hints`); anything else is `other`, which asks.
fn kind(annotations: Option<&ToolAnnotations>, hints_trusted: bool) -> ToolKind {
    match annotations {
        Some(hints) if hints.destructive_hint == Some(true) => ToolKind::Delete,
        Some(hints) if hints_trusted && hints.read_only_hint == Some(true) => ToolKind::Read,
        _ => ToolKind::Other,
    }
}

/// The tools a server lists, each once: a later one whose name collides with an earlier one's
/// (`get.thing` and `get_thing` both become `…__get_thing`) is left out, with a warning that
/// names the server, so one server's listing never stops the agent.
pub(crate) fn distinct(server: &str, tools: &[rmcp::model::Tool]) -> Vec<rmcp::model::Tool> {
    let mut seen = std::collections::HashMap::new();
    let mut kept = Vec::new();
    for tool in tools {
        let name = tool_name(server, &tool.name);
        match seen.get(&name) {
            Some(first) => tracing::warn!(
                "the MCP server `{server}` lists `{}` and `{first}`, which are both called `{name}`: `{}` is left out",
                tool.name,
                tool.name
            ),
            None => {
                seen.insert(name, tool.name.to_string());
                kept.push(tool.clone());
            }
        }
    }
    kept
}

/// A tool of an MCP server.
pub(crate) struct McpTool {
    name: String,
    remote_name: String,
    title: String,
    description: String,
    kind: ToolKind,
    input_schema: Value,
    link: Arc<Link>,
}

impl McpTool {
    pub(crate) fn new(tool: rmcp::model::Tool, link: Arc<Link>) -> Self {
        let title = tool
            .annotations
            .as_ref()
            .and_then(|hints| hints.title.clone())
            .or_else(|| tool.title.clone())
            .unwrap_or_else(|| tool.name.to_string());
        Self {
            name: tool_name(&link.server, &tool.name),
            title,
            description: tool.description.as_deref().unwrap_or_default().to_owned(),
            kind: kind(
                tool.annotations.as_ref(),
                link.options.trusted_hints.contains(&link.server),
            ),
            input_schema: Value::Object((*tool.input_schema).clone()),
            remote_name: tool.name.into_owned(),
            link,
        }
    }
}

impl DynTool for McpTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> String {
        self.description.clone()
    }

    fn kind(&self) -> ToolKind {
        self.kind
    }

    fn input_schema(&self) -> Value {
        self.input_schema.clone()
    }

    fn prepare(&self, input: Value, _cwd: &Path) -> Result<Box<dyn PreparedCall>, ToolError> {
        let arguments = match input {
            Value::Object(arguments) => arguments,
            Value::Null => JsonObject::new(),
            other => {
                return Err(ToolError::InvalidInput(format!(
                    "the arguments must be a JSON object, not {other}"
                )));
            }
        };
        Ok(Box::new(McpCall {
            title: self.title.clone(),
            remote_name: self.remote_name.clone(),
            arguments,
            link: self.link.clone(),
        }))
    }
}

/// One call of an MCP tool.
struct McpCall {
    title: String,
    remote_name: String,
    arguments: JsonObject,
    link: Arc<Link>,
}

impl PreparedCall for McpCall {
    fn title(&self) -> String {
        self.title.clone()
    }

    fn locations(&self) -> Vec<ToolCallLocation> {
        Vec::new()
    }

    fn run(self: Box<Self>, ctx: ToolContext) -> BoxFuture<'static, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            self.link.wake().await;
            let peer = self.link.peer().map_err(ToolError::failed)?;
            let waiting = self.link.calls.enter(&ctx);
            let mut params = CallToolRequestParams::new(self.remote_name.clone())
                .with_arguments(self.arguments.clone());
            let mut logged_in_again = false;
            for _ in 0..DEFAULT_MRTR_MAX_ROUNDS {
                let answer = match self.ask(&peer, params.clone(), &ctx).await {
                    Ok(result) => Ok(result),
                    // Asked once per call for more scope: logged in again, and the round sent
                    // again.
                    Err(RoundFailed::NeedsScope(challenge)) if !logged_in_again => {
                        logged_in_again = true;
                        self.log_in_again(challenge, &ctx).await?;
                        continue;
                    }
                    Err(RoundFailed::NeedsScope(_)) => Err(self.short_of_scope()),
                    Err(RoundFailed::Other(error)) => Err(error),
                };
                // A question the server asked meanwhile that the user answers later (or the
                // call was cancelled while asking) ends the call so.
                if let Some(unanswered) = waiting.unanswered() {
                    return Err(unanswered);
                }
                match answer? {
                    ServerResult::CallToolResult(result) => return tool_output(result, &ctx),
                    ServerResult::InputRequiredResult(needs) => {
                        let (responses, state) = self.inputs(needs, &ctx).await?;
                        params.input_responses = responses;
                        params.request_state = state;
                    }
                    _ => {
                        return Err(ToolError::failed(format!(
                            "`{}` started a background task, which agentry does not support yet",
                            self.remote_name
                        )));
                    }
                }
            }
            Err(ToolError::failed(format!(
                "`{}` still needed more input after {DEFAULT_MRTR_MAX_ROUNDS} rounds, so the call was given up",
                self.remote_name
            )))
        })
    }
}

/// Whether the user wants `url`, where the MCP server `server` sends them to log in, opened in
/// the browser; without anyone to ask, no.
async fn user_opens(server: &str, url: &str, ctx: &ToolContext) -> bool {
    let Some(asker) = ctx.host.ask_user.clone() else {
        return false;
    };
    let option = |label: &str| agentry::question::QuestionOption {
        label: label.to_owned(),
        description: None,
    };
    let question = agentry::question::Question {
        question: format!(
            "The MCP server `{server}` asks you to log in again at {url}. Open it in the browser?"
        ),
        header: "Log in".to_owned(),
        options: vec![option("Open the browser"), option("Do not open it")],
        multi_select: false,
    };
    match crate::elicitation::remembered(asker.as_ref(), ctx, vec![question]).await {
        Ok(agentry::tool::UserAnswer::Answered(answers)) => {
            answers.selections.get("0").and_then(|c| c.first()) == Some(&0)
        }
        _ => false,
    }
}

/// Why a round of a call got no answer.
enum RoundFailed {
    /// The server refused it for want of scope (`403 insufficient_scope`): its challenge.
    NeedsScope(String),
    /// Any other reason, as the model reads it.
    Other(ToolError),
}

impl From<ToolError> for RoundFailed {
    fn from(error: ToolError) -> Self {
        RoundFailed::Other(error)
    }
}

impl McpCall {
    /// Sends one round of the call and waits for its answer, passing progress reports on and
    /// telling the server when the user cancels.
    async fn ask(
        &self,
        peer: &Peer<RoleClient>,
        params: CallToolRequestParams,
        ctx: &ToolContext,
    ) -> Result<ServerResult, RoundFailed> {
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let options = PeerRequestOptions::with_timeout(self.link.options.tool_timeout)
            .reset_timeout_on_progress();
        let sent = peer
            .send_request_with_option(request, options)
            .await
            .map_err(|e| self.failure(e))?;
        let id = sent.id.clone();
        self.link.calls.sent(&ctx.tool_call_id, id.clone());
        let mut progress = self
            .link
            .progress
            .subscribe(sent.progress_token.clone())
            .await;
        let response = sent.await_response();
        tokio::pin!(response);
        let response = loop {
            tokio::select! {
                response = &mut response => {
                    // Reports that came in just before the answer still count.
                    while let Some(Some(report)) = progress.next().now_or_never() {
                        ctx.progress.report(progress_content(&report));
                    }
                    break response;
                }
                Some(report) = progress.next() => ctx.progress.report(progress_content(&report)),
                () = ctx.cancel.cancelled() => {
                    // The server is told, so it can stop the work.
                    let cancelled = CancelledNotificationParam::new(
                        Some(id),
                        Some("the user cancelled the tool call".to_owned()),
                    );
                    let _ = peer.notify_cancelled(cancelled).await;
                    return Err(ToolError::Cancelled.into());
                }
            }
        };
        response.map_err(|e| self.failure(e))
    }

    /// The answers to what a round's result asked for, and the state to echo, for the next
    /// round. A result that asks for nothing and keeps no state cannot be retried.
    async fn inputs(
        &self,
        needs: InputRequiredResult,
        ctx: &ToolContext,
    ) -> Result<(Option<InputResponses>, Option<String>), ToolError> {
        let requests = needs.input_requests.unwrap_or_default();
        if requests.is_empty() && needs.request_state.is_none() {
            return Err(ToolError::failed(format!(
                "`{}` asked for more input but named none",
                self.remote_name
            )));
        }
        let mut responses = InputResponses::new();
        for (key, request) in &requests {
            let server = &self.link.server;
            let sampling = SamplingPolicy::of(&self.link.options);
            let answer = input_response(server, request, &self.link.roots, ctx, &sampling)
                .await
                .map_err(|why| match why {
                    Unanswered::Unsupported(why) => {
                        ToolError::failed(format!("`{}` could not go on: {why}", self.remote_name))
                    }
                    Unanswered::Ended(error) => error,
                })?;
            responses.insert(key.clone(), answer);
        }
        Ok((
            (!responses.is_empty()).then_some(responses),
            needs.request_state,
        ))
    }

    /// Logs in to the server again for the scope its `challenge` names (the user shown where,
    /// in the call's progress, and a browser opened), as long as the user does not cancel.
    async fn log_in_again(&self, challenge: String, ctx: &ToolContext) -> Result<(), ToolError> {
        let Some(server) = &self.link.http else {
            return Err(self.short_of_scope());
        };
        let name = &self.link.server;
        let Some(folder) = self.link.options.token_folder.clone() else {
            return Err(ToolError::failed(format!(
                "{}: {NO_TOKEN_FOLDER}",
                self.short_of_scope()
            )));
        };
        let (address, addressed) = tokio::sync::oneshot::channel::<String>();
        let login = crate::auth::step_up(name, server, &folder, challenge, |url| {
            let text = format!(
                "The MCP server `{name}` asks for more access than agentry's login has. Log in at {url}."
            );
            ctx.progress
                .report(ToolProgress::Content(vec![ToolContent::text(text)]));
            let _ = address.send(url.to_owned());
        });
        // The browser opens only when the user says so, having seen where it goes (the
        // address comes from the server's metadata).
        let opening = async {
            if let Ok(url) = addressed.await
                && user_opens(name, &url, ctx).await
            {
                open_in_browser(&url);
            }
        };
        let logging_in = async { tokio::join!(login, opening).0 };
        tokio::select! {
            logged_in = logging_in => logged_in.map_err(|error| ToolError::failed(error.to_string())),
            () = ctx.cancel.cancelled() => Err(ToolError::Cancelled),
        }
    }

    /// The call refused for want of scope even after logging in again, for the model.
    fn short_of_scope(&self) -> ToolError {
        ToolError::failed(format!(
            "the MCP server `{}` refused `{}`: it needs more access (scope) than agentry's login to it has",
            self.link.server, self.remote_name
        ))
    }

    /// Why a round failed: for want of scope, or otherwise (as the model reads it).
    fn failure(&self, error: ServiceError) -> RoundFailed {
        if let Some(challenge) = crate::auth::scope_challenge(&error) {
            return RoundFailed::NeedsScope(challenge);
        }
        let server = &self.link.server;
        let tool = &self.remote_name;
        RoundFailed::Other(ToolError::failed(match error {
            ServiceError::Timeout { timeout } => format!(
                "`{tool}` on the MCP server `{server}` neither answered nor reported progress for {} s, so the call was cancelled",
                timeout.as_secs_f32()
            ),
            ServiceError::TransportClosed => format!(
                "the MCP server `{server}` stopped before `{tool}` answered; agentry is restarting it"
            ),
            error => format!("the MCP server `{server}` failed the call of `{tool}`: {error}"),
        }))
    }
}

/// A progress notification as the call's content so far.
fn progress_content(report: &ProgressNotificationParam) -> ToolProgress {
    let amount = match report.total {
        Some(total) => format!("{} of {}", report.progress, total),
        None => report.progress.to_string(),
    };
    let text = match &report.message {
        Some(message) => format!("Progress {amount}: {message}"),
        None => format!("Progress {amount}"),
    };
    ToolProgress::Content(vec![ToolContent::text(text)])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_prefixed_and_safe_for_model_apis() {
        assert_eq!(tool_name("everything", "echo"), "mcp__everything__echo");
        assert_eq!(
            tool_name("my server", "get.thing/2"),
            "mcp__my_server__get_thing_2"
        );
        // A server's name never holds the separator: a rule naming `gh` names no tool of `gh__x`.
        assert_eq!(tool_name("gh__x", "y"), "mcp__gh_x__y");
        assert_eq!(tool_prefix("a___b"), "mcp__a_b__");
        assert_eq!(tool_prefix("gh_"), "mcp__gh__");
    }

    #[test]
    fn a_name_too_long_for_model_apis_is_cut_and_kept_apart_by_a_digest() {
        let long = "x".repeat(10_011);
        let name = tool_name("srv", &long);
        assert_eq!(name.len(), MAX_TOOL_NAME);
        assert!(name.starts_with("mcp__srv__xxx"));
        let other = tool_name("srv", &format!("{long}y"));
        assert_eq!(other.len(), MAX_TOOL_NAME);
        assert_ne!(name, other);
        assert_eq!(name, tool_name("srv", &long), "the same from run to run");
    }

    #[test]
    fn colliding_names_keep_the_first_tool() {
        let tool = |name: &str| {
            rmcp::model::Tool::new(
                name.to_owned(),
                "",
                std::sync::Arc::new(rmcp::model::JsonObject::new()),
            )
        };
        let kept = distinct("s", &[tool("get.thing"), tool("get_thing"), tool("other")]);
        let names: Vec<&str> = kept.iter().map(|t| t.name.as_ref()).collect();
        assert_eq!(names, ["get.thing", "other"]);
    }

    /// Answers every question with option `choice` (none: declines), recording the questions.
    struct Choosing(Option<usize>, std::sync::Mutex<Vec<String>>);

    impl agentry::tool::AskUser for Choosing {
        fn ask(
            &self,
            _call: &ToolContext,
            questions: Vec<agentry::question::Question>,
        ) -> BoxFuture<'static, Result<agentry::tool::UserAnswer, ToolError>> {
            self.1
                .lock()
                .unwrap()
                .extend(questions.into_iter().map(|q| q.question));
            let answer = match self.0 {
                Some(choice) => agentry::tool::UserAnswer::Answered(agentry::question::Answers {
                    selections: [("0".to_owned(), vec![choice])].into(),
                    ..Default::default()
                }),
                None => agentry::tool::UserAnswer::Declined,
            };
            Box::pin(async move { Ok(answer) })
        }
    }

    #[tokio::test]
    async fn the_browser_opens_for_a_login_only_when_the_user_says_so_having_seen_where() {
        let url = "https://auth.test/authorize?x=1";
        let nobody = ToolContext::standalone(std::env::temp_dir());
        assert!(!user_opens("srv", url, &nobody).await, "nobody to ask");
        for (choice, opens) in [(Some(0), true), (Some(1), false), (None, false)] {
            let asker = Arc::new(Choosing(choice, std::sync::Mutex::default()));
            let mut ctx = ToolContext::standalone(std::env::temp_dir());
            ctx.host.ask_user = Some(asker.clone());
            assert_eq!(user_opens("srv", url, &ctx).await, opens, "{choice:?}");
            let asked = asker.1.lock().unwrap().clone();
            assert!(
                asked[0].contains(url) && asked[0].contains("`srv`"),
                "{asked:?}"
            );
        }
    }

    #[test]
    fn a_servers_hints_make_it_ask_more_never_less_unless_trusted() {
        let mut hints = ToolAnnotations::default();
        assert_eq!(kind(None, false), ToolKind::Other);
        assert_eq!(kind(Some(&hints), false), ToolKind::Other);
        hints.read_only_hint = Some(true);
        assert_eq!(kind(Some(&hints), false), ToolKind::Other, "untrusted");
        assert_eq!(kind(Some(&hints), true), ToolKind::Read);
        hints.destructive_hint = Some(true);
        assert_eq!(kind(Some(&hints), true), ToolKind::Delete);
        assert_eq!(kind(Some(&hints), false), ToolKind::Delete);
    }
}
