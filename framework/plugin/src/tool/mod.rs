//! Tools: the typed [`Tool`] trait authors implement, and the object-safe [`DynTool`] form the
//! executor runs. [`erase`] turns the first into the second; that is the only boundary between them.

mod checked;
mod content;
mod context;
mod denials;
mod from_fn;
mod hooks;
mod host;
mod kind;
mod rules;
mod sandbox;

pub use checked::CheckedPaths;
pub use content::{
    ContentBlock, IntoToolOutput, ToolCallLocation, ToolContent, ToolOutput, cut_for_model,
    image_mime_type,
};
pub use context::{
    AskUser, ClientFiles, ClientServices, ClientTerminals, Extensions, HostServices, Notices,
    ProgressSink, SessionState, SubAgentRunner, TEMP_FOLDER_PREFIX, TerminalCommand, TerminalExit,
    ToolContext, ToolHooks, ToolProgress,
};
pub use denials::{PathMatcher, ReadDenials};
pub use from_fn::{FnTool, tool_fn};
pub use hooks::{
    ElicitationAnswer, HookElicitation, HookElicitationResult, HookTask, ToolHookEvent,
    ToolHookReply,
};
pub use host::{
    Ended, RequestDecision, RequestRules, SideAnswer, SideQuestion, SideQuestions, SubAgentReport,
    SubAgentTask, UserAnswer,
};
pub use kind::{ToolKind, UnknownToolKind};
pub use rules::{RulePatterns, RuleSubjects};
pub use sandbox::SandboxMode;

use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Why a tool call did not complete. The message is what the model reads, so it says what to do.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ToolError {
    /// The input does not fit the tool (beyond what its schema can say).
    #[error("invalid input: {0}")]
    InvalidInput(String),
    /// The tool ran and failed.
    #[error("{message}")]
    Failed {
        /// What went wrong, for the model and the user.
        message: String,
        /// Content produced before the failure (a command's output, say).
        output: Option<ToolOutput>,
    },
    /// The call was cancelled.
    #[error("cancelled by the user")]
    Cancelled,
    /// The call waits for the user's answer to a question, which comes later: the chat pauses
    /// and the call runs again, with the answer, when it resumes (see `agentry::question`).
    #[error("waiting for the user's answer")]
    AwaitingAnswer,
}

impl ToolError {
    /// A failure with a message.
    pub fn failed(message: impl Into<String>) -> Self {
        ToolError::Failed {
            message: message.into(),
            output: None,
        }
    }
}

