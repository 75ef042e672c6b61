//! Permissions: the session's [`PermissionPolicy`] (mode + rules + remembered answers) decides
//! whether a call runs, is refused, or needs the user's answer through a [`PermissionHandler`].
//!
//! The order a decision is made in:
//! 1. a matching `deny` rule refuses (`Edit(…)` rules judge the files a command line's
//!    redirections write, too);
//! 2. plan mode refuses every tool that is not read-only;
//! 3. a tool the user rejected "always" this session is refused;
//! 4. a call part of which no rule can see (a command line that is not understood) asks when a
//!    `deny` or `ask` rule with a pattern is about its tool, and so does one a word of which
//!    such a rule matches where a program may run it (`setsid rm x`);
//! 5. a call that writes a protected file (the project's `.agentry/`, `.claude/`, `.mcp.json`,
//!    `.git/`, the shell's start-up files; see [`protected`](protected::protected)) asks,
//!    except in `bypass` mode;
//! 6. a matching `ask` rule, or a call that asks to leave its tool's confinement, asks;
//! 7. an `allow` rule without a pattern, or a tool the user allowed "always" as it is defined
//!    now, runs, and so does a call each part of which (each location, each simple command,
//!    each file written) an `allow` rule or an "always" answer matches;
//! 8. a call that touches a path outside the session's workspace roots asks (even a read),
//!    except in `bypass` mode;
//! 9. otherwise the mode decides: `bypass` runs everything; `accept_edits` runs read-only and
//!    file-editing kinds and asks for the rest; `default` runs read-only kinds and asks for the rest.
//!
//! Requests a tool receives during its call (an MCP server asking to use the model) are decided
//! by rules naming them, such as `Sampling(docs)` (see [`PermissionPolicy::decide_request`]).
//!
//! Rules name a tool, a kind or every tool; `Read(…)` and `Edit(…)` rules also apply to every
//! tool that reads or edits files. Path patterns are read as in Claude Code (see
//! [`path_pattern`]); other tools read their own patterns (`Bash(git status:*)`,
//! `WebFetch(domain:example.com)`).

mod answers;
pub mod lint;
mod mode;
pub mod path_pattern;
mod policy;
pub mod protected;
mod requests;
mod rule;

pub use answers::{
    AnsweredCall, FnPermissionHandler, PermissionHandler, PermissionOption, PermissionOptionKind,
    PermissionOutcome, PermissionRequest, RejectWhenAsked, RememberedAnswers, definition_digest,
    handler_fn,
};
pub use mode::PermissionMode;
pub use policy::{CallSubject, Decision, PermissionPolicy, allow_rules};
pub use requests::{REQUESTS, SessionRequestRules};
pub use rule::{PermissionError, PermissionRule, RuleAction, RuleOrigin, RuleTarget};
