//! Tools, permission handlers and a harness shared by the suite.

use agentry::AgentError;
use agentry::agent::{Agent, AgentConfig, ChatIo, ChatOptions, Session, SessionOptions};
use agentry::event::{AgentEvent, ChatSummary, ToolCallStatus};
use agentry::model::scripted::{ScriptedModel, ScriptedResponse};
use agentry::permission::{
    PermissionHandler, PermissionOptionKind, PermissionOutcome, PermissionPolicy, PermissionRequest,
};
use agentry::provider::SimpleProvider;
use agentry::tool::ContentBlock;
use agentry::tool::{
    DynTool, Tool, ToolCallLocation, ToolContent, ToolContext, ToolError, ToolKind, ToolOutput,
    ToolProgress, erase,
};
use schemars::JsonSchema;
use serde::Deserialize;
use std::collections::VecDeque;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};
use tokio_util::sync::CancellationToken;

/// Input of the test tools.
#[derive(Deserialize, JsonSchema)]
pub struct PathInput {
    /// A path.
    pub path: String,
    /// How long to take, in milliseconds.
    #[serde(default)]
    pub millis: u64,
}

/// A log of what tools did, shared with the test.
#[derive(Clone, Default)]
pub struct Log(Arc<Mutex<Vec<String>>>);

impl Log {
    pub fn push(&self, entry: impl Into<String>) {
        self.0.lock().unwrap().push(entry.into());
    }
    pub fn entries(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}

/// A tool of a chosen name and kind that logs `start PATH` / `end PATH` around a sleep, and
/// honours cancellation (logging `cancelled PATH`).
pub struct Probe {
    pub name: &'static str,
    pub kind: ToolKind,
    pub log: Log,
}

impl Tool for Probe {
    type Input = PathInput;
    type Output = ToolOutput;

    fn name(&self) -> &str {
        self.name
    }
    fn description(&self) -> String {
        format!("Test tool {} of kind {}.", self.name, self.kind)
    }
    fn kind(&self) -> ToolKind {
        self.kind
    }
    fn title(&self, input: &PathInput) -> String {
        format!("{} {}", self.name, input.path)
    }
    fn locations(&self, input: &PathInput, cwd: &Path) -> Vec<ToolCallLocation> {
        vec![ToolCallLocation::line(cwd.join(&input.path), 1)]
    }
    async fn call(&self, input: PathInput, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        self.log.push(format!("start {}", input.path));
        ctx.progress
            .report(ToolProgress::Content(vec![ToolContent::text("working")]));
        tokio::select! {
            () = tokio::time::sleep(Duration::from_millis(input.millis)) => {}
            () = ctx.cancel.cancelled() => {
                self.log.push(format!("cancelled {}", input.path));
                return Err(ToolError::Cancelled);
            }
        }
        self.log.push(format!("end {}", input.path));
        Ok(
            ToolOutput::text(format!("{} done with {}", self.name, input.path))
                .with_raw_output(serde_json::json!({"path": input.path})),
        )
    }
}

/// The standard test tools: `Look` (read), `Change` (edit), `Run` (execute).
pub fn probes(log: &Log) -> Vec<Arc<dyn DynTool>> {
    [
        ("Look", ToolKind::Read),
        ("Change", ToolKind::Edit),
        ("Run", ToolKind::Execute),
    ]
    .into_iter()
    .map(|(name, kind)| {
        erase(Probe {
            name,
            kind,
            log: log.clone(),
        })
    })
    .collect()
}

/// Answers permission questions from a queue and records them; with an empty queue it never
/// answers (until the turn is cancelled).
#[derive(Clone, Default)]
pub struct Answers {
    queue: Arc<Mutex<VecDeque<PermissionOptionKind>>>,
    pub asked: Arc<Mutex<Vec<PermissionRequest>>>,
}

impl Answers {
    pub fn with(answers: impl IntoIterator<Item = PermissionOptionKind>) -> Self {
        Self {
            queue: Arc::new(Mutex::new(answers.into_iter().collect())),
            asked: Arc::default(),
        }
    }
    pub fn asked_tools(&self) -> Vec<String> {
        self.asked
            .lock()
            .unwrap()
            .iter()
            .map(|r| r.tool_call.tool_name.clone())
            .collect()
    }
}

#[async_trait::async_trait]
impl PermissionHandler for Answers {
    async fn request_permission(&self, request: PermissionRequest) -> PermissionOutcome {
        self.asked.lock().unwrap().push(request);
        let next = self.queue.lock().unwrap().pop_front();
        match next {
            Some(kind) => PermissionOutcome::Selected { kind },
            None => std::future::pending().await,
        }
    }
}

/// An agent over a scripted model, with the probes, and a way to run chats and see events.
pub struct Harness {
    pub model: Arc<ScriptedModel>,
    pub agent: Agent,
    pub session: Session,
    pub log: Log,
    pub answers: Answers,
    pub cancel: CancellationToken,
    pub events: UnboundedReceiver<AgentEvent>,
    io: ChatIo,
    pub dir: tempfile::TempDir,
}

pub struct HarnessBuilder {
    responses: Vec<ScriptedResponse>,
    policy: PermissionPolicy,
    answers: Answers,
    config: AgentConfig,
    extra_tools: Vec<Arc<dyn DynTool>>,
    store: Option<Arc<dyn agentry::session::SessionStore>>,
    text_only: bool,
    hooks: Option<Arc<dyn agentry::hooks::AgentHooks>>,
    checkpoints: Option<agentry_checkpoint::CheckpointSettings>,
    instruction_files: bool,
    price: Option<agentry::cost::Price>,
}

impl HarnessBuilder {
    /// Gives the scripted model a price.
    pub fn price(mut self, price: agentry::cost::Price) -> Self {
        self.price = Some(price);
        self
    }

