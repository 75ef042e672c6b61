//! The command line, as clap sees it.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;
use std::sync::LazyLock;

/// `agentry -V`: the binary's version, the commit it was built from and the plugin ABI it speaks.
fn version() -> &'static str {
    static VERSION: LazyLock<String> = LazyLock::new(|| {
        format!(
            "{} ({}, plugin ABI {})",
            env!("CARGO_PKG_VERSION"),
            env!("AGENTRY_COMMIT"),
            agentry_plugin_host::abi_version()
        )
    });
    &VERSION
}

/// `agentry --version`: the short version, then the providers linked into this build.
fn long_version() -> &'static str {
    static VERSION: LazyLock<String> = LazyLock::new(|| {
        let linked = crate::linked::linked_names();
        let linked = if linked.is_empty() {
            "none (the thin build: providers come as plugins)".to_owned()
        } else {
            linked.join(", ")
        };
        format!("{}\nproviders linked: {linked}", version())
    });
    &VERSION
}

const EXIT_CODES: &str = "\
Exit codes:
  0    the turn ended normally (end_turn)
  1    an internal error (the session store failed, …)
  2    a usage or configuration error (a model's credentials missing or refused included)
  3    the model failed
  4    the model hit its output token limit (max_tokens)
  5    the turn hit --max-turn-requests (max_turn_requests)
  6    the model refused (refusal)
  7    the answer did not satisfy --output-schema
  8    the next request would have gone past --max-budget-usd (max_budget)
  9    a hook said the agent must stop: continue: false (hook_stopped)
  69   the subcommand is not available in this build
  130  the turn was cancelled (SIGINT)";

/// agentry: a plugin-based coding agent. Without a subcommand, an interactive chat in this
/// folder (with piped input, `agentry run` on it).
#[derive(Debug, Parser)]
#[command(
    name = "agentry",
    version = version(),
    long_version = long_version(),
    about,
    after_help = EXIT_CODES,
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    /// What to do; nothing for the interactive chat.
    #[command(subcommand)]
    pub command: Option<Command>,
    /// The interactive chat's arguments.
    #[command(flatten)]
    pub chat: ChatArgs,
    /// Trust this folder's own settings for this run (its `.agentry/config.toml`, Claude Code's
    /// `.claude/settings.json`, `.mcp.json` and plugins), as `agentry trust` does for good.
    #[arg(long, global = true, env = "AGENTRY_TRUST", action = clap::ArgAction::SetTrue, value_parser = clap::builder::FalseyValueParser::new())]
    pub trust: bool,
}

/// Arguments of the interactive chat (`agentry [PROMPT]`).
#[derive(Debug, Args)]
pub struct ChatArgs {
    /// A first message, sent at once.
    pub prompt: Option<String>,
    /// Continue the most recent session of this folder.
    #[arg(long, short = 'c', conflicts_with = "resume")]
    pub r#continue: bool,
    /// Take up a stored session: this one, or pick one from a list.
    #[arg(long, short = 'r', value_name = "ID", num_args = 0..=1, default_missing_value = "")]
    pub resume: Option<String>,
    /// The agent.
    #[command(flatten)]
    pub agent: AgentArgs,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run one prompt headlessly and print the answer.
    Run(Box<RunArgs>),
    /// List stored sessions.
    Sessions(SessionsArgs),
    /// Serve the agent over ACP on stdio (for Zed and other ACP clients).
    Acp(AcpArgs),
    /// Serve the chat protocol over WebSocket, and a REST API.
    Serve(ServeArgs),
    /// MCP: list, add and remove servers, or serve agentry's prompts over MCP.
    Mcp(McpArgs),
    /// List tool providers, where they come from, and their tools.
    #[command(visible_alias = "tools")]
    Providers(ProvidersArgs),
    /// List model providers, where each is reached, and whether its credentials are found
    /// (and where; never the credentials).
    Models(ModelsArgs),
    /// List the slash commands (`agentry run "/NAME ARGS"`): prompt templates and the prompts
    /// of the configured MCP servers.
    Commands(CommandsArgs),
    /// Show the permission mode and rules in force here, where each rule comes from, and the
    /// rules that can never match.
    Permissions(PermissionsArgs),
    /// Claude Code plugins: marketplaces that offer them, and the plugins installed (their
    /// commands, agents, skills, hooks and MCP servers). Native tool plugins: `agentry plugins`.
    Plugin(PluginArgs),
    /// Native tool plugins (shared libraries): install one from a crate, a crate's folder, a
    /// built library or an https URL; list, update and remove them; start a new one.
    Plugins(PluginsArgs),
    /// Print the completion script of a shell (bash, zsh, fish, powershell, elvish) for
    /// agentry: `agentry completions bash > ~/.local/share/bash-completion/completions/agentry`.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print agentry's manual page (roff): `agentry man > agentry.1`, or `agentry man | man -l -`.
    Man {
        /// Write the pages into this folder instead: `agentry.1` and one for each subcommand
        /// (`agentry-run.1`, …).
        #[arg(long, value_name = "DIR")]
        out_dir: Option<PathBuf>,
    },
    /// List the hooks in force here (Claude Code's settings files and agentry's own), each
    /// with the file it comes from, and what of them agentry does not know.
    Hooks(HooksArgs),
    /// Trust a folder's own settings as they are now: its permission mode and allow rules,
    /// hooks, MCP servers, plugins and model providers take effect there.
    Trust(TrustArgs),
    /// Stop trusting a folder's own settings.
    Untrust(TrustArgs),
}

