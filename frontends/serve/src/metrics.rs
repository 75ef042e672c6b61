//! Prometheus metrics of what agents do: chats by how they ended, model requests by model and
//! outcome (with their duration and time to first token), tokens and their cost in US dollars
//! (for models with a price), tool calls by tool and status
//! (with their duration) and permission decisions, all read from the one event stream
//! ([`ChatMeter`] watches a chat's [`AgentEvent`]s). A front-end registers its own metrics in
//! the same [`Metrics`] and serves [`Metrics::encode`]'s text.
//!
//! Label values are bounded: a model's and a tool's name, a status, an outcome; never a
//! session, a path or a prompt.

use agentry::event::{AgentEvent, Role, ToolCallStatus, TurnStatus};
use agentry::permission::PermissionOutcome;
use agentry::sync::lock;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::{Metric, Registry};
use std::collections::HashMap;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// A model, as its requests are labelled.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ModelLabels {
    provider: String,
    model: String,
}

impl ModelLabels {
    /// The labels of the model `model` names (`provider/name`).
    fn of(model: &str) -> Self {
        let (provider, name) = model.split_once('/').unwrap_or(("", model));
        Self {
            provider: provider.to_owned(),
            model: name.to_owned(),
        }
    }
}

/// A model request's end.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    provider: String,
    model: String,
    outcome: String,
}

/// Tokens of one kind.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct TokenLabels {
    provider: String,
    model: String,
    kind: String,
}

/// A tool, and how its call ended.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ToolLabels {
    tool: String,
    status: String,
}

/// A tool.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ToolName {
    tool: String,
}

/// A status or an outcome.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Outcome {
    outcome: String,
}

/// A chat's end.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ChatLabels {
    status: String,
}

type Seconds<L> = Family<L, Histogram, fn() -> Histogram>;

/// Durations from a millisecond to about half an hour.
fn seconds() -> Histogram {
    Histogram::new(exponential_buckets(0.001, 2.0, 22))
}

/// The metrics of one process.
pub struct Metrics {
    registry: Mutex<Registry>,
    chats: Family<ChatLabels, Counter>,
    model_requests: Family<RequestLabels, Counter>,
    model_request_seconds: Seconds<ModelLabels>,
    first_token_seconds: Seconds<ModelLabels>,
    tokens: Family<TokenLabels, Counter>,
    cost_usd: Family<ModelLabels, Counter<f64, AtomicU64>>,
    tool_calls: Family<ToolLabels, Counter>,
    tool_call_seconds: Seconds<ToolName>,
    permission_decisions: Family<Outcome, Counter>,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// The agent's metrics, registered under `agentry_`.
    pub fn new() -> Self {
        let metrics = Self {
            registry: Mutex::new(Registry::with_prefix("agentry")),
            chats: Family::default(),
            model_requests: Family::default(),
            model_request_seconds: Family::new_with_constructor(seconds),
            first_token_seconds: Family::new_with_constructor(seconds),
            tokens: Family::default(),
            cost_usd: Family::default(),
            tool_calls: Family::default(),
            tool_call_seconds: Family::new_with_constructor(seconds),
            permission_decisions: Family::default(),
        };
        metrics.register("chats", "Chats ended, by how", metrics.chats.clone());
        metrics.register(
            "model_requests",
            "Model requests ended, by provider, model and outcome",
            metrics.model_requests.clone(),
        );
        metrics.register(
            "model_request_duration_seconds",
            "Model requests' duration",
            metrics.model_request_seconds.clone(),
        );
        metrics.register(
            "model_time_to_first_token_seconds",
            "Time from a model request to its first streamed token",
            metrics.first_token_seconds.clone(),
        );
        metrics.register(
            "tokens",
            "Tokens used, by provider, model and kind (input, output, cache_read, cache_write)",
            metrics.tokens.clone(),
        );
        metrics.register(
            "cost_usd",
            "What model requests cost, in US dollars, by provider and model (models with a price only)",
            metrics.cost_usd.clone(),
        );
        metrics.register(
            "tool_calls",
            "Tool calls ended, by tool and status",
            metrics.tool_calls.clone(),
        );
        metrics.register(
            "tool_call_duration_seconds",
            "Tool calls' duration",
            metrics.tool_call_seconds.clone(),
        );
        metrics.register(
            "permission_decisions",
            "Permission questions answered, by outcome",
            metrics.permission_decisions.clone(),
        );
        metrics
    }

