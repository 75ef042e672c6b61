//! Tool search: when a session's tools are many, the tools of MCP servers (and of providers
//! that [defer theirs](crate::provider::Provider::defers_tools)) are left out of its requests.
//! The model finds them with the `ToolSearch` tool (words or a regular expression), and the
//! tools it returns are sent from the next request on; the system prompt names each group of
//! tools left out, with how many it holds. It works with every model: the search runs here,
//! not on the provider's side.

mod matching;
mod tool;

pub use tool::{TOOL_SEARCH, ToolSearchProvider};

use crate::agent::compaction::estimate_tokens;
use crate::model::{AssistantContent, Message, ToolDefinition};
use crate::provider::{RegistryError, ToolRegistry};
use crate::sync::lock;
use crate::tool::SessionState;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::sync::Mutex;

/// When deferrable tools are left out of requests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolSearchMode {
    /// When their definitions would take more than the threshold's share of the model's
    /// context window (a model whose window is not known sends them all).
    #[default]
    Auto,
    /// Whenever there are any.
    Always,
    /// Never: every definition goes with every request.
    Never,
}

/// How an agent's sessions search their tools instead of sending them all.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ToolSearchSettings {
    /// When deferrable tools are left out.
    pub mode: ToolSearchMode,
    /// In `auto` mode, the share of the context window their definitions may take before
    /// they are left out (0.1: a tenth).
    pub threshold: f64,
}

impl Default for ToolSearchSettings {
    fn default() -> Self {
        Self {
            mode: ToolSearchMode::Auto,
            threshold: 0.1,
        }
    }
}

/// What a session's next request sends of its tools.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ToolPlan {
    /// The definitions sent: those always sent first, then the tools revealed since.
    pub sent: Vec<ToolDefinition>,
    /// How many of `sent` are always sent (what the system prompt lists, so that it stays the
    /// same as tools are revealed).
    pub listed: usize,
    /// The groups whose tools may be held back (an MCP server's name, a provider's) with how
    /// many tools each has; none when nothing is held back.
    pub deferred: Vec<(String, usize)>,
}

/// A session's deferred tools, for `ToolSearch` to search, and those it found.
#[derive(Default)]
pub(crate) struct DeferredTools(Mutex<Deferred>);

#[derive(Default)]
struct Deferred {
    /// Every deferrable tool's definition, when tools are being deferred.
    searchable: Vec<ToolDefinition>,
    /// The deferred tools a search returned or the model called, in the order they came:
    /// sent from then on, after the others (so that the start of the tools, which a model's
    /// prompt cache keeps, stays the same).
    revealed: Vec<String>,
}

impl Deferred {
    fn reveal(&mut self, name: &str) {
        if !self.revealed.iter().any(|known| known == name) {
            self.revealed.push(name.to_owned());
        }
    }
}

impl DeferredTools {
    /// The session's.
    pub(crate) fn of(state: &SessionState) -> std::sync::Arc<Self> {
        state.get_or_init(Self::default)
    }

    /// The tools `query` matches, at most `most`, each marked found (sent from the next request
    /// on); an error says why the query cannot be read.
    pub(crate) fn search(&self, query: &str, most: usize) -> Result<Vec<ToolDefinition>, String> {
        let mut deferred = lock(&self.0);
        let matches = matching::best(&deferred.searchable, query, most)?;
        for tool in &matches {
            deferred.reveal(&tool.name);
        }
        Ok(matches)
    }

    /// Whether any tool is deferred now.
    pub(crate) fn any(&self) -> bool {
        !lock(&self.0).searchable.is_empty()
    }
}

/// Registers `ToolSearch` in `registry` when it has tools that may be held back and tool search
/// is not off (and it is not there yet): an agent without such tools never sees it.
pub(crate) fn offer_search(
    registry: &mut ToolRegistry,
    settings: &ToolSearchSettings,
) -> Result<(), RegistryError> {
    let deferrable = registry
        .providers()
        .iter()
        .any(|provider| provider.deferrable);
    if settings.mode == ToolSearchMode::Never || !deferrable || registry.get(TOOL_SEARCH).is_some()
    {
        return Ok(());
    }
    registry.register(std::sync::Arc::new(ToolSearchProvider::provider()))
}