/// Arguments of `agentry trust` and `agentry untrust`.
#[derive(Debug, Args)]
pub struct TrustArgs {
    /// The folder (this one without it).
    pub path: Option<PathBuf>,
}

/// Arguments of `agentry plugin`.
#[derive(Debug, Args)]
pub struct PluginArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: PluginCommand,
}

/// The `agentry plugin` subcommands.
#[derive(Debug, Subcommand)]
pub enum PluginCommand {
    /// The marketplaces plugins are installed from.
    Marketplace {
        /// What to do.
        #[command(subcommand)]
        command: MarketplaceCommand,
    },
    /// Install a plugin: `agentry plugin install NAME@MARKETPLACE`. What it brings is shown
    /// first; one that runs code (hooks, MCP servers) is asked about, or needs `--yes`.
    Install {
        /// `NAME@MARKETPLACE`.
        plugin: String,
        /// Install it without asking, though it runs code.
        #[arg(long, short = 'y')]
        yes: bool,
    },
    /// Uninstall a plugin (its copy goes).
    #[command(visible_alias = "remove")]
    Uninstall {
        /// `NAME@MARKETPLACE`.
        plugin: String,
    },
    /// Turn an installed plugin on.
    Enable {
        /// `NAME@MARKETPLACE`.
        plugin: String,
    },
    /// Turn an installed plugin off (it stays installed).
    Disable {
        /// `NAME@MARKETPLACE`.
        plugin: String,
    },
    /// List the installed plugins, whether each is on, and what it brings.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

/// Arguments of `agentry plugins`.
#[derive(Debug, Args)]
pub struct PluginsArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: PluginsCommand,
}

/// The `agentry plugins` subcommands.
#[derive(Debug, Subcommand)]
pub enum PluginsCommand {
    /// Install a tool plugin: from a crate of the registry (built with your cargo), a crate's
    /// folder, a built library, or an https URL of a built library with its `--sha256`. One of
    /// another plugin ABI is refused before any of its code runs.
    Install {
        /// A crate's name, a path (a crate's folder or a library: start it with ./ or /), or
        /// an https URL.
        source: String,
        /// The crate's version (`0.2.1`: exactly; `^0.2`: a requirement), from the registry.
        #[arg(long)]
        version: Option<String>,
        /// The SHA-256 of the library at the URL, as its publisher gives it (required for a URL).
        #[arg(long, value_name = "HEX")]
        sha256: Option<String>,
        /// Build without optimisations (faster to build; slower tools).
        #[arg(long)]
        debug: bool,
        /// Build a crate with its own `Cargo.lock` as it is.
        #[arg(long)]
        locked: bool,
    },
    /// List the installed tool plugins: version, source, ABI, and whether the file is still the
    /// one installed.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Build or fetch installed plugins again from their sources (every one, without names).
    Update {
        /// The plugins' names.
        names: Vec<String>,
    },
    /// Uninstall a tool plugin.
    #[command(visible_alias = "rm", visible_alias = "uninstall")]
    Remove {
        /// Its name.
        name: String,
    },
    /// Write a new plugin crate (one tool and its test) that builds, tests and installs as it is.
    New {
        /// The crate's name.
        name: String,
        /// The folder to write it into (`./NAME` without it).
        #[arg(long)]
        path: Option<PathBuf>,
    },
}

