//! Permissions: the session's [`PermissionPolicy`] (mode + rules + remembered answers) decides
//! whether a call runs, is refused, or needs the user's answer through a [`PermissionHandler`].
//!
//! The order a decision is made in:
//! 1. a matching `deny` rule refuses;
//! 2. plan mode refuses every tool that is not read-only;
//! 3. a tool the user rejected "always" this session is refused;
//! 4. a call part of which no rule can see (a command line that does not parse, an `eval`)
//!    asks when a `deny` or `ask` rule with a pattern is about its tool;
//! 5. a matching `ask` rule, or a call that asks to leave its tool's confinement, asks;
//! 6. an `allow` rule without a pattern, or a tool the user allowed "always", runs, and so does
//!    a call each part of which (each location, each simple command) an `allow` rule matches;
//! 7. a call that touches a path outside the session's workspace roots asks (even a read),
//!    except in `bypass` mode;
//! 8. otherwise the mode decides: `bypass` runs everything; `accept_edits` runs read-only and
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
mod requests;
mod rule;

pub use agentry_plugin::tool::ReadDenials;
pub use answers::{
    FnPermissionHandler, PermissionHandler, PermissionOption, PermissionOptionKind,
    PermissionOutcome, PermissionRequest, RejectWhenAsked, RememberedAnswers, handler_fn,
};
pub use mode::PermissionMode;
pub use policy::{CallSubject, Decision, PermissionPolicy, allow_rules};
pub use requests::{REQUESTS, SessionRequestRules};
pub use rule::{PermissionError, PermissionRule, RuleAction, RuleOrigin, RuleTarget};
