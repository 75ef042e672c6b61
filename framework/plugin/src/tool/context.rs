//! [`ToolContext`]: everything a running tool may use from its session and front-end, with the
//! [`HostServices`] it carries (those that act for the call itself take the context in turn).

use crate::ids::{SessionId, ToolCallId};
use crate::plan::PlanEntry;
use crate::question::Question;
use crate::sync::lock;
use crate::tool::ToolError;
use crate::tool::content::{ToolCallLocation, ToolContent};
use crate::tool::hooks::{ToolHookEvent, ToolHookReply};
use crate::tool::host::{RequestRules, SideQuestions, SubAgentReport, SubAgentTask, UserAnswer};
use futures::future::BoxFuture;
use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use tokio_util::sync::CancellationToken;

/// What the agent running a call offers its tool, when it offers it (outside a chat, nothing).
#[derive(Clone, Default)]
pub struct HostServices {
    /// Side questions to the session's model (WebFetch applies its prompt to a page).
    pub side_questions: Option<Arc<dyn SideQuestions>>,
    /// Sub-agents run through the agent's own loop (the Agent tool).
    pub sub_agents: Option<Arc<dyn SubAgentRunner>>,
    /// Questions to the user, when the front-end can ask (AskUserQuestion).
    pub ask_user: Option<Arc<dyn AskUser>>,
    /// The session's permission rules, for what a tool is asked to do beyond its call (an MCP
    /// server asking to use the session's model).
    pub request_rules: Option<Arc<dyn RequestRules>>,
    /// The session's hooks, for events inside a call (a task created, an MCP server's
    /// question).
    pub hooks: Option<Arc<dyn ToolHooks>>,
}

impl std::fmt::Debug for HostServices {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostServices")
            .field("side_questions", &self.side_questions.is_some())
            .field("sub_agents", &self.sub_agents.is_some())
            .field("ask_user", &self.ask_user.is_some())
            .field("request_rules", &self.request_rules.is_some())
            .field("hooks", &self.hooks.is_some())
            .finish()
    }
}

/// Runs sub-agents through the agent's own loop: each works on its task with its own
/// conversation and the agent's tools, and its events reach the user nested under the calling
/// tool call (`parent_fork_tool_call_id`).
pub trait SubAgentRunner: Send + Sync {
    /// Runs `task` for the call `call` belongs to and waits for its report. Cancelling the call
    /// cancels it ([`ToolError::Cancelled`]); a sub-agent that asks the user a question the
    /// front-end answers later pauses the chat ([`ToolError::AwaitingAnswer`]: end the call with
    /// it, and the call runs again, resuming the sub-agent, when the chat resumes). Other
    /// failures are messages for the model.
    fn run(
        &self,
        call: &ToolContext,
        task: SubAgentTask,
    ) -> BoxFuture<'static, Result<SubAgentReport, ToolError>>;
}

/// The session's hooks, as a tool reaches them.
pub trait ToolHooks: Send + Sync {
    /// Runs the hooks of `event`, which happened in the call `call` belongs to.
    fn report(&self, call: &ToolContext, event: ToolHookEvent)
    -> BoxFuture<'static, ToolHookReply>;
}

/// Asks the user questions through the front-end (the `AskUserQuestion` tool): its menu, an
/// editor's form, a web page's question flow.
pub trait AskUser: Send + Sync {
    /// Asks `questions` for the call `call` belongs to. Cancelling the call stops waiting
    /// ([`ToolError::Cancelled`]); a front-end that answers later pauses the chat
    /// ([`ToolError::AwaitingAnswer`]: end the call with it; it runs again when the chat resumes
    /// with the answer, and asking again then returns it).
    fn ask(
        &self,
        call: &ToolContext,
        questions: Vec<Question>,
    ) -> BoxFuture<'static, Result<UserAnswer, ToolError>>;
}

/// What the front-end's client does for tools, when it offers it (ACP: an editor's files).
/// Tools that find a service here use it instead of doing the work themselves.
#[derive(Clone, Default)]
pub struct ClientServices {
    /// Files as the client sees them: when set, the file tools read and write through it (an
    /// editor then sees every change, and reads see its unsaved buffers).
    pub files: Option<Arc<dyn ClientFiles>>,
    /// Terminals the client runs and shows: when set, Bash runs its commands in them.
    pub terminals: Option<Arc<dyn ClientTerminals>>,
}

impl std::fmt::Debug for ClientServices {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientServices")
            .field("files", &self.files.is_some())
            .field("terminals", &self.terminals.is_some())
            .finish()
    }
}