/// The `agentry plugin marketplace` subcommands.
#[derive(Debug, Subcommand)]
pub enum MarketplaceCommand {
    /// Add a marketplace: a folder holding `.claude-plugin/marketplace.json`, a git
    /// repository's URL (`#REF` for a branch or tag), or GitHub's `OWNER/REPO` (`@REF`).
    Add {
        /// Where it is.
        source: String,
    },
    /// List the marketplaces and their plugins.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Bring a cloned marketplace up to date (every one, without a name).
    Update {
        /// Its name.
        name: Option<String>,
    },
    /// Remove a marketplace, and uninstall the plugins installed from it.
    #[command(visible_alias = "rm")]
    Remove {
        /// Its name.
        name: String,
    },
}

/// Arguments of `agentry hooks`.
#[derive(Debug, Args)]
pub struct HooksArgs {
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `agentry permissions`.
#[derive(Debug, Args)]
pub struct PermissionsArgs {
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
    /// The agent (its flags count as they would for a run).
    #[command(flatten)]
    pub agent: AgentArgs,
}

/// Arguments of `agentry commands`.
#[derive(Debug, Args)]
pub struct CommandsArgs {
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
    /// Load a tool plugin (a shared library) too, with its slash commands; repeatable.
    #[arg(long, value_name = "PATH")]
    pub plugin: Vec<std::path::PathBuf>,
}

/// The output formats of `agentry run`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// The answer as plain text.
    Text,
    /// One JSON object: result, stop reason, session id, usage, duration.
    Json,
    /// One JSON event per line, as they happen.
    StreamJson,
}

/// What every front-end's agent is made of: its model, tools and permissions.
#[derive(Debug, Args)]
pub struct AgentArgs {
    /// The model: PROVIDER/MODEL (openai/gpt-4.1, anthropic/claude-sonnet-4-5, ollama/qwen3, …),
    /// scripted:PATH or replay:FILE (a recording). Overrides the config's `model`.
    #[arg(long, short = 'm')]
    pub model: Option<String>,
    /// The most model requests a turn may make.
    #[arg(long, value_name = "N")]
    pub max_turn_requests: Option<u32>,
    /// The most a session may spend on model requests, in US dollars (its sub-agents' and its
    /// earlier chats' included): a turn whose next request would go past it ends with
    /// max_budget, its answer so far kept. The model needs a price (`agentry models` shows
    /// them). Overrides the config's `[limits] max_budget_usd`.
    #[arg(long, value_name = "USD", visible_alias = "max-budget-usd-per-session")]
    pub max_budget_usd: Option<f64>,
    /// The permission mode: default, accept_edits, plan or bypass.
    #[arg(long, value_name = "MODE")]
    pub permission_mode: Option<String>,
    /// Allow calls without asking: `Tool`, `Tool(pattern)`, `kind:KIND` or `*`. File tools take
    /// paths (`Edit(src/**)` from this folder, `Read(//etc/**)` from the root, `Read(~/x)` from
    /// home), Bash commands (`Bash(git status:*)`, `Bash(npm run * --silent)`), WebFetch domains
    /// (`WebFetch(domain:docs.rs)`); repeatable. `agentry permissions` shows the rules in force.
    #[arg(long, value_name = "RULE")]
    pub allow: Vec<String>,
    /// Deny calls (same forms as --allow; `Read(…)` covers Grep and Glob too, `Edit(…)` every
    /// tool that edits files); repeatable.
    #[arg(long, value_name = "RULE")]
    pub deny: Vec<String>,
    /// Load a tool plugin (a shared library); repeatable.
    #[arg(long, value_name = "PATH")]
    pub plugin: Vec<std::path::PathBuf>,
    /// How Bash commands are sandboxed: workspace-write (the default: writes only in the
    /// workspace and the temporary folder, no network), read-only or off. Overrides the
    /// config's `sandbox` mode.
    #[arg(long, value_name = "MODE", value_parser = ["workspace-write", "read-only", "off"])]
    pub sandbox: Option<String>,
    /// Where sessions are kept.
    #[command(flatten)]
    pub store: StoreArgs,
}

