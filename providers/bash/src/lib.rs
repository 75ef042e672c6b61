//! # agentry-bash
//!
//! Shell tools: **Bash** runs a command under `bash -c` in a real pseudo-terminal
//! (portable-pty), in its own session and process group, so a timeout or a cancellation stops
//! the command and everything it started. The working directory persists between calls of a
//! session (a `cd` sticks); environment changes do not. Output streams to the front-end while
//! the command runs; the model gets it without terminal escapes, at most 30,000 characters (head
//! and tail, the whole output saved to a file in the session's temporary folder, which the model
//! may Read), ending with the exit code. **TaskOutput** (which waits by default) and
//! **TaskStop** manage commands run with `run_in_background`, which end with their session;
//! when one ends the model is told with its next request. They also answer to their earlier
//! names, `BashOutput` and `KillShell`. When the front-end's client runs
//! terminals (an ACP editor), foreground commands run in the client's terminal instead, which
//! the tool call embeds; timeouts and cancellation kill them there.
//!
//! On Linux the commands run **sandboxed** by default ([`SandboxSettings`]): Landlock lets them
//! write only in the session's workspace roots and the temporary folders, and a seccomp filter
//! keeps them off the network. A command the sandbox stopped says what was refused; the model
//! may then ask to run it outside the sandbox (`dangerouslyDisableSandbox`), which the user is
//! always asked about.
//!
//! ```
//! use agentry::prelude::*;
//! use agentry_bash::Shell;
//!
//! # let model = agentry::model::scripted::ScriptedModel::new([]);
//! let builder = Agent::builder(model).provider(Shell::default());
//! # let _ = builder;
//! ```

/// The Bash tool's name.
pub(crate) const NAME: &str = "Bash";

mod background;
mod bash;
mod client_terminal;
mod exit_code;
mod output;
mod process;
mod rules;
mod sandbox;
mod session;

pub use background::{TaskOutput, TaskStop};
pub use bash::Bash;
pub use sandbox::{SECTION, SandboxMode, SandboxSettings, WhenUnavailable};

use agentry_plugin::provider::Provider;
use agentry_plugin::settings::{Configured, Making, Recipe, Settings, made};
use agentry_plugin::tool::{DynTool, erase};
use std::sync::Arc;
use std::time::Duration;

/// Limits of the shell tools.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellConfig {
    /// The timeout when the model gives none.
    pub default_timeout: Duration,
    /// The longest timeout the model may ask for.
    pub max_timeout: Duration,
    /// The most characters of output the model gets (head and tail halves).
    pub max_output_chars: usize,
    /// How long a stopped command gets between SIGTERM and SIGKILL.
    pub kill_grace: Duration,
    /// The sandbox commands run in.
    pub sandbox: SandboxSettings,
}

impl Default for ShellConfig {
    fn default() -> Self {
        Self {
            default_timeout: Duration::from_millis(120_000),
            max_timeout: Duration::from_millis(600_000),
            max_output_chars: 30_000,
            kill_grace: Duration::from_millis(500),
            sandbox: SandboxSettings::default(),
        }
    }
}

/// The `bash` provider.
#[derive(Debug, Clone, Default)]
pub struct Shell {
    config: ShellConfig,
}

impl Shell {
    /// The provider with these limits.
    pub fn new(config: ShellConfig) -> Self {
        Self { config }
    }
}

impl Provider for Shell {
    fn name(&self) -> &str {
        "bash"
    }

    fn description(&self) -> String {
        "Run shell commands in a real terminal, in the foreground or the background.".to_owned()
    }

    fn tools(&self) -> Vec<Arc<dyn DynTool>> {
        vec![
            erase(Bash::new(self.config.clone())),
            erase(TaskOutput::new(self.config.clone())),
            erase(TaskStop),
        ]
    }
}

/// How the shell tools are made, linked or as a plugin: the default limits, in the sandbox
/// `sandbox` configures (a mode's name or a table); an unusable one leaves them out.
pub const RECIPE: Recipe = Recipe {
    name: "bash",
    sections: &[SECTION],
    make,
};

fn make(settings: Settings) -> Making {
    made(
        SandboxSettings::from_section(settings.section(SECTION)).map(|sandbox| {
            Configured::new(Shell::new(ShellConfig {
                sandbox,
                ..ShellConfig::default()
            }))
        }),
    )
}
