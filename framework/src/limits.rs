//! The default limits of an agent's work ([`AgentConfig`](crate::agent::AgentConfig)), which
//! configuration compares with what a folder not trusted asks for: it may lower them, never
//! raise them.

/// The most model requests one chat makes by default.
pub const MAX_CHAT_REQUESTS: u32 = 100;

/// How deep sub-agents nest by default.
pub const MAX_FORK_DEPTH: u32 = 2;

/// The most tool calls one model answer makes by default.
pub const MAX_CALLS_PER_ANSWER: usize = 100;

/// How many times in a row `Stop` hooks may refuse a chat's stop: at the next refusal the
/// chat ends anyway (Claude Code's cap).
pub const STOP_HOOK_BLOCKS: u32 = 8;