/// What the next request sends of `offered` (the registry's definitions, `ToolSearch`'s among
/// them when it is registered), given the deferrable `groups`, the model's `window` and the
/// conversation (a deferrable tool the model called already is sent, after a resume too).
pub(crate) fn plan(
    mut offered: Vec<ToolDefinition>,
    groups: &[(String, Vec<String>)],
    settings: &ToolSearchSettings,
    window: Option<u64>,
    conversation: &[&[Message]],
    state: &SessionState,
) -> ToolPlan {
    let deferred_tools = DeferredTools::of(state);
    let search = offered
        .iter()
        .position(|tool| tool.name == TOOL_SEARCH)
        .map(|at| offered.remove(at));
    let deferrable: BTreeSet<&str> = groups
        .iter()
        .flat_map(|(_, tools)| tools.iter().map(String::as_str))
        .collect();
    let searchable: Vec<ToolDefinition> = offered
        .iter()
        .filter(|tool| deferrable.contains(tool.name.as_str()))
        .cloned()
        .collect();
    let defer = !searchable.is_empty()
        && search.is_some()
        && match settings.mode {
            ToolSearchMode::Never => false,
            ToolSearchMode::Always => true,
            ToolSearchMode::Auto => window.is_some_and(|window| {
                estimate_tokens("", &[], &searchable) as f64 > settings.threshold * window as f64
            }),
        };
    let mut state = lock(&deferred_tools.0);
    if !defer {
        state.searchable.clear();
        return ToolPlan {
            listed: offered.len(),
            sent: offered,
            deferred: Vec::new(),
        };
    }
    for name in called(conversation) {
        if deferrable.contains(name.as_str()) {
            state.reveal(&name);
        }
    }
    state.searchable = searchable;
    let revealed = &state.revealed;
    let deferred = groups
        .iter()
        .map(|(group, tools)| (group.clone(), tools.len()))
        .collect();
    let (hidden, mut sent): (Vec<ToolDefinition>, Vec<ToolDefinition>) = offered
        .into_iter()
        .partition(|tool| deferrable.contains(tool.name.as_str()));
    sent.extend(search);
    let listed = sent.len();
    sent.extend(
        revealed
            .iter()
            .filter_map(|name| hidden.iter().find(|tool| &tool.name == name))
            .cloned(),
    );
    ToolPlan {
        sent,
        listed,
        deferred,
    }
}

/// The tools the conversation's answers called, in order.
fn called(conversation: &[&[Message]]) -> Vec<String> {
    conversation
        .iter()
        .flat_map(|messages| messages.iter())
        .filter_map(|message| match message {
            Message::Assistant { content, .. } => Some(content),
            _ => None,
        })
        .flatten()
        .filter_map(|content| match content {
            AssistantContent::ToolCall { name, .. } => Some(name.clone()),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn definition(name: &str, description: &str) -> ToolDefinition {
        ToolDefinition {
            name: name.to_owned(),
            description: description.to_owned(),
            input_schema: json!({"type": "object", "properties": {"x": {"type": "string", "description": "x".repeat(200)}}}),
        }
    }

    fn offered() -> Vec<ToolDefinition> {
        let mut tools = vec![
            definition("Read", "Reads a file."),
            definition(TOOL_SEARCH, "Finds tools."),
        ];
        tools.extend((0..30).map(|i| definition(&format!("mcp__gh__tool_{i}"), "A GitHub tool.")));
        tools
    }

    fn groups() -> Vec<(String, Vec<String>)> {
        vec![(
            "gh".to_owned(),
            (0..30).map(|i| format!("mcp__gh__tool_{i}")).collect(),
        )]
    }

    fn names(plan: &ToolPlan) -> Vec<&str> {
        plan.sent.iter().map(|tool| tool.name.as_str()).collect()
    }

    #[test]
    fn auto_defers_past_the_threshold_and_sends_what_was_found_or_called() {
        let state = SessionState::default();
        let settings = ToolSearchSettings::default();
        // 30 definitions of some 70 tokens: past a tenth of 10,000 tokens, not of 1,000,000.
        let roomy = plan(
            offered(),
            &groups(),
            &settings,
            Some(1_000_000),
            &[],
            &state,
        );
        assert_eq!(roomy.sent.len(), 31, "everything but ToolSearch");
        assert!(!names(&roomy).contains(&TOOL_SEARCH));
        assert!(roomy.deferred.is_empty());
        let unknown = plan(offered(), &groups(), &settings, None, &[], &state);
        assert_eq!(unknown.sent.len(), 31, "a window not known defers nothing");
        let tight = plan(offered(), &groups(), &settings, Some(10_000), &[], &state);
        assert_eq!(names(&tight), ["Read", TOOL_SEARCH]);
        assert!(DeferredTools::of(&state).any());
        assert_eq!(tight.deferred, [("gh".to_owned(), 30)]);
        let found = DeferredTools::of(&state).search("tool_7", 1).unwrap();
        assert_eq!(found[0].name, "mcp__gh__tool_7");
        let history = [Message::Assistant {
            content: vec![AssistantContent::ToolCall {
                id: "c1".into(),
                name: "mcp__gh__tool_3".into(),
                arguments: json!({}),
            }],
            origin: None,
        }];
        let after = plan(
            offered(),
            &groups(),
            &settings,
            Some(10_000),
            &[&history],
            &state,
        );
        assert_eq!(
            names(&after),
            ["Read", TOOL_SEARCH, "mcp__gh__tool_7", "mcp__gh__tool_3"],
            "the tools revealed come last, in the order they came"
        );
        assert_eq!(
            after.listed, 2,
            "the system prompt lists what is always sent"
        );
        assert_eq!(
            after.deferred,
            [("gh".to_owned(), 30)],
            "and the groups whole"
        );
    }

    #[test]
    fn always_and_never_say_so_whatever_the_window() {
        let state = SessionState::default();
        let always = ToolSearchSettings {
            mode: ToolSearchMode::Always,
            ..ToolSearchSettings::default()
        };
        assert_eq!(
            names(&plan(offered(), &groups(), &always, None, &[], &state)),
            ["Read", TOOL_SEARCH]
        );
        let never = ToolSearchSettings {
            mode: ToolSearchMode::Never,
            ..ToolSearchSettings::default()
        };
        let all = plan(offered(), &groups(), &never, Some(10), &[], &state);
        assert_eq!(all.sent.len(), 31);
        assert!(
            !DeferredTools::of(&state).any(),
            "nothing to search when nothing is deferred"
        );
    }
}