    /// Reads the stock agent's instruction files (`AGENTS.md`, `CLAUDE.md`).
    pub fn instruction_files(mut self) -> Self {
        self.instruction_files = true;
        self
    }
    pub fn hooks(mut self, hooks: Arc<dyn agentry::hooks::AgentHooks>) -> Self {
        self.hooks = Some(hooks);
        self
    }
    pub fn policy(mut self, policy: PermissionPolicy) -> Self {
        self.policy = policy;
        self
    }
    pub fn answers(mut self, answers: Answers) -> Self {
        self.answers = answers;
        self
    }
    pub fn config(mut self, config: AgentConfig) -> Self {
        self.config = config;
        self
    }
    pub fn tool(mut self, tool: Arc<dyn DynTool>) -> Self {
        self.extra_tools.push(tool);
        self
    }
    pub fn store(mut self, store: Arc<dyn agentry::session::SessionStore>) -> Self {
        self.store = Some(store);
        self
    }
    pub fn checkpoints(mut self, settings: agentry_checkpoint::CheckpointSettings) -> Self {
        self.checkpoints = Some(settings);
        self
    }
    /// A model that takes no images.
    pub fn text_only(mut self) -> Self {
        self.text_only = true;
        self
    }
    pub fn build(self) -> Harness {
        let log = Log::default();
        let mut provider = SimpleProvider::new("probes", "Test tools.");
        for tool in probes(&log).into_iter().chain(self.extra_tools) {
            provider = provider.with_dyn_tool(tool);
        }
        let mut model = ScriptedModel::new(self.responses);
        if let Some(price) = self.price {
            model = model.with_price(price);
        }
        let model = Arc::new(if self.text_only {
            model.without_images()
        } else {
            model
        });
        let mut builder = Agent::builder(model.clone())
            .provider(provider)
            .config(self.config);
        if let Some(store) = self.store {
            builder = builder.store(store);
        }
        if let Some(hooks) = self.hooks {
            builder = builder.hooks(hooks);
        }
        if let Some(settings) = self.checkpoints {
            builder = builder.checkpoints(agentry_checkpoint::Checkpoints::new(settings));
        }
        if self.instruction_files {
            builder = builder.instructions(agentry_stock::memory::InstructionFiles);
        }
        let agent = builder.build().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let mut options = SessionOptions::new(dir.path());
        options.policy = self.policy;
        let session = agent.new_session(options).unwrap();
        let (sender, events) = unbounded_channel();
        let cancel = CancellationToken::new();
        let io = ChatIo {
            events: Arc::new(sender),
            permissions: Arc::new(self.answers.clone()),
            cancel: cancel.clone(),
            questions: None,
        };
        Harness {
            model,
            agent,
            session,
            log,
            answers: self.answers,
            cancel,
            events,
            io,
            dir,
        }
    }
}

pub fn harness(responses: impl IntoIterator<Item = ScriptedResponse>) -> HarnessBuilder {
    HarnessBuilder {
        responses: responses.into_iter().collect(),
        policy: PermissionPolicy::default(),
        answers: Answers::default(),
        config: AgentConfig::default(),
        extra_tools: Vec::new(),
        store: None,
        text_only: false,
        hooks: None,
        checkpoints: None,
        instruction_files: false,
        price: None,
    }
}

impl Harness {
    pub async fn prompt(&mut self, text: &str) -> Result<ChatSummary, AgentError> {
        self.prompt_with(text, &ChatOptions::default()).await
    }