    /// Registers a front-end's own metric `name` (under `agentry_`), described by `help`.
    pub fn register(&self, name: &str, help: &str, metric: impl Metric) {
        lock(&self.registry).register(name, help, metric);
    }

    /// Every metric, in the Prometheus text format (version 0.0.4, which every scraper and
    /// `promtool` read).
    pub fn encode(&self) -> String {
        let mut open_metrics = String::new();
        // Writing to a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut open_metrics, &lock(&self.registry));
        prometheus_text(&open_metrics)
    }

    /// A meter for one chat of the model `model` (`provider/name`).
    pub fn chat(self: &Arc<Self>, model: &str) -> ChatMeter {
        ChatMeter {
            metrics: self.clone(),
            model: ModelLabels::of(model),
            requests: HashMap::new(),
            tools: HashMap::new(),
            token_counters: None,
        }
    }
}

/// `open_metrics` (OpenMetrics text, as the client crate writes it) in the Prometheus text
/// format: a counter's `# HELP` and `# TYPE` name its samples' `_total` name, and there is no
/// `# EOF`. The samples are the same.
fn prometheus_text(open_metrics: &str) -> String {
    let counters: std::collections::HashSet<&str> = open_metrics
        .lines()
        .filter_map(|line| line.strip_prefix("# TYPE "))
        .filter_map(|rest| rest.strip_suffix(" counter"))
        .collect();
    let mut text = String::with_capacity(open_metrics.len());
    for line in open_metrics.lines().filter(|line| *line != "# EOF") {
        let described = ["# HELP ", "# TYPE "]
            .into_iter()
            .find_map(|tag| Some((tag, line.strip_prefix(tag)?)));
        match described {
            Some((tag, rest)) => {
                let (name, after) = rest.split_once(' ').unwrap_or((rest, ""));
                let name = if counters.contains(name) {
                    format!("{name}_total")
                } else {
                    name.to_owned()
                };
                text.push_str(&format!("{tag}{name} {after}"));
            }
            None => text.push_str(line),
        }
        text.push('\n');
    }
    text
}

/// A model request under way: when it began, and whether a token came.
struct Request {
    started: Instant,
    first_token: bool,
}

/// Counts one chat's events into the [`Metrics`].
pub struct ChatMeter {
    metrics: Arc<Metrics>,
    model: ModelLabels,
    /// Assistant turns under way, by turn id.
    requests: HashMap<String, Request>,
    /// Tool names, by call id.
    tools: HashMap<String, String>,
    /// The model's token counters, once the chat has reported usage.
    token_counters: Option<[Counter; 4]>,
}

/// The kinds of tokens counted, as the `kind` label says them.
const TOKEN_KINDS: [&str; 4] = ["input", "output", "cache_read", "cache_write"];

