//! Asking the user: the options a permission request offers, the answers, the "always" answers a
//! session remembers, and the front-end's [`PermissionHandler`].

use crate::event::ToolCallSnapshot;
pub use crate::event::permission::{PermissionOptionKind, PermissionOutcome};
use crate::ids::SessionId;
use crate::permission::{PermissionRule, RuleAction};
use crate::tool::DynTool;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::path::{Path, PathBuf};

/// The answers "always allow" / "always reject" a user gave in a session.
///
/// "Always allow" is for what the user was shown: for a tool with a pattern language of its
/// own, the rules that allow exactly that call (`Bash(git status:*)`, not every command); for
/// another tool, the tool as it was defined then (an MCP server that lists it anew, as
/// destructive say, is asked about again). A session resumed in another folder forgets them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RememberedAnswers {
    /// What the user always allows: rules as a user writes them (`Bash(git status:*)`,
    /// `Edit(./out.txt)`), or a tool's name.
    pub allowed: BTreeSet<String>,
    /// Tools the user always rejects.
    pub rejected: BTreeSet<String>,
    /// For each tool allowed by name, the digest of its definition when it was allowed.
    #[serde(default)]
    pub definitions: BTreeMap<String, String>,
    /// The folder the answers were given in.
    #[serde(default)]
    pub folder: Option<PathBuf>,
}

/// The call an answer was about, as "always" remembers it.
#[derive(Debug, Clone, Copy)]
pub struct AnsweredCall<'a> {
    /// The tool's name.
    pub tool_name: &'a str,
    /// For a tool with a pattern language of its own, the rules that allow exactly this call
    /// (none when part of it cannot be seen); `None` for other tools.
    pub rules: Option<&'a [String]>,
    /// The digest of the tool's definition (see [`definition_digest`]).
    pub definition: &'a str,
}

impl RememberedAnswers {
    /// Records an answer; the `*_once` kinds leave nothing to remember.
    pub fn remember(&mut self, call: AnsweredCall<'_>, answer: PermissionOptionKind) {
        let name = call.tool_name;
        match answer {
            PermissionOptionKind::AllowAlways => {
                self.rejected.remove(name);
                match call.rules {
                    Some(rules) => self.allowed.extend(rules.iter().cloned()),
                    None => {
                        self.allowed.insert(name.to_owned());
                        self.definitions
                            .insert(name.to_owned(), call.definition.to_owned());
                    }
                }
            }
            PermissionOptionKind::RejectAlways => {
                self.allowed.remove(name);
                self.definitions.remove(name);
                self.rejected.insert(name.to_owned());
            }
            PermissionOptionKind::AllowOnce | PermissionOptionKind::RejectOnce => {}
        }
    }

    /// Whether the user always allows the tool `tool_name` as it is defined now.
    pub fn allows_tool(&self, tool_name: &str, definition: &str) -> bool {
        self.allowed.contains(tool_name)
            && self
                .definitions
                .get(tool_name)
                .is_some_and(|allowed| allowed == definition)
    }

    /// The rules the user's "always allow" answers added.
    pub fn rules(&self) -> Vec<PermissionRule> {
        self.allowed
            .iter()
            .filter(|allowed| allowed.contains('('))
            .filter_map(|allowed| PermissionRule::parse(RuleAction::Allow, allowed).ok())
            .collect()
    }

    /// Keeps the answers for a session in `folder`: those given in another are forgotten.
    pub fn keep_for_folder(&mut self, folder: &Path) {
        if self.folder.as_deref().is_some_and(|given| given != folder) {
            *self = Self::default();
        }
        self.folder = Some(folder.to_path_buf());
    }
}

/// The digest of a tool's definition as the model and the user know it (its name, description,
/// kind and input schema): what an "always allow" of the tool by name is tied to.
pub fn definition_digest(tool: &dyn DynTool) -> String {
    let definition = serde_json::json!({
        "name": tool.name(),
        "description": tool.description(),
        "kind": tool.kind(),
        "input_schema": tool.input_schema(),
    });
    let digest = Sha256::digest(definition.to_string().as_bytes());
    digest.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// One option offered to the user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PermissionOption {
    /// The option's id.
    pub option_id: String,
    /// Its label.
    pub name: String,
    /// Its kind.
    pub kind: PermissionOptionKind,
}