/// Where sessions are kept.
#[derive(Debug, Clone, Default, Args)]
pub struct StoreArgs {
    /// The session store: a PostgreSQL database (`postgres://USER[:PASSWORD]@HOST:PORT/DB`,
    /// which several `agentry serve` instances share; its tables are made on first use) or an
    /// SQLite file. Default: `[serve] store` for `agentry serve`, else `sessions.db` in the
    /// data folder.
    #[arg(long = "store", env = "AGENTRY_STORE", value_name = "URL|FILE")]
    pub location: Option<String>,
}

/// Arguments of `agentry run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The prompt; `-` or nothing reads it from standard input.
    pub prompt: Option<String>,
    /// The agent.
    #[command(flatten)]
    pub agent: AgentArgs,
    /// How to print the outcome.
    #[arg(long, value_enum, default_value = "text")]
    pub output_format: OutputFormat,
    /// A JSON Schema file the answer must satisfy.
    #[arg(long, value_name = "FILE")]
    pub output_schema: Option<PathBuf>,
    /// Continue the session with this id.
    #[arg(long, value_name = "ID")]
    pub resume: Option<String>,
    /// Rewind a session instead of running a prompt: to just before its chat CHAT (the id of
    /// the chat's user turn, as `/messages` and `--output-format stream-json` show it), or
    /// before its last chat. Prints what changed.
    #[arg(long, value_name = "SESSION[:CHAT]", conflicts_with_all = ["resume", "prompt"])]
    pub rewind: Option<String>,
    /// What `--rewind` puts back.
    #[arg(long, value_enum, default_value = "both", requires = "rewind")]
    pub rewind_scope: RewindWhat,
    /// Let `--rewind` overwrite files changed by hand since the agent's last change (by
    /// default they are kept, and listed).
    #[arg(long, requires = "rewind")]
    pub overwrite_hand_edits: bool,
    /// The working directory of the session.
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// Answers to the model's questions (AskUserQuestion), in order, as a JSON list; without
    /// it a headless run does not offer the tool.
    #[arg(long, value_name = "FILE")]
    pub answers: Option<PathBuf>,
    /// Record the model's requests and responses to this file (JSON lines, secrets redacted),
    /// to play back offline with `--model replay:FILE`.
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
}

/// What `agentry run --rewind` puts back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum RewindWhat {
    /// The files and the conversation.
    Both,
    /// The files only.
    Files,
    /// The conversation only.
    Conversation,
}

/// Arguments of `agentry mcp`.
#[derive(Debug, Args)]
pub struct McpArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: McpCommand,
}

/// The `agentry mcp` subcommands.
#[derive(Debug, Subcommand)]
pub enum McpCommand {
    /// List the configured servers, whether they start, and their tools and prompts.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// Load a tool plugin (a shared library) too (the MCP client, in a thin agentry);
        /// repeatable.
        #[arg(long, value_name = "PATH")]
        plugin: Vec<std::path::PathBuf>,
    },
    /// Add a server: `agentry mcp add NAME -- COMMAND ARGS…`, or `agentry mcp add NAME --url URL`.
    Add(McpAddArgs),
    /// Remove a server from the configuration.
    Remove {
        /// The server's name.
        name: String,
        /// Which configuration file.
        #[arg(long, value_enum, default_value = "project")]
        scope: ConfigScope,
    },
    /// Log in to a server behind OAuth: opens the authorization page (with `$BROWSER`, else the
    /// system's opener; the address is printed too) and keeps the tokens it gives.
    Login {
        /// The server's name.
        name: String,
        /// Load a tool plugin (a shared library) too (the MCP client, in a thin agentry);
        /// repeatable.
        #[arg(long, value_name = "PATH")]
        plugin: Vec<std::path::PathBuf>,
    },
    /// Forget the tokens of a server logged in to.
    Logout {
        /// The server's name.
        name: String,
        /// Load a tool plugin (a shared library) too (the MCP client, in a thin agentry);
        /// repeatable.
        #[arg(long, value_name = "PATH")]
        plugin: Vec<std::path::PathBuf>,
    },
    /// Serve agentry's prompt templates (and the agent, as the tool `agentry_run`) over MCP,
    /// on stdio or, with `--listen`, streamable HTTP.
    Serve(McpServeArgs),
}

