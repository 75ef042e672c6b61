//! The terminal's own slash commands, as the loop carries them out: help, a new session, the
//! model and the mode, stored sessions, compaction, and the tools and MCP servers.

use super::App;
use crate::commands::{Builtin, KEYS};
use crate::overlay::{model_picker, session_picker};
use crate::status::{dollars, tokens};
use agentry::hooks::{SessionEndReason, SessionSource};
use agentry::permission::PermissionMode;
use agentry::provider::{ProviderOrigin, ProviderStatus};
use agentry::tool::SandboxMode;
use ratatui::style::Color;
use ratatui::text::{Line, Span};
use tokio_util::sync::CancellationToken;

impl App {
    pub(super) async fn builtin(&mut self, command: Builtin, rest: &str) {
        match command {
            Builtin::Help => self.help(),
            Builtin::Exit => self.quit = true,
            Builtin::Clear => {
                self.end_session(SessionEndReason::Clear).await;
                match self.new_session() {
                    Ok(()) => {
                        if let Some(session) = self.session.as_mut() {
                            session.restart_as(SessionSource::Clear);
                        }
                        self.note_dim(
                            "── A new session starts: the conversation above is forgotten. ──",
                        )
                    }
                    Err(error) => self.note_error(&error.to_string()),
                }
            }
            Builtin::Model => self.model_command(rest),
            Builtin::Mode => self.mode_command(rest),
            Builtin::Sandbox => self.sandbox_command(rest),
            Builtin::Sessions => self.list_sessions(),
            Builtin::Resume if rest.is_empty() => self.pick_session(),
            Builtin::Resume => {
                self.end_session(SessionEndReason::Resume).await;
                if let Err(error) = self.resume(&rest.into()) {
                    self.note_error(&error.to_string());
                }
            }
            Builtin::Compact => self.compact(rest).await,
            Builtin::Plugin => self.plugin(rest).await,
            Builtin::Cost => self.cost(),
            Builtin::Rewind => self.pick_rewind(),
            Builtin::Tools => self.list_tools(false),
            Builtin::Mcp => match rest.strip_prefix("login") {
                Some(name) if !name.trim().is_empty() => self.mcp_login(name.trim()),
                _ => self.list_tools(true),
            },
        }
    }

    /// `/mcp login NAME`: this agentry's own `mcp login NAME`, run beside the chat (its
    /// address shown, the browser opened) with the plugins this chat loaded (the MCP client's,
    /// in a thin agentry); the server connects by itself once logged in.
    fn mcp_login(&mut self, name: &str) {
        if self.shell.is_some() {
            return self.note_error("A command is already running: wait for it, or Ctrl-C.");
        }
        let program = std::env::current_exe().map(|path| path.display().to_string());
        let mut plugins: Vec<String> = Vec::new();
        for info in self.agent.registry().providers() {
            if let ProviderOrigin::Plugin { path } = &info.origin {
                let path = path.display().to_string();
                if !plugins.contains(&path) {
                    plugins.push(path);
                }
            }
        }
        let words = [
            program.as_deref().unwrap_or("agentry"),
            "mcp",
            "login",
            name,
        ]
        .into_iter()
        .chain(plugins.iter().flat_map(|path| ["--plugin", path.as_str()]));
        let Ok(command) = shlex::try_join(words) else {
            return self.note_error(&format!("`{name}` is not a server's name"));
        };
        self.note_dim(&format!(
            "Logging in to MCP server `{name}`: the authorization page opens in the browser."
        ));
        self.run_shell(command, false);
    }

    fn help(&mut self) {
        let mut lines = vec![
            Line::default(),
            Line::from(Span::styled("Commands", self.palette.bold())),
        ];
        for command in Builtin::ALL {
            lines.push(self.listing(&format!("/{}", command.name()), command.description()));
        }
        for (name, command) in self.agent.slash_commands().iter() {
            let label = command
                .kind_label()
                .map(str::to_owned)
                .or_else(|| command.origin().map(|o| format!("MCP {o}")));
            let description = command.description().unwrap_or_default();
            let detail = match label {
                Some(label) => format!("({label}) {description}"),
                None => description,
            };
            lines.push(self.listing(&format!("/{name}"), &detail));
        }
        lines.push(Line::from(Span::styled("Keys", self.palette.bold())));
        for (key, meaning) in KEYS {
            lines.push(self.listing(key, meaning));
        }
        self.conversation.note(lines);
    }