impl ChatMeter {
    /// Takes in one of the chat's events.
    pub fn observe(&mut self, event: &AgentEvent) {
        match event {
            AgentEvent::TurnStarted {
                turn_id,
                role: Role::Assistant,
                ..
            } => {
                self.requests.entry(turn_id.to_string()).or_insert(Request {
                    started: Instant::now(),
                    first_token: false,
                });
            }
            AgentEvent::TextDelta { turn_id, .. } | AgentEvent::ThinkingDelta { turn_id, .. } => {
                self.first_token(turn_id.as_str());
            }
            AgentEvent::ToolCall(call) => {
                self.first_token(call.turn_id.as_str());
                self.tools
                    .insert(call.tool_call_id.to_string(), call.tool_name.clone());
            }
            AgentEvent::TurnEnded {
                turn_id,
                role: Role::Assistant,
                status,
                ..
            } => self.request_ended(turn_id.as_str(), *status),
            AgentEvent::Usage {
                usage,
                model,
                cost_usd,
                ..
            } => {
                if let Some(cost) = cost_usd {
                    self.metrics
                        .cost_usd
                        .get_or_create(&ModelLabels::of(model))
                        .inc_by(*cost);
                }
                let counts = [
                    usage.input_tokens,
                    usage.output_tokens,
                    usage.cache_read_tokens,
                    usage.cache_write_tokens,
                ];
                for (counter, count) in self.token_counters().iter().zip(counts) {
                    counter.inc_by(count);
                }
            }
            AgentEvent::ToolCallUpdate(update) => {
                let status = match update.status {
                    Some(ToolCallStatus::Completed) => "completed",
                    // Rejected, invalid or cancelled calls too: the refusal says which.
                    Some(ToolCallStatus::Failed) => match &update.refusal {
                        Some(refusal) => refusal.kind(),
                        None => "failed",
                    },
                    _ => return,
                };
                if let Some(tool) = self.tools.remove(update.tool_call_id.as_str()) {
                    if let Some(ms) = update.duration_ms {
                        self.metrics
                            .tool_call_seconds
                            .get_or_create(&ToolName { tool: tool.clone() })
                            .observe(ms as f64 / 1000.0);
                    }
                    self.metrics
                        .tool_calls
                        .get_or_create(&ToolLabels {
                            tool,
                            status: status.to_owned(),
                        })
                        .inc();
                }
            }
            AgentEvent::PermissionResolved { outcome, .. } => {
                let outcome = match outcome {
                    PermissionOutcome::Selected { kind } => kind.as_str(),
                    PermissionOutcome::Cancelled => "cancelled",
                    PermissionOutcome::Unanswered => "unanswered",
                };
                self.metrics
                    .permission_decisions
                    .get_or_create(&Outcome {
                        outcome: outcome.to_owned(),
                    })
                    .inc();
            }
            AgentEvent::ChatEnded(summary) => self.chat_ended(summary.stop_reason.as_str()),
            AgentEvent::ChatFailed { .. } => self.chat_ended("failed"),
            _ => {}
        }
    }

    /// The chat's model's token counters, in [`TOKEN_KINDS`]' order: looked up once a chat,
    /// not at each usage report.
    fn token_counters(&mut self) -> &[Counter; 4] {
        self.token_counters.get_or_insert_with(|| {
            TOKEN_KINDS.map(|kind| {
                self.metrics
                    .tokens
                    .get_or_create(&TokenLabels {
                        provider: self.model.provider.clone(),
                        model: self.model.model.clone(),
                        kind: kind.to_owned(),
                    })
                    .clone()
            })
        })
    }

    fn first_token(&mut self, turn_id: &str) {
        // Most deltas come after their request's first token: they need no look-up by id.
        if self.requests.values().all(|request| request.first_token) {
            return;
        }
        if let Some(request) = self.requests.get_mut(turn_id)
            && !request.first_token
        {
            request.first_token = true;
            self.metrics
                .first_token_seconds
                .get_or_create(&self.model)
                .observe(request.started.elapsed().as_secs_f64());
        }
    }

    fn request_ended(&mut self, turn_id: &str, status: TurnStatus) {
        let Some(request) = self.requests.remove(turn_id) else {
            return;
        };
        let outcome = match status {
            TurnStatus::Failed => "failed",
            TurnStatus::Cancelled => "cancelled",
            _ => "completed",
        };
        self.metrics
            .model_request_seconds
            .get_or_create(&self.model)
            .observe(request.started.elapsed().as_secs_f64());
        self.metrics
            .model_requests
            .get_or_create(&RequestLabels {
                provider: self.model.provider.clone(),
                model: self.model.model.clone(),
                outcome: outcome.to_owned(),
            })
            .inc();
    }

    fn chat_ended(&mut self, status: &str) {
        self.metrics
            .chats
            .get_or_create(&ChatLabels {
                status: status.to_owned(),
            })
            .inc();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_are_described_under_their_samples_names_and_there_is_no_eof() {
        let open = "# HELP agentry_chats Chats ended.\n# TYPE agentry_chats counter\n\
                    agentry_chats_total{status=\"end_turn\"} 1\n\
                    # HELP agentry_open Open.\n# TYPE agentry_open gauge\nagentry_open 2\n# EOF\n";
        assert_eq!(
            prometheus_text(open),
            "# HELP agentry_chats_total Chats ended.\n# TYPE agentry_chats_total counter\n\
             agentry_chats_total{status=\"end_turn\"} 1\n\
             # HELP agentry_open Open.\n# TYPE agentry_open gauge\nagentry_open 2\n"
        );
    }
}
