//! The terminal's own slash commands; every other `/name` is one of the agent's (a prompt
//! template, an MCP server's prompt, a skill).

/// A command of the terminal's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Builtin {
    /// `/help`: the commands and keys.
    Help,
    /// `/clear`: a new session, the conversation forgotten.
    Clear,
    /// `/model [NAME]`: show or switch the model.
    Model,
    /// `/mode [MODE]`: show or switch the permission mode.
    Mode,
    /// `/sandbox [MODE]`: show or switch the sandbox commands run in.
    Sandbox,
    /// `/sessions`: the stored sessions.
    Sessions,
    /// `/resume [ID]`: take up a stored session.
    Resume,
    /// `/compact [INSTRUCTIONS]`: replace the conversation by a summary.
    Compact,
    /// `/cost`: what the session's model requests used and cost, by model.
    Cost,
    /// `/rewind`: go back to before a message (Esc twice too).
    Rewind,
    /// `/tools`: the tools and their providers.
    Tools,
    /// `/mcp`: the MCP servers, their tools and prompts.
    Mcp,
    /// `/plugin …`: Claude Code plugins and their marketplaces.
    Plugin,
    /// `/exit`: leave.
    Exit,
}

impl Builtin {
    /// Every command, in the order `/help` lists them.
    pub const ALL: [Builtin; 14] = [
        Builtin::Help,
        Builtin::Clear,
        Builtin::Model,
        Builtin::Mode,
        Builtin::Sandbox,
        Builtin::Sessions,
        Builtin::Resume,
        Builtin::Compact,
        Builtin::Cost,
        Builtin::Rewind,
        Builtin::Tools,
        Builtin::Mcp,
        Builtin::Plugin,
        Builtin::Exit,
    ];

    /// Its name, without the slash.
    pub fn name(self) -> &'static str {
        match self {
            Builtin::Help => "help",
            Builtin::Clear => "clear",
            Builtin::Model => "model",
            Builtin::Mode => "mode",
            Builtin::Sandbox => "sandbox",
            Builtin::Sessions => "sessions",
            Builtin::Resume => "resume",
            Builtin::Compact => "compact",
            Builtin::Cost => "cost",
            Builtin::Rewind => "rewind",
            Builtin::Tools => "tools",
            Builtin::Mcp => "mcp",
            Builtin::Plugin => "plugin",
            Builtin::Exit => "exit",
        }
    }

    /// What it does.
    pub fn description(self) -> &'static str {
        match self {
            Builtin::Help => "the commands and keys",
            Builtin::Clear => "start a new session (the conversation is forgotten)",
            Builtin::Model => "show the model, or switch: /model NAME",
            Builtin::Mode => "show the permission modes, or switch: /mode NAME",
            Builtin::Sandbox => "show the sandbox modes for commands, or switch: /sandbox NAME",
            Builtin::Sessions => "the stored sessions of this folder",
            Builtin::Resume => "take up a stored session: /resume [ID]",
            Builtin::Compact => "summarise the conversation: /compact [what to keep]",
            Builtin::Cost => "what the session's model requests used and cost, by model",
            Builtin::Rewind => "go back to before a message: files, conversation (esc esc)",
            Builtin::Tools => "the tools the agent has, by provider",
            Builtin::Mcp => "the MCP servers and their tools; /mcp login NAME logs in",
            Builtin::Plugin => "Claude Code plugins: install, enable, disable, marketplaces",
            Builtin::Exit => "leave (Ctrl-D does too)",
        }
    }

    /// The command `text` runs, and the rest of the line.
    pub fn parse(text: &str) -> Option<(Builtin, &str)> {
        let invocation = text.trim().strip_prefix('/')?;
        let (name, rest) = invocation
            .split_once(char::is_whitespace)
            .unwrap_or((invocation, ""));
        let name = if name == "quit" { "exit" } else { name };
        Builtin::ALL
            .into_iter()
            .find(|command| command.name() == name)
            .map(|command| (command, rest.trim()))
    }
}

/// The keys `/help` lists.
pub const KEYS: &[(&str, &str)] = &[
    ("enter", "send (while the agent works: queue the message)"),
    ("alt-enter", "a new line (ctrl-j, or \\ then enter, too)"),
    ("↑ / ↓", "earlier messages"),
    ("tab", "complete a /command or an @path"),
    ("@path", "attach a file"),
    (
        "!command",
        "run a shell command; its output goes with your next message",
    ),
    ("shift-tab", "next permission mode"),
    (
        "ctrl-c, esc",
        "interrupt the agent (ctrl-c twice on an empty prompt: leave)",
    ),
    ("ctrl-d", "leave"),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_are_read_with_their_arguments() {
        assert_eq!(
            Builtin::parse("/model  openai/gpt-4.1 "),
            Some((Builtin::Model, "openai/gpt-4.1"))
        );
        assert_eq!(Builtin::parse("/quit"), Some((Builtin::Exit, "")));
        assert_eq!(Builtin::parse("/review src"), None);
        assert_eq!(Builtin::parse("hello"), None);
    }
}