/// Text files as the front-end's client holds them (ACP's `fs/read_text_file` and
/// `fs/write_text_file`). Errors are messages for the model.
pub trait ClientFiles: Send + Sync {
    /// The whole text of a file.
    fn read_text_file(&self, path: PathBuf) -> BoxFuture<'static, Result<String, String>>;
    /// Replaces (or creates) a file with `text`.
    fn write_text_file(
        &self,
        path: PathBuf,
        text: String,
    ) -> BoxFuture<'static, Result<(), String>>;
}

/// A command to run in a client terminal.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TerminalCommand {
    /// The program.
    pub command: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Its working directory (absolute).
    pub cwd: PathBuf,
    /// The most output the client keeps (it drops the oldest beyond that).
    pub output_byte_limit: Option<u64>,
}

/// How a client terminal's command ended.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TerminalExit {
    /// Its exit code, when it exited.
    pub exit_code: Option<i32>,
    /// The signal that ended it, when one did.
    pub signal: Option<String>,
}

/// Terminals the front-end's client runs and shows (ACP's `terminal/*`). Errors are messages for
/// the model. Every terminal created must be released.
pub trait ClientTerminals: Send + Sync {
    /// Starts a command in a new terminal; returns the terminal's id.
    fn create(&self, command: TerminalCommand) -> BoxFuture<'static, Result<String, String>>;
    /// The terminal's output so far.
    fn output(&self, terminal_id: String) -> BoxFuture<'static, Result<String, String>>;
    /// Waits for the command to end.
    fn wait_for_exit(
        &self,
        terminal_id: String,
    ) -> BoxFuture<'static, Result<TerminalExit, String>>;
    /// Stops the command (the terminal stays, for its output).
    fn kill(&self, terminal_id: String) -> BoxFuture<'static, Result<(), String>>;
    /// Frees the terminal.
    fn release(&self, terminal_id: String) -> BoxFuture<'static, Result<(), String>>;
}

/// A progress report from a running tool. The executor turns each into a tool-call update.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ToolProgress {
    /// Replaces the call's content so far (ACP updates carry the whole content list).
    Content(Vec<ToolContent>),
    /// Replaces the locations the call touches.
    Locations(Vec<ToolCallLocation>),
    /// The agent's plan changed (from a planning tool).
    Plan(Vec<PlanEntry>),
    /// Replaces the call's raw output so far: figures a front-end may show as progress (Bash
    /// reports `{"output_lines": …, "output_bytes": …}`).
    RawOutput(serde_json::Value),
    /// Something the user should know that is not part of the call's result (Bash running
    /// unsandboxed on a kernel without Landlock); the front-ends show it as a notice.
    Notice(String),
}

/// Where a tool sends its [`ToolProgress`]; cheap to clone.
#[derive(Clone)]
pub struct ProgressSink {
    send: Arc<dyn Fn(ToolProgress) + Send + Sync>,
}

impl ProgressSink {
    /// A sink that hands each report to `send`.
    pub fn new(send: impl Fn(ToolProgress) + Send + Sync + 'static) -> Self {
        Self {
            send: Arc::new(send),
        }
    }

    /// A sink that drops every report.
    pub fn discard() -> Self {
        Self::new(|_| {})
    }

    /// Reports progress.
    pub fn report(&self, progress: ToolProgress) {
        (self.send)(progress);
    }
}

impl std::fmt::Debug for ProgressSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ProgressSink")
    }
}

/// Per-session state that providers keep between calls (a shell's working directory, which files
/// were read, …), one value per type; the session's temporary folder; and the notices waiting
/// for the model's next request. Lives as long as the session.
#[derive(Clone, Default)]
pub struct SessionState {
    values: Arc<Mutex<HashMap<TypeId, Arc<dyn Any + Send + Sync>>>>,
    temp_dir: Arc<TempFolder>,
    notices: Notices,
}

impl SessionState {
    /// A session state whose temporary folder is `folder`, which someone else made and removes
    /// (a plugin's side of a session the host owns).
    pub fn with_temp_dir(folder: PathBuf) -> Self {
        Self {
            temp_dir: Arc::new(TempFolder::Given(folder)),
            ..Self::default()
        }
    }

    /// The session's temporary folder, made on first use and removed with the session. Tools
    /// keep what the model may read later there (a long command's whole output); the
    /// executor lets calls touch it as if it were one of the session's workspace roots. The
    /// path is canonical (its links resolved when it was made).
    pub fn temp_dir(&self) -> std::io::Result<PathBuf> {
        self.temp_dir.path()
    }

    /// The session's temporary folder if it has been made.
    pub fn existing_temp_dir(&self) -> Option<PathBuf> {
        self.temp_dir.existing()
    }

    /// The session's environment file: shell lines (`export NAME=value`) each of the
    /// session's commands takes up before it runs — what a `SessionStart` hook writes to
    /// `$CLAUDE_ENV_FILE`. In the session's temporary folder (made on first use).
    pub fn env_file(&self) -> std::io::Result<PathBuf> {
        Ok(self.temp_dir()?.join("session-env.sh"))
    }