    fn listing(&self, name: &str, detail: &str) -> Line<'static> {
        Line::from(vec![
            Span::styled(format!("  {name:<16}"), self.palette.paint(Color::Cyan)),
            Span::raw(" "),
            Span::styled(detail.to_owned(), self.palette.dim()),
        ])
    }

    fn model_command(&mut self, rest: &str) {
        let Some(session) = &self.session else { return };
        let current = session.model().name().to_owned();
        if !rest.is_empty() {
            return self.switch_model(rest);
        }
        match &self.settings.models {
            Some(models) if !models.offered().is_empty() => {
                self.overlay = Some(model_picker(models.offered(), &current, self.palette));
            }
            _ => self.note_dim(&format!(
                "The model is {current}. Switch with /model PROVIDER/MODEL."
            )),
        }
    }

    pub(super) fn switch_model(&mut self, spec: &str) {
        let Some(models) = &self.settings.models else {
            return self.note_error("This agent offers no other models.");
        };
        match models.open(spec) {
            Ok(model) => {
                if let Some(session) = &mut self.session {
                    session.set_model(model);
                }
                self.note_dim(&format!("The model is now {spec}."));
            }
            Err(error) => self.note_error(&format!("Cannot switch to {spec}: {error}")),
        }
    }

    fn mode_command(&mut self, rest: &str) {
        let Some(session) = &mut self.session else {
            return;
        };
        if rest.is_empty() {
            let current = session.options().policy.mode;
            let choices = PermissionMode::ALL
                .map(|mode| (mode.as_str(), mode.description(), mode == current));
            return self.list_choices(&choices, "Switch with /mode NAME or shift-tab.");
        }
        match rest.parse::<PermissionMode>() {
            Ok(mode) => {
                session.set_mode(mode);
                self.note_dim(&format!("Permission mode: {}.", mode.title()));
            }
            Err(error) => self.note_error(&error.to_string()),
        }
    }

    fn sandbox_command(&mut self, rest: &str) {
        let (Some(session), Some(default)) = (&mut self.session, self.settings.sandbox) else {
            return self.note_dim("This agent's commands have no sandbox to choose.");
        };
        if rest.is_empty() {
            let current = session.options().sandbox.unwrap_or(default);
            let choices =
                SandboxMode::ALL.map(|mode| (mode.as_str(), mode.description(), mode == current));
            return self.list_choices(&choices, "Switch with /sandbox NAME.");
        }
        match rest.parse::<SandboxMode>() {
            Ok(mode) => {
                session.set_sandbox(Some(mode));
                self.note_dim(&format!("Sandbox: {mode}."));
            }
            Err(error) => self.note_error(&error),
        }
    }

    /// A list of named choices with the current one marked, and how to switch.
    fn list_choices(&mut self, choices: &[(&str, &str, bool)], hint: &str) {
        let mut lines = vec![Line::default()];
        for (name, description, current) in choices {
            let mark = if *current { "●" } else { " " };
            lines.push(Line::from(vec![
                Span::styled(
                    format!("  {mark} {name:<15}"),
                    self.palette.paint(Color::Cyan),
                ),
                Span::styled((*description).to_owned(), self.palette.dim()),
            ]));
        }
        lines.push(Line::from(Span::styled(
            format!("  {hint}"),
            self.palette.dim(),
        )));
        self.conversation.note(lines);
    }

    fn sessions_here(&self) -> Vec<agentry::session::SessionMeta> {
        let Some(store) = self.agent.store() else {
            return Vec::new();
        };
        match store.list() {
            Ok(sessions) => sessions
                .into_iter()
                .filter(|m| m.cwd == self.settings.cwd)
                .collect(),
            Err(_) => Vec::new(),
        }
    }

    fn list_sessions(&mut self) {
        let sessions = self.sessions_here();
        if sessions.is_empty() {
            return self.note_dim("No stored session in this folder.");
        }
        let mut lines = vec![Line::default()];
        for meta in sessions.iter().take(20) {
            let title = meta
                .title
                .clone()
                .unwrap_or_else(|| "(untitled)".to_owned());
            lines.push(Line::from(vec![
                Span::styled(format!("  {} ", meta.id), self.palette.paint(Color::Cyan)),
                Span::raw(title),
                Span::styled(format!("  {}", meta.updated_at), self.palette.dim()),
            ]));
        }
        lines.push(Line::from(Span::styled(
            "  Take one up with /resume ID.",
            self.palette.dim(),
        )));
        self.conversation.note(lines);
    }

    pub(super) fn pick_session(&mut self) {
        let current = self.session.as_ref().map(|s| s.id().clone());
        let sessions: Vec<_> = self
            .sessions_here()
            .into_iter()
            .filter(|m| Some(&m.id) != current.as_ref())
            .take(9)
            .collect();
        if sessions.is_empty() {
            return self.note_dim("No stored session in this folder to resume.");
        }
        self.overlay = Some(session_picker(&sessions, self.palette));
    }

    /// `/compact [instructions]`: the conversation replaced by a summary, written following
    /// the instructions when given.
    async fn compact(&mut self, instructions: &str) {
        if self.session.is_none() {
            return;
        }
        self.conversation.note([Line::from(Span::styled(
            "  Compacting the conversation…",
            self.palette.dim(),
        ))]);
        let _ = self.draw();
        let Some(session) = &mut self.session else {
            return;
        };
        let instructions = Some(instructions).filter(|text| !text.trim().is_empty());
        match session
            .compact(instructions, &CancellationToken::new())
            .await
        {
            Ok(Some(compaction)) => self.note_dim(&compaction.describe()),
            Ok(None) => self.note_dim("Nothing to compact yet."),
            Err(error) => self.note_error(&format!("Compacting failed: {error}")),
        }
    }

    /// `/cost`: the session's requests by model, their tokens and cost, the total, and the
    /// budget when there is one.
    fn cost(&mut self) {
        let Some(session) = &self.session else { return };
        let spending = session.spending();
        if spending.is_empty() {
            return self.note_dim("No model request yet in this session.");
        }
        let mut lines = vec![Line::default()];
        for (model, spent) in spending.by_model() {
            let usage = spent.usage;
            let cost = spent
                .cost_usd
                .map_or_else(|| "unpriced".to_owned(), dollars);
            let requests = match spent.requests {
                1 => "1 request".to_owned(),
                n => format!("{n} requests"),
            };
            lines.push(self.listing(
                model,
                &format!(
                    "{cost} · {requests} · ↑ {} (cache read {}, written {}) ↓ {} tokens",
                    tokens(usage.input_tokens),
                    tokens(usage.cache_read_tokens),
                    tokens(usage.cache_write_tokens),
                    tokens(usage.output_tokens),
                ),
            ));
        }
        let total = spending
            .cost_usd()
            .map_or_else(|| "unknown".to_owned(), dollars);
        let mut summary = format!("  Total: {total}");
        let unpriced = spending.unpriced_models();
        if !unpriced.is_empty() && spending.cost_usd().is_some() {
            summary.push_str(&format!(
                " and the tokens of {}, which have no price",
                unpriced.join(", ")
            ));
        }
        if let Some(budget) = self.agent.config().max_budget_usd {
            summary.push_str(&format!(" · budget {}", dollars(budget)));
        }
        lines.push(Line::from(Span::styled(summary, self.palette.bold())));
        if !unpriced.is_empty() {
            lines.push(Line::from(Span::styled(
                "  A model without a price is counted in tokens only: give it one with \
                 [providers.NAME.models.\"MODEL\"] price = { input = …, output = … }."
                    .to_owned(),
                self.palette.dim(),
            )));
        }
        self.conversation.note(lines);
    }

    /// `/tools` lists every provider's tools; `/mcp` the MCP servers' (their tools are
    /// `mcp__SERVER__TOOL`) and prompts.
    fn list_tools(&mut self, mcp_only: bool) {
        let Some(session) = &self.session else { return };
        // As the providers are now: a server that came up since the session's tools were last
        // read (they are read again when a chat starts) shows its tools already.
        let current = session.registry();
        let registry = current
            .refreshed()
            .map_or_else(|| current.clone(), std::sync::Arc::new);
        let mut lines = vec![Line::default()];
        for (provider, status) in registry.provider_statuses() {
            let is_mcp = matches!(provider.origin, ProviderOrigin::McpServer { .. });
            if mcp_only && !is_mcp {
                continue;
            }
            // A server that is not ready says why (and how to log in, when it needs that).
            let state = match &status {
                ProviderStatus::Ready => format!("  {} tools", provider.tools.len()),
                other => format!("  {other}"),
            };
            lines.push(Line::from(vec![
                Span::styled(format!("  {}", provider.name), self.palette.bold()),
                Span::styled(state, self.palette.dim()),
            ]));
            if matches!(status, ProviderStatus::NeedsLogin { .. }) {
                lines.push(Line::from(Span::styled(
                    format!("    or here: /mcp login {}", provider.name),
                    self.palette.dim(),
                )));
            }
            if !provider.tools.is_empty() {
                let tools = provider.tools.join(", ");
                lines.push(Line::from(Span::styled(
                    format!("    {tools}"),
                    self.palette.dim(),
                )));
            }
        }
        if mcp_only {
            let prompts: Vec<String> = self
                .agent
                .slash_commands()
                .iter()
                .filter(|(_, command)| command.origin().is_some() && command.kind_label().is_none())
                .map(|(name, _)| format!("/{name}"))
                .collect();
            if !prompts.is_empty() {
                lines.push(Line::from(Span::styled(
                    format!("  prompts: {}", prompts.join(", ")),
                    self.palette.dim(),
                )));
            }
            if lines.len() == 1 {
                lines.push(Line::from(Span::styled(
                    "  No MCP server is connected (`agentry mcp list` says why a configured one is not).",
                    self.palette.dim(),
                )));
            }
        }
        self.conversation.note(lines);
    }
}