/// A tool, written once by its author with typed input and output.
///
/// The input type's JSON Schema (from `schemars`) is what the model sees and what the executor
/// validates against; the executor moves every call through its statuses, asks permission and
/// reports content, so `call` only does the work.
///
/// ```
/// use agentry_plugin::tool::{Tool, ToolContext, ToolError, ToolKind};
/// use schemars::JsonSchema;
/// use serde::Deserialize;
///
/// /// Says hello.
/// struct Greet;
///
/// #[derive(Deserialize, JsonSchema)]
/// struct GreetInput {
///     /// Who to greet.
///     name: String,
/// }
///
/// impl Tool for Greet {
///     type Input = GreetInput;
///     type Output = String;
///     fn name(&self) -> &str { "Greet" }
///     fn description(&self) -> String { "Greets someone by name.".into() }
///     fn kind(&self) -> ToolKind { ToolKind::Other }
///     fn title(&self, input: &GreetInput) -> String { format!("Greet {}", input.name) }
///     async fn call(&self, input: GreetInput, _ctx: ToolContext) -> Result<String, ToolError> {
///         Ok(format!("Hello, {}!", input.name))
///     }
/// }
/// ```
pub trait Tool: Send + Sync + 'static {
    /// The input, deserialised from the model's arguments.
    type Input: DeserializeOwned + JsonSchema + Send + 'static;
    /// What a successful call returns.
    type Output: IntoToolOutput + Send + 'static;

    /// The name the model calls the tool by.
    fn name(&self) -> &str;
    /// What the tool does, for the model.
    fn description(&self) -> String;
    /// The tool's kind.
    fn kind(&self) -> ToolKind;
    /// Other names a call may use for the tool (an earlier version's name that models were
    /// trained on); they are accepted, never offered. None by default.
    fn aliases(&self) -> Vec<String> {
        Vec::new()
    }
    /// Whether a call needs a person to answer it (AskUserQuestion): such a tool is offered
    /// only in chats whose front-end can ask. No by default.
    fn needs_user(&self) -> bool {
        false
    }
    /// A human-readable title for one call ("Read src/main.rs"). Defaults to the tool's name.
    fn title(&self, input: &Self::Input) -> String {
        let _ = input;
        self.name().to_owned()
    }
    /// The files a call touches, absolute, resolved against the session's `cwd`.
    fn locations(&self, input: &Self::Input, cwd: &Path) -> Vec<ToolCallLocation> {
        let _ = (input, cwd);
        Vec::new()
    }
    /// What the patterns of this tool's permission rules (`Tool(pattern)`) mean; by default
    /// what its kind suggests ([`RulePatterns::for_kind`]). A tool that returns
    /// [`RulePatterns::Own`] implements [`rule_subjects`](Self::rule_subjects) and
    /// [`matches_rule`](Self::matches_rule).
    fn rule_patterns(&self) -> RulePatterns {
        RulePatterns::for_kind(self.kind())
    }
    /// Why a pattern of the tool's own language can never match a call (shown to the user at
    /// start-up); `Ok` when it can. Only asked of tools with [`RulePatterns::Own`].
    fn check_rule_pattern(&self, pattern: &str) -> Result<(), String> {
        let _ = pattern;
        Ok(())
    }
    /// What a call offers the tool's own rule patterns to match, part by part.
    fn rule_subjects(&self, input: &Self::Input) -> RuleSubjects {
        let _ = input;
        RuleSubjects::default()
    }
    /// Whether a pattern of the tool's own language matches one part of a call (one of its
    /// [`rule_subjects`](Self::rule_subjects)).
    fn matches_rule(&self, pattern: &str, subject: &str) -> bool {
        let _ = (pattern, subject);
        false
    }
    /// Why this call asks for more than the tool's usual confinement (Bash run outside its
    /// sandbox): such a call is put to the user whatever the permission rules and remembered
    /// answers say; only a deny rule or bypass mode decides it unasked. None by default.
    fn escalation(&self, input: &Self::Input) -> Option<String> {
        let _ = input;
        None
    }
    /// Runs the call.
    fn call(
        &self,
        input: Self::Input,
        ctx: ToolContext,
    ) -> impl Future<Output = Result<Self::Output, ToolError>> + Send;
}

/// The object-safe form of a tool: what the registry holds and the executor runs. Implement it
/// directly only for tools whose schema is not a Rust type (MCP tools, plugin tools).
pub trait DynTool: Send + Sync {
    /// The name the model calls the tool by.
    fn name(&self) -> &str;
    /// What the tool does, for the model.
    fn description(&self) -> String;
    /// The tool's kind.
    fn kind(&self) -> ToolKind;
    /// Other names a call may use for the tool; accepted, never offered. None by default.
    fn aliases(&self) -> Vec<String> {
        Vec::new()
    }
    /// Whether a call needs a person to answer it; see [`Tool::needs_user`].
    fn needs_user(&self) -> bool {
        false
    }
    /// What the patterns of the tool's permission rules mean; see [`Tool::rule_patterns`].
    fn rule_patterns(&self) -> RulePatterns {
        RulePatterns::for_kind(self.kind())
    }
    /// Why a pattern of the tool's own language can never match; see
    /// [`Tool::check_rule_pattern`].
    fn check_rule_pattern(&self, pattern: &str) -> Result<(), String> {
        let _ = pattern;
        Ok(())
    }
    /// The JSON Schema of the input.
    fn input_schema(&self) -> Value;
    /// Reads the (already schema-valid) input into a call ready to run.
    fn prepare(&self, input: Value, cwd: &Path) -> Result<Box<dyn PreparedCall>, ToolError>;
}