    /// Notices for the model, delivered with its next request.
    pub fn notices(&self) -> &Notices {
        &self.notices
    }

    /// The folder the tool `tool_name` works in now, when it keeps one of its own (Bash, after
    /// a `cd`): its calls are prepared there, so that the paths its permission is judged by are
    /// the paths it uses.
    pub fn tool_folder(&self, tool_name: &str) -> Option<PathBuf> {
        lock(&self.get_or_init(ToolFolders::default).0)
            .get(tool_name)
            .cloned()
    }

    /// Records that the tool `tool_name` works in `folder` now.
    pub fn set_tool_folder(&self, tool_name: &str, folder: PathBuf) {
        lock(&self.get_or_init(ToolFolders::default).0).insert(tool_name.to_owned(), folder);
    }

    /// The session's value of type `T`, created with `init` the first time it is asked for.
    pub fn get_or_init<T: Any + Send + Sync>(&self, init: impl FnOnce() -> T) -> Arc<T> {
        let mut values = lock(&self.values);
        if let Some(Ok(value)) = values
            .get(&TypeId::of::<T>())
            .map(|existing| Arc::clone(existing).downcast::<T>())
        {
            return value;
        }
        let value = Arc::new(init());
        values.insert(TypeId::of::<T>(), value.clone());
        value
    }
}

/// The folders of a session's tools that keep one of their own, by tool name.
#[derive(Default)]
struct ToolFolders(Mutex<HashMap<String, PathBuf>>);

/// How sessions' temporary folders are named in the system's temporary folder: this, the
/// process id of the agent that made it, `-`, and a random part.
pub const TEMP_FOLDER_PREFIX: &str = "agentry-session-";

/// A session's temporary folder.
enum TempFolder {
    /// Made on first use (a failed attempt is tried again next time), with its canonical
    /// path; removed when dropped.
    Owned(Mutex<Option<(tempfile::TempDir, PathBuf)>>),
    /// A folder someone else made and removes.
    Given(PathBuf),
}

impl Default for TempFolder {
    fn default() -> Self {
        Self::Owned(Mutex::new(None))
    }
}

impl TempFolder {
    fn path(&self) -> std::io::Result<PathBuf> {
        match self {
            Self::Given(folder) => Ok(folder.clone()),
            Self::Owned(made) => {
                let mut made = lock(made);
                if let Some((_, path)) = &*made {
                    return Ok(path.clone());
                }
                let dir = tempfile::Builder::new()
                    .prefix(&format!("{TEMP_FOLDER_PREFIX}{}-", std::process::id()))
                    .tempdir()?;
                // The user's alone, whatever the umask: tools keep outputs there.
                #[cfg(unix)]
                std::fs::set_permissions(
                    dir.path(),
                    std::os::unix::fs::PermissionsExt::from_mode(0o700),
                )?;
                // Resolved once here, not on every permission check that compares paths with it.
                let path = std::fs::canonicalize(dir.path())?;
                *made = Some((dir, path.clone()));
                Ok(path)
            }
        }
    }

    fn existing(&self) -> Option<PathBuf> {
        match self {
            Self::Given(folder) => Some(folder.clone()),
            Self::Owned(made) => lock(made).as_ref().map(|(_, path)| path.clone()),
        }
    }
}

/// Notices for the model, each under a key, delivered (and cleared) with the model's next
/// request: a background command that finished, say. A tool that tells the model the same thing
/// first withdraws the notice. Cheap to clone; every clone is the same queue.
#[derive(Clone, Default)]
pub struct Notices {
    pending: Arc<Mutex<Vec<(String, String)>>>,
}

impl Notices {
    /// Posts a notice, replacing one posted earlier under the same key.
    pub fn post(&self, key: impl Into<String>, text: impl Into<String>) {
        let (key, text) = (key.into(), text.into());
        let mut pending = lock(&self.pending);
        match pending.iter_mut().find(|(k, _)| *k == key) {
            Some(entry) => entry.1 = text,
            None => pending.push((key, text)),
        }
    }

    /// Withdraws the notice posted under `key`, if it is still waiting.
    pub fn withdraw(&self, key: &str) {
        lock(&self.pending).retain(|(k, _)| k != key);
    }

    /// Takes every waiting notice's text, oldest first.
    pub fn take(&self) -> Vec<String> {
        std::mem::take(&mut *lock(&self.pending))
            .into_iter()
            .map(|(_, text)| text)
            .collect()
    }
}

impl std::fmt::Debug for Notices {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Notices")
            .field("pending", &lock(&self.pending).len())
            .finish()
    }
}

impl std::fmt::Debug for SessionState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SessionState")
    }
}