    pub async fn prompt_with(
        &mut self,
        text: &str,
        options: &ChatOptions,
    ) -> Result<ChatSummary, AgentError> {
        let content = vec![ContentBlock::Text { text: text.into() }];
        tokio::time::timeout(
            Duration::from_secs(20),
            self.session.prompt_with(content, options, &self.io),
        )
        .await
        .expect("the chat did not end within 20 s")
    }

    /// The events emitted so far (drained).
    pub fn events(&mut self) -> Vec<AgentEvent> {
        let mut out = Vec::new();
        while let Ok(event) = self.events.try_recv() {
            out.push(event);
        }
        out
    }

    pub fn io(&self) -> ChatIo {
        self.io.clone()
    }
}

/// The statuses each tool call went through, in order, from an event list.
pub fn statuses(events: &[AgentEvent], id: &str) -> Vec<ToolCallStatus> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolCall(s) if s.tool_call_id.as_str() == id => Some(s.status),
            AgentEvent::ToolCallUpdate(u) if u.tool_call_id.as_str() == id => u.status,
            _ => None,
        })
        .collect()
}

/// The final update of a call.
pub fn final_update(events: &[AgentEvent], id: &str) -> agentry::event::ToolCallUpdate {
    events
        .iter()
        .rev()
        .find_map(|e| match e {
            AgentEvent::ToolCallUpdate(u)
                if u.tool_call_id.as_str() == id && u.status.is_some_and(|s| s.is_final()) =>
            {
                Some(u.clone())
            }
            _ => None,
        })
        .expect("no final update")
}

/// The text of a final update's content.
pub fn update_text(update: &agentry::event::ToolCallUpdate) -> String {
    update
        .content
        .iter()
        .flatten()
        .filter_map(ToolContent::model_text)
        .collect::<Vec<_>>()
        .join("\n")
}

/// A scripted tool call with a fixed id.
pub fn call(id: &str, name: &str, args: serde_json::Value) -> agentry::model::scripted::ScriptStep {
    agentry::model::scripted::ScriptStep::ToolCall(agentry::model::scripted::ScriptedToolCall {
        id: Some(id.into()),
        name: name.into(),
        arguments: Some(args),
        raw_arguments: None,
    })
}

/// A response made of steps.
pub fn response(
    steps: impl IntoIterator<Item = agentry::model::scripted::ScriptStep>,
) -> ScriptedResponse {
    ScriptedResponse {
        events: steps.into_iter().collect(),
        ..ScriptedResponse::default()
    }
}

/// `response` reporting this usage.
pub fn with_usage(mut response: ScriptedResponse, input: u64, output: u64) -> ScriptedResponse {
    response.usage = Some(agentry::event::Usage {
        input_tokens: input,
        output_tokens: output,
        ..Default::default()
    });
    response
}

/// Whether two dollar amounts are the same to a millionth of a cent.
pub fn same_dollars(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-8
}

/// The tool results the model received in its `n`th request (0-based), as (id, is_error, text).
pub fn results_sent(model: &ScriptedModel, n: usize) -> Vec<(String, bool, String)> {
    let request = &model.requests()[n];
    match request.messages.last() {
        Some(agentry::model::Message::ToolResults { results }) => results
            .iter()
            .map(|r| (r.tool_call_id.to_string(), r.is_error, r.text()))
            .collect(),
        other => panic!("request {n} does not end with tool results: {other:?}"),
    }
}