impl PermissionOption {
    /// The four options offered for a call of `tool_name`, "always" being about the tool.
    pub fn standard_set(tool_name: &str) -> Vec<PermissionOption> {
        Self::offered(tool_name, Some(tool_name))
    }

    /// The options offered for a call of `tool_name` that "always allow" would allow as
    /// `always_allows` (a tool's name, or the rules that allow exactly the call); without one
    /// (part of the call no rule can see), it may be allowed once, not always.
    pub fn offered(tool_name: &str, always_allows: Option<&str>) -> Vec<PermissionOption> {
        let option = |kind: PermissionOptionKind, name: String| PermissionOption {
            option_id: kind.as_str().to_owned(),
            name,
            kind,
        };
        let mut options = vec![option(
            PermissionOptionKind::AllowOnce,
            "Allow once".to_owned(),
        )];
        if let Some(what) = always_allows {
            options.push(option(
                PermissionOptionKind::AllowAlways,
                format!("Always allow {what}"),
            ));
        }
        options.push(option(
            PermissionOptionKind::RejectOnce,
            "Reject".to_owned(),
        ));
        options.push(option(
            PermissionOptionKind::RejectAlways,
            format!("Always reject {tool_name}"),
        ));
        options
    }
}

/// A question to the user about one tool call.
#[derive(Debug, Clone, PartialEq)]
pub struct PermissionRequest {
    /// The session.
    pub session_id: SessionId,
    /// The call, as announced.
    pub tool_call: ToolCallSnapshot,
    /// The options offered.
    pub options: Vec<PermissionOption>,
    /// Rules that would allow exactly this call, as the user would write them
    /// (`Bash(git status:*)`, `Write(src/lib.rs)`): what a front-end that cannot ask suggests.
    pub allow_rules: Vec<String>,
    /// Why no rule can allow the call, when part of it cannot be seen (a command line the rules
    /// do not understand): a front-end that cannot ask says so.
    pub unseen: Option<String>,
}

/// The front-end's side of permissions: shows the question and returns the answer.
#[async_trait::async_trait]
pub trait PermissionHandler: Send + Sync {
    /// Asks the user. The executor stops waiting (and reports `Cancelled`) when the turn is cancelled.
    async fn request_permission(&self, request: PermissionRequest) -> PermissionOutcome;
}

/// A handler made from an async function of the request: see [`handler_fn`].
pub struct FnPermissionHandler<F>(F);

/// A permission handler from an async function, for front-ends that ask their own way (a
/// terminal prompt, a dialog, a policy of their own):
///
/// ```
/// use agentry::permission::{PermissionOptionKind, PermissionOutcome, handler_fn};
///
/// let allow_reads = handler_fn(|request| async move {
///     let kind = if request.tool_call.kind.is_read_only() {
///         PermissionOptionKind::AllowOnce
///     } else {
///         PermissionOptionKind::RejectOnce
///     };
///     PermissionOutcome::Selected { kind }
/// });
/// # let _: std::sync::Arc<dyn agentry::permission::PermissionHandler> = std::sync::Arc::new(allow_reads);
/// ```
pub fn handler_fn<F, Fut>(answer: F) -> FnPermissionHandler<F>
where
    F: Fn(PermissionRequest) -> Fut + Send + Sync,
    Fut: Future<Output = PermissionOutcome> + Send,
{
    FnPermissionHandler(answer)
}

#[async_trait::async_trait]
impl<F, Fut> PermissionHandler for FnPermissionHandler<F>
where
    F: Fn(PermissionRequest) -> Fut + Send + Sync,
    Fut: Future<Output = PermissionOutcome> + Send,
{
    async fn request_permission(&self, request: PermissionRequest) -> PermissionOutcome {
        (self.0)(request).await
    }
}

/// A handler for runs with nobody to ask: every question is [`PermissionOutcome::Unanswered`].
#[derive(Debug, Clone, Copy, Default)]
pub struct RejectWhenAsked;

#[async_trait::async_trait]
impl PermissionHandler for RejectWhenAsked {
    async fn request_permission(&self, _request: PermissionRequest) -> PermissionOutcome {
        PermissionOutcome::Unanswered
    }
}
