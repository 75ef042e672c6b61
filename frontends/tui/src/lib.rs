//! # agentry-tui
//!
//! agentry's interactive terminal: a chat drawn inline, in the terminal's own scrollback (no
//! alternate screen), so that after exit the whole exchange is still there to scroll and copy.
//! It is a projection of the agent's event stream ([`conversation`]) like every front-end.
//!
//! - Rendering: Markdown ([`markdown`]) with highlighted code ([`highlight`]), wrapped to the
//!   width ([`wrap`]); edits as coloured line diffs ([`diff`]); tool calls ([`calls`]); an
//!   answer as it streams ([`stream`]); the status line ([`status`]); on an inline
//!   [`screen`].
//! - Input: the editor ([`editor`]), its history ([`history`]), completion of commands and
//!   `@path`s ([`complete`]), `!command`s ([`shell`]), slash commands ([`commands`]).
//! - Questions: permission prompts and the model's questions as menus ([`menu`],
//!   [`overlay`]), asked by the chat through [`ask`].
//!
//! ```no_run
//! # async fn example(agent: agentry::agent::Agent) -> Result<(), agentry_tui::TuiError> {
//! let settings = agentry_tui::TuiSettings::new(std::env::current_dir()?);
//! agentry_tui::run(agent, settings).await
//! # }
//! ```

mod app;
pub mod ask;
pub mod calls;
pub mod commands;
pub mod complete;
pub mod conversation;
pub mod diff;
pub mod editor;
pub mod highlight;
pub mod history;
pub mod markdown;
pub mod menu;
pub mod overlay;
pub mod palette;
pub mod rewind;
pub mod screen;
pub mod shell;
pub mod status;
pub mod stream;
mod terminal;
pub mod wrap;

use agentry::agent::Agent;
use agentry::ids::SessionId;
use agentry::model::ModelChoices;
use agentry::permission::PermissionPolicy;
use agentry::tool::SandboxMode;
pub use palette::Palette;
use std::path::PathBuf;
use std::sync::Arc;

/// Which session the terminal opens.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Start {
    /// A new one.
    #[default]
    New,
    /// The most recent session of the folder (`--continue`).
    Continue,
    /// A stored session (`--resume ID`), or the user picks one (`--resume`).
    Resume(Option<SessionId>),
}

/// How the terminal runs.
pub struct TuiSettings {
    /// The session's folder.
    pub cwd: PathBuf,
    /// The permission policy sessions start with.
    pub policy: PermissionPolicy,
    /// Which session opens.
    pub start: Start,
    /// A first message, sent at once.
    pub first_message: Option<String>,
    /// The models `/model` offers.
    pub models: Option<Arc<dyn ModelChoices>>,
    /// The sandbox sessions' commands start in, which `/sandbox` changes (`None`: the agent's
    /// tools sandbox nothing, or on their own terms).
    pub sandbox: Option<SandboxMode>,
    /// Where the input history is kept (`None`: not kept).
    pub history_file: Option<PathBuf>,
    /// Colours or not.
    pub palette: Palette,
    /// The data folder, whose Claude Code plugins `/plugin` manages.
    pub data_folder: PathBuf,
}

impl TuiSettings {
    /// A new session in `cwd` with the default policy, the history in agentry's data folder,
    /// colours unless `NO_COLOR` or a dumb terminal says otherwise.
    pub fn new(cwd: PathBuf) -> Self {
        Self {
            cwd,
            policy: PermissionPolicy::default(),
            start: Start::New,
            first_message: None,
            models: None,
            sandbox: None,
            history_file: Some(history::History::default_file()),
            palette: Palette::from_environment(),
            data_folder: agentry_stock::data_folder(),
        }
    }
}

/// Why the terminal stopped.
#[derive(Debug, thiserror::Error)]
pub enum TuiError {
    /// The terminal could not be read or written.
    #[error("the terminal failed: {0}")]
    Terminal(#[from] std::io::Error),
    /// The agent could not open or resume a session.
    #[error(transparent)]
    Agent(#[from] agentry::AgentError),
}

/// Runs the interactive chat on this process's terminal until the user leaves.
pub async fn run(agent: Agent, settings: TuiSettings) -> Result<(), TuiError> {
    let _raw = terminal::RawMode::enter()?;
    let (width, height) = crossterm::terminal::size()?;
    let screen = screen::Screen::new(std::io::stdout(), width, height);
    let (events, event_receiver) = tokio::sync::mpsc::unbounded_channel();
    let (asked, asked_receiver) = tokio::sync::mpsc::unbounded_channel();
    let app = app::App::new(agent, settings, screen, events, ask::AskTheUser(asked));
    app.run(event_receiver, asked_receiver).await
}