/// One call whose input has been read: it knows its title and locations, and runs once.
pub trait PreparedCall: Send {
    /// A human-readable title.
    fn title(&self) -> String;
    /// The files the call touches.
    fn locations(&self) -> Vec<ToolCallLocation>;
    /// What the call offers its tool's own rule patterns to match; see [`Tool::rule_subjects`].
    fn rule_subjects(&self) -> RuleSubjects {
        RuleSubjects::default()
    }
    /// Whether a pattern of the tool's own language matches one of the call's subjects.
    fn matches_rule(&self, pattern: &str, subject: &str) -> bool {
        let _ = (pattern, subject);
        false
    }
    /// Why the call asks for more than its tool's usual confinement; see [`Tool::escalation`].
    fn escalation(&self) -> Option<String> {
        None
    }
    /// Runs the call.
    fn run(self: Box<Self>, ctx: ToolContext) -> BoxFuture<'static, Result<ToolOutput, ToolError>>;
}

/// Turns a typed [`Tool`] into the shared [`DynTool`] form.
pub fn erase<T: Tool>(tool: T) -> Arc<dyn DynTool> {
    Arc::new(Erased(Arc::new(tool)))
}

/// The JSON Schema of a Rust input type, as sent to models.
pub fn schema_for<T: JsonSchema>() -> Value {
    let schema = schemars::generate::SchemaSettings::draft2020_12()
        .into_generator()
        .into_root_schema_for::<T>();
    let mut value = schema.to_value();
    if let Some(object) = value.as_object_mut() {
        // Model APIs want the bare object schema; the meta-schema URI and title are noise there.
        object.remove("$schema");
        object.remove("title");
    }
    value
}

struct Erased<T>(Arc<T>);

struct TypedCall<T: Tool> {
    tool: Arc<T>,
    input: T::Input,
    /// The folder the call was prepared in, where its locations were resolved: it runs there.
    cwd: PathBuf,
    title: String,
    locations: Vec<ToolCallLocation>,
    escalation: Option<String>,
    subjects: RuleSubjects,
}

impl<T: Tool> DynTool for Erased<T> {
    fn name(&self) -> &str {
        self.0.name()
    }

    fn description(&self) -> String {
        self.0.description()
    }

    fn kind(&self) -> ToolKind {
        self.0.kind()
    }

    fn aliases(&self) -> Vec<String> {
        self.0.aliases()
    }

    fn needs_user(&self) -> bool {
        self.0.needs_user()
    }

    fn rule_patterns(&self) -> RulePatterns {
        self.0.rule_patterns()
    }

    fn check_rule_pattern(&self, pattern: &str) -> Result<(), String> {
        self.0.check_rule_pattern(pattern)
    }

    fn input_schema(&self) -> Value {
        schema_for::<T::Input>()
    }

    fn prepare(&self, input: Value, cwd: &Path) -> Result<Box<dyn PreparedCall>, ToolError> {
        let input: T::Input =
            serde_json::from_value(input).map_err(|e| ToolError::InvalidInput(e.to_string()))?;
        Ok(Box::new(TypedCall {
            title: self.0.title(&input),
            locations: self.0.locations(&input, cwd),
            escalation: self.0.escalation(&input),
            subjects: self.0.rule_subjects(&input),
            tool: Arc::clone(&self.0),
            input,
            cwd: cwd.to_path_buf(),
        }))
    }
}

impl<T: Tool> PreparedCall for TypedCall<T> {
    fn title(&self) -> String {
        self.title.clone()
    }

    fn locations(&self) -> Vec<ToolCallLocation> {
        self.locations.clone()
    }

    fn rule_subjects(&self) -> RuleSubjects {
        self.subjects.clone()
    }

    fn matches_rule(&self, pattern: &str, subject: &str) -> bool {
        self.tool.matches_rule(pattern, subject)
    }

    fn escalation(&self) -> Option<String> {
        self.escalation.clone()
    }

    fn run(
        self: Box<Self>,
        mut ctx: ToolContext,
    ) -> BoxFuture<'static, Result<ToolOutput, ToolError>> {
        let TypedCall {
            tool, input, cwd, ..
        } = *self;
        ctx.cwd = cwd;
        Box::pin(async move {
            tool.call(input, ctx)
                .await
                .map(IntoToolOutput::into_tool_output)
        })
    }
}
