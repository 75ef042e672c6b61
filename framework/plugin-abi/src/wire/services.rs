//! ABI 1.1's messages: the host services a started call asks for (through `EVENT_REQUEST`,
//! answered through the table's `answer`), and the queries the host makes of a plugin (through
//! the table's `query`).

use agentry_plugin::question::Question;
use agentry_plugin::session_servers::ServerSpec;
use agentry_plugin::settings::Settings;
use agentry_plugin::tool::{SideQuestion, SubAgentTask, TerminalCommand, ToolHookEvent};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::PathBuf;

/// A host service a call may be offered (named in its request's `services`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Service {
    /// The front-end client's text files (ACP's `fs/*`): `read_text_file`, `write_text_file`.
    ClientFiles,
    /// The front-end client's terminals (ACP's `terminal/*`): `create_terminal`,
    /// `terminal_output`, `wait_for_terminal_exit`, `kill_terminal`, `release_terminal`.
    ClientTerminals,
    /// A side question to the session's model: `ask_model`.
    SideQuestions,
    /// A sub-agent run through the host's agent loop: `run_sub_agent`.
    SubAgents,
    /// Questions to the user through the front-end: `ask_user`.
    AskUser,
    /// The session's permission rules for requests a tool receives: `decide_request`.
    RequestRules,
    /// The session's hooks, for events inside a call: `hook_event`.
    Hooks,
    /// A service this SDK does not know (offered by a newer host); never used.
    #[serde(other)]
    Unknown,
}

/// A call's request for a host service: the payload of `EVENT_REQUEST`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServiceCall {
    /// The plugin's number for the request, unique within the call; the answer carries it.
    pub id: u64,
    /// What is asked.
    pub request: ServiceRequest,
}

/// What a call asks the host to do. The answer's value for each is named below.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ServiceRequest {
    /// A file's whole text, as the client holds it. Answer: the text.
    ReadTextFile {
        /// The file (absolute).
        path: PathBuf,
    },
    /// Replaces (or creates) a file through the client. Answer: `null`.
    WriteTextFile {
        /// The file (absolute).
        path: PathBuf,
        /// Its new text.
        text: String,
    },
    /// Starts a command in a new client terminal. Answer: the terminal's id.
    CreateTerminal(TerminalCommand),
    /// A client terminal's output so far. Answer: the text.
    TerminalOutput {
        /// The terminal.
        terminal_id: String,
    },
    /// Waits for a client terminal's command to end. Answer: `{"exit_code", "signal"}`.
    WaitForTerminalExit {
        /// The terminal.
        terminal_id: String,
    },
    /// Stops a client terminal's command. Answer: `null`.
    KillTerminal {
        /// The terminal.
        terminal_id: String,
    },
    /// Frees a client terminal. Answer: `null`.
    ReleaseTerminal {
        /// The terminal.
        terminal_id: String,
    },
    /// Asks the session's model (or the one the question names) one question, with no tools
    /// and no history. Answer: `{"text", "model", "usage"}`.
    AskModel(SideQuestion),
    /// Runs a sub-agent through the host's agent loop, its events nested under the call.
    /// Answer: an [`Ended`](agentry_plugin::tool::Ended) report: `{"done": {"answer", "stop_reason",
    /// "usage", "model_requests", "loop_id"}}`, `"cancelled"` or `"awaiting_answer"`.
    RunSubAgent(SubAgentTask),
    /// Asks the user questions through the front-end. Answer: an [`Ended`](agentry_plugin::tool::Ended)
    /// [`UserAnswer`](agentry_plugin::tool::UserAnswer): `{"done": {"answered": {"selections",
    /// "custom"}}}`, `{"done": "declined"}`, `"cancelled"` or `"awaiting_answer"`.
    AskUser {
        /// The questions (1–4).
        questions: Vec<Question>,
    },
    /// What the session's permission rules say of a request the tool received (`Sampling`
    /// from the MCP server `docs`). Answer: a [`RequestDecision`](agentry_plugin::tool::RequestDecision):
    /// `"allow"`, `{"deny": "why"}` or `"ask"`.
    DecideRequest {
        /// The request, as a rule names it.
        request: String,
        /// Who made it.
        subject: String,
    },
    /// Runs the session's hooks of an event inside the call (a task created, an MCP server's
    /// question). Answer: a [`ToolHookReply`](agentry_plugin::tool::ToolHookReply):
    /// `{"blocked": "why", "answer": {"action", "content"}}`, both optional.
    HookEvent(ToolHookEvent),
}

