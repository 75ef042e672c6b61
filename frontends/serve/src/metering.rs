//! The server's metrics, beside the agent's ([`Metrics`]): open sessions, connected clients,
//! running chats, events sent and subscribers that fell behind, store and broker errors. All
//! are served at `GET /metrics` in the Prometheus text format.

use crate::metrics::Metrics;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use std::sync::Arc;

/// The server's metrics, registered with the agent's.
pub struct ServeMetrics {
    /// The agent's metrics, and the registry every metric is in.
    pub agent: Arc<Metrics>,
    /// Sessions open in this server.
    pub sessions_open: Gauge,
    /// Clients connected (either transport).
    pub clients_connected: Gauge,
    /// Chats running in this server.
    pub chats_running: Gauge,
    /// Events sent to clients.
    pub events_sent: Counter,
    /// Times a subscriber fell behind and was told to fetch the turns.
    pub subscribers_behind: Counter,
    /// Failed calls to the session store (leases, readiness).
    pub store_errors: Counter,
    /// Failed calls to the broker (signals, readiness, lost subscriptions).
    pub broker_errors: Counter,
    /// Requests refused by a limit, by which (`busy`, `rate_limited`, `too_many_sessions`).
    refusals: Family<Reason, Counter>,
}

/// Which limit refused a request.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Reason {
    reason: String,
}

impl ServeMetrics {
    /// New metrics, registered in a new registry with the agent's.
    pub fn new() -> Arc<Self> {
        let metrics = Self {
            agent: Arc::new(Metrics::new()),
            sessions_open: Gauge::default(),
            clients_connected: Gauge::default(),
            chats_running: Gauge::default(),
            events_sent: Counter::default(),
            subscribers_behind: Counter::default(),
            store_errors: Counter::default(),
            broker_errors: Counter::default(),
            refusals: Family::default(),
        };
        let agent = &metrics.agent;
        agent.register(
            "sessions_open",
            "Sessions open in this server",
            metrics.sessions_open.clone(),
        );
        agent.register(
            "clients_connected",
            "Clients connected, over either transport",
            metrics.clients_connected.clone(),
        );
        agent.register(
            "chats_running",
            "Chats running in this server",
            metrics.chats_running.clone(),
        );
        agent.register(
            "events_sent",
            "Events sent to clients",
            metrics.events_sent.clone(),
        );
        agent.register(
            "subscribers_behind",
            "Times a subscriber fell behind and was told to fetch the turns",
            metrics.subscribers_behind.clone(),
        );
        agent.register(
            "store_errors",
            "Failed calls to the session store",
            metrics.store_errors.clone(),
        );
        agent.register(
            "broker_errors",
            "Failed calls to the broker",
            metrics.broker_errors.clone(),
        );
        agent.register(
            "refused",
            "Requests refused by a limit, by which",
            metrics.refusals.clone(),
        );
        Arc::new(metrics)
    }

    /// Counts a request refused by the limit `reason`.
    pub fn refused(&self, reason: &str) {
        self.refusals
            .get_or_create(&Reason {
                reason: reason.to_owned(),
            })
            .inc();
    }
}