/// Services the host offers tools for one call, one value per type (the framework's sub-agent
/// runner, say): a tool that knows the type asks for it; others never see it. Cheap to clone.
#[derive(Clone, Default)]
pub struct Extensions {
    values: HashMap<TypeId, Arc<dyn Any + Send + Sync>>,
}

impl Extensions {
    /// Offers `value` (replacing an earlier value of its type).
    pub fn insert<T: Any + Send + Sync>(&mut self, value: Arc<T>) {
        self.values.insert(TypeId::of::<T>(), value);
    }

    /// The value of type `T`, if the host offers one.
    pub fn get<T: Any + Send + Sync>(&self) -> Option<Arc<T>> {
        self.values
            .get(&TypeId::of::<T>())
            .and_then(|value| Arc::clone(value).downcast::<T>().ok())
    }
}

impl std::fmt::Debug for Extensions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Extensions")
            .field("values", &self.values.len())
            .finish()
    }
}

/// What a tool gets for one call.
#[derive(Debug, Clone)]
pub struct ToolContext {
    /// The session the call belongs to.
    pub session_id: SessionId,
    /// The call's id.
    pub tool_call_id: ToolCallId,
    /// The session's working directory (absolute).
    pub cwd: PathBuf,
    /// The directories the session may work in without asking (absolute; includes `cwd`).
    pub workspace_roots: Vec<PathBuf>,
    /// Cancelled when the turn is cancelled; a tool stops as soon as it can.
    pub cancel: CancellationToken,
    /// Where to report progress while running.
    pub progress: ProgressSink,
    /// What the front-end's client does for tools.
    pub client: ClientServices,
    /// What the agent running the call does for tools.
    pub host: HostServices,
    /// State the session keeps for providers.
    pub state: SessionState,
    /// Services the host offers for this call.
    pub extensions: Extensions,
}

impl ToolContext {
    /// A context for calling a tool outside any agent (in a tool's own unit tests, say).
    pub fn standalone(cwd: impl Into<PathBuf>) -> Self {
        let cwd = cwd.into();
        Self {
            session_id: SessionId::generate(),
            tool_call_id: ToolCallId::generate(),
            workspace_roots: vec![cwd.clone()],
            cwd,
            cancel: CancellationToken::new(),
            progress: ProgressSink::discard(),
            client: ClientServices::default(),
            host: HostServices::default(),
            state: SessionState::default(),
            extensions: Extensions::default(),
        }
    }

    /// Resolves a path the model gave against the session's working directory (`.`
    /// components dropped; `..` kept, since only the filesystem knows where it leads).
    pub fn resolve_path(&self, path: impl AsRef<Path>) -> PathBuf {
        self.cwd.join(path).components().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn session_state_keeps_one_value_per_type() {
        let state = SessionState::default();
        let first = state.get_or_init(|| AtomicUsize::new(1));
        first.fetch_add(1, Ordering::SeqCst);
        let again = state.get_or_init(|| AtomicUsize::new(100));
        assert_eq!(again.load(Ordering::SeqCst), 2);
        let other = state.get_or_init(|| String::from("x"));
        assert_eq!(other.as_str(), "x");
    }

    #[test]
    fn the_temp_folder_is_made_once_on_first_use_and_removed_with_the_session() {
        let state = SessionState::default();
        assert_eq!(state.existing_temp_dir(), None);
        let folder = state.temp_dir().unwrap();
        assert!(folder.is_dir());
        assert_eq!(std::fs::canonicalize(&folder).unwrap(), folder, "canonical");
        assert_eq!(state.clone().temp_dir().unwrap(), folder);
        assert_eq!(state.existing_temp_dir(), Some(folder.clone()));
        drop(state);
        assert!(!folder.exists());
    }

    #[test]
    fn notices_replace_by_key_can_be_withdrawn_and_are_taken_once_in_order() {
        let notices = Notices::default();
        notices.post("a", "first");
        notices.clone().post("b", "second");
        notices.post("a", "first, again");
        notices.post("c", "third");
        notices.withdraw("c");
        assert_eq!(notices.take(), ["first, again", "second"]);
        assert!(notices.take().is_empty());
    }

    #[test]
    fn relative_paths_resolve_against_cwd_and_absolute_ones_stay() {
        let ctx = ToolContext::standalone("/work/p");
        assert_eq!(
            ctx.resolve_path("src/a.rs"),
            PathBuf::from("/work/p/src/a.rs")
        );
        assert_eq!(ctx.resolve_path("/etc/x"), PathBuf::from("/etc/x"));
        assert_eq!(ctx.resolve_path("."), PathBuf::from("/work/p"));
        assert_eq!(
            ctx.resolve_path("./src/./a.rs"),
            PathBuf::from("/work/p/src/a.rs")
        );
    }
}