/// The host's answer to a [`ServiceCall`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ServiceAnswer {
    /// Done: the request's answer value.
    Ok(Value),
    /// Not done: why, as a message for the model.
    Error(String),
}

/// What the host asks a plugin outside a call's run (ABI 1.1's `query`). The answer's JSON for
/// each is named below; a query the plugin does not know gets an error (code 1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Query {
    /// Whether a pattern of a tool's own rule language matches one of a prepared call's rule
    /// subjects. Answer: `true` or `false`.
    MatchesRule {
        /// The prepared call's handle.
        call: u64,
        /// The rule's pattern.
        pattern: String,
        /// One of the call's subjects.
        subject: String,
    },
    /// Why a pattern of a tool's own rule language can never match. Answer: `null` when it
    /// can, else the reason.
    CheckRulePattern {
        /// The provider whose tool it is (0, the plugin's own, unless hosted).
        #[serde(default, skip_serializing_if = "super::is_own")]
        provider: u64,
        /// The tool.
        tool: String,
        /// The pattern.
        pattern: String,
    },
    /// The notices for the model the plugin's tools left in a session (a background command
    /// that finished), oldest first; taking them clears them. Answer: a list of texts.
    TakeNotices {
        /// The session.
        session_id: String,
    },
    /// Makes the provider anew from the configuration's sections it reads and the project.
    /// Answer: a [`ConfiguredDescription`](super::ConfiguredDescription); an error when the
    /// settings leave nothing usable (the plugin is then left out, with the error).
    Configure(Settings),
    /// A provider's slash commands as they are now. Answer: a list of
    /// [`CommandDescription`](super::CommandDescription)s.
    Commands {
        /// The provider (0, the plugin's own, unless hosted).
        #[serde(default, skip_serializing_if = "super::is_own")]
        provider: u64,
    },
    /// A slash command's content with its arguments filled in (it may wait: an MCP server's
    /// prompt). Answer: a list of content blocks; an error says why it cannot be had.
    CommandContent {
        /// The provider (0, the plugin's own, unless hosted).
        #[serde(default, skip_serializing_if = "super::is_own")]
        provider: u64,
        /// The command's name.
        name: String,
        /// Its origin, when it has one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        origin: Option<String>,
        /// Its arguments' values, by name.
        #[serde(default)]
        arguments: std::collections::BTreeMap<String, String>,
    },
    /// A provider as it is now (a hosted one, or the plugin's own with 0). Answer: a
    /// [`Description`](super::Description); an error for a handle the plugin does not hold.
    Describe {
        /// The provider.
        provider: u64,
    },
    /// How a changing provider stands. Answer: a [`ProviderState`](super::ProviderState).
    State {
        /// The provider.
        provider: u64,
    },
    /// Starts a server a client handed to a session, in the background, as a hosted provider
    /// (see [`Description::session_servers`](super::Description::session_servers)). Answer:
    /// the new provider's handle; an error says why the server cannot be used.
    ConnectServer {
        /// The server.
        server: ServerSpec,
        /// The session's working directory.
        cwd: PathBuf,
    },
    /// The host no longer uses a provider [`ConnectServer`](Query::ConnectServer) made: the
    /// plugin drops it (stopping its server). Answer: `null`.
    Release {
        /// The provider.
        provider: u64,
    },
    /// A session ended: the plugin drops what it kept for it (its state, its notices).
    /// Answer: `null`.
    EndSession {
        /// The session.
        session_id: String,
    },
    /// Logs the user in to what a provider reaches (see
    /// [`Provider::login`](agentry_plugin::provider::Provider::login)); blocks until the user is done
    /// in the browser. Answer: `null`; an error says why not.
    Login {
        /// The provider.
        provider: u64,
    },
    /// Forgets a provider's login. Answer: whether there was one.
    Logout {
        /// The provider.
        provider: u64,
    },
    /// Where the plugin's logs (its `tracing` events) go: where the host's own go, sent once
    /// the plugin is loaded. Answer: `null`.
    Logs(LogTarget),
}

/// Where and what a plugin logs (see [`Query::Logs`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogTarget {
    /// Which events, as a `tracing` filter (`warn`, `agentry_mcp=debug`, …).
    pub filter: String,
    /// The file the lines are appended to; standard error when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<PathBuf>,
}