/// Arguments of `agentry mcp serve`.
#[derive(Debug, Args)]
pub struct McpServeArgs {
    /// Serve streamable HTTP at http://ADDRESS/mcp instead of stdio (`127.0.0.1:8765`; port 0
    /// picks a free one); the endpoint is printed on stdout.
    #[arg(long, value_name = "ADDRESS")]
    pub listen: Option<String>,
    /// Who may connect to `--listen` (stdio needs no token).
    #[command(flatten)]
    pub access: AccessArgs,
    /// How many prompts one `prompts/list` page holds.
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u16).range(1..))]
    pub page_size: u16,
    /// The agent `agentry_run` runs prompts with.
    #[command(flatten)]
    pub agent: AgentArgs,
}

/// Arguments of `agentry mcp add`.
#[derive(Debug, Args)]
pub struct McpAddArgs {
    /// The server's name (its tools are `mcp__NAME__TOOL`).
    pub name: String,
    /// A streamable HTTP endpoint instead of a command.
    #[arg(long)]
    pub url: Option<String>,
    /// An HTTP header, `Name: value`; repeatable.
    #[arg(long = "header", value_name = "HEADER")]
    pub headers: Vec<String>,
    /// An environment variable for the command, `NAME=value`; repeatable.
    #[arg(long = "env", short = 'e', value_name = "NAME=VALUE")]
    pub env: Vec<String>,
    /// Which configuration file: the project's `.agentry/config.toml` or yours.
    #[arg(long, value_enum, default_value = "project")]
    pub scope: ConfigScope,
    /// The command and its arguments (after `--`).
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

/// Which configuration file a change goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ConfigScope {
    /// `.agentry/config.toml` in the project.
    Project,
    /// `~/.config/agentry/config.toml`.
    User,
}

/// Arguments of `agentry acp`.
#[derive(Debug, Args)]
pub struct AcpArgs {
    /// The agent.
    #[command(flatten)]
    pub agent: AgentArgs,
    /// How logs are written to standard error.
    #[arg(long, value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
    /// Record each session's model traffic to a file of its own in this folder
    /// (`SESSION_ID.jsonl`), to play back with `--model replay:FILE`.
    #[arg(long, value_name = "DIR")]
    pub record: Option<PathBuf>,
}

/// How logs are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// Lines for people.
    Text,
    /// One JSON object a line, with the fields of the spans it is in (a chat's `session_id`
    /// and `chat_id`), for log collectors.
    Json,
}

/// Arguments of `agentry serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The address to listen on.
    #[arg(long, default_value = "127.0.0.1:8787", value_name = "ADDR")]
    pub listen: std::net::SocketAddr,
    /// Who may connect.
    #[command(flatten)]
    pub access: AccessArgs,
    /// An origin (`http://host:port`) whose pages may use the server, besides its own;
    /// repeatable.
    #[arg(long, value_name = "ORIGIN")]
    pub allow_origin: Vec<String>,
    /// The largest request body or message, in bytes.
    #[arg(long, default_value_t = 8 * 1024 * 1024, value_name = "BYTES")]
    pub max_message_bytes: usize,
    /// The Redis server (`redis://host:port`) through which the instances sharing a PostgreSQL
    /// store (`--store`) share live events and control (`[serve] broker` in the
    /// configuration). Without it, events reach this instance's clients only.
    #[arg(long, env = "AGENTRY_BROKER", value_name = "URL")]
    pub broker: Option<String>,
    /// On SIGTERM or Ctrl-C, how long running chats may take to finish before they are
    /// stopped as interrupted (meanwhile `/readyz` answers 503 and new chats are refused with
    /// `draining`).
    #[arg(long, default_value_t = 30, value_name = "SECS")]
    pub drain_timeout: u64,
    /// Seconds a connection may stay silent before it sends its first byte (a request's
    /// headers); one silent both ways for 10 minutes is closed too.
    #[arg(long, default_value_t = 10, value_name = "SECS")]
    pub header_timeout: u64,
    /// How logs are written to standard error.
    #[arg(long, value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
    /// The most chats this server runs at once: one more gets `system:error` `busy` (503 over
    /// REST), never a queue. No limit by default.
    #[arg(long, value_name = "N")]
    pub max_running_chats: Option<usize>,
    /// The most messages a connection may send a second (a burst of as many): more get
    /// `system:error` `rate_limited` and are dropped; the connection stays. No limit by
    /// default.
    #[arg(long, value_name = "N")]
    pub max_messages_per_second: Option<u32>,
    /// The most sessions a token may have made and not deleted in this server (it has one
    /// token, so its clients share them): one more gets `system:error` `too_many_sessions`
    /// (429 over REST) until one is deleted. No limit by default.
    #[arg(long, value_name = "N")]
    pub max_sessions_per_token: Option<usize>,
    /// Serve `GET /metrics` (Prometheus) on this address too, without the token: an address
    /// only the monitoring reaches. `/metrics` on the main address needs the token.
    #[arg(long, value_name = "ADDR")]
    pub metrics_listen: Option<std::net::SocketAddr>,
    /// Record each session's model traffic to a file of its own in this folder
    /// (`SESSION_ID.jsonl`), to play back with `--model replay:FILE`.
    #[arg(long, value_name = "DIR")]
    pub record: Option<PathBuf>,
    /// The agent.
    #[command(flatten)]
    pub agent: AgentArgs,
}

/// Who may connect to a server agentry runs on a port (`agentry serve`, `agentry mcp serve
/// --listen`).
#[derive(Debug, Args)]
pub struct AccessArgs {
    /// The token clients must present. Without it, the one kept in the data folder
    /// (`server-token`, made on first use, readable by you alone) is used.
    #[arg(
        long,
        env = "AGENTRY_SERVE_TOKEN",
        value_name = "TOKEN",
        conflicts_with = "no_auth"
    )]
    pub token: Option<String>,
    /// Read the token from this file (its content, without surrounding whitespace), so that it
    /// is in no process's command line or environment: a systemd credential, say
    /// (`--token-file "${CREDENTIALS_DIRECTORY}/token"`).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["token", "no_auth"])]
    pub token_file: Option<PathBuf>,
    /// Let anyone who reaches the port in, without a token: refused on a non-loopback address;
    /// on loopback every local account can then drive the agent.
    #[arg(long)]
    pub no_auth: bool,
    /// A `Host` name the server answers to besides localhost, 127.0.0.1, [::1] and the
    /// listening address (the name it is reached by behind a proxy); repeatable.
    #[arg(long, value_name = "NAME")]
    pub allow_host: Vec<String>,
}

/// Arguments of `agentry models`.
#[derive(Debug, Args)]
pub struct ModelsArgs {
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
    /// List the models' prices instead (US dollars per million tokens): the configuration's,
    /// then the built-in table's, each with its source and date.
    #[arg(long)]
    pub prices: bool,
}

/// Arguments of `agentry providers`.
#[derive(Debug, Args)]
pub struct ProvidersArgs {
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
    /// Load a tool plugin (a shared library) too; repeatable.
    #[arg(long, value_name = "PATH")]
    pub plugin: Vec<std::path::PathBuf>,
}

/// Arguments of `agentry sessions`.
#[derive(Debug, Args)]
pub struct SessionsArgs {
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
    /// Where sessions are kept.
    #[command(flatten)]
    pub store: StoreArgs,
}
