//! Which server runs a session's chat when several share one store: the chat claims the
//! session's lease in the store before it starts (a second claim, from any server, is refused
//! as a running chat), renews it while it runs, and gives it up at its end. A server that
//! cannot renew stops its chat, which ends interrupted: once its lease lapses another server
//! may run the session, and two must never run it at once.
//!
//! The holder numbers the session's events after every earlier holder's (see
//! [`Lease::first_sequence`]) and leaves its last number with the lease. Every server sweeps
//! the leases that lapsed (their servers died or were cut off): it tells the sessions' clients
//! that the chat was interrupted, then gives the session up for the next chat.

use crate::error::ServeError;
use crate::live::Sessions;
use agentry::ids::SessionId;
use agentry::session::SessionStore;
use agentry::session::lease::{Lease, renewal_interval};
use agentry::sync::lock;
use prometheus_client::metrics::counter::Counter;
use std::future::Future;
use std::sync::{Arc, Weak};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How long a claim holds without renewal, unless configured.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(10);

/// A running chat's hold on its session across the servers sharing the store.
pub struct Ownership {
    store: Arc<dyn SessionStore>,
    lease: Lease,
    /// How long the lease holds without renewal.
    ttl: Duration,
    /// Where the store's failures are counted.
    store_errors: Counter,
}

impl Ownership {
    /// Claims session `id`'s chat for server `owner`, holding `ttl` between renewals; `None`
    /// without a store that keeps leases (one server, which keeps the rule itself). The store's
    /// failures, now and later, count in `store_errors`.
    pub fn claim(
        store: Option<&Arc<dyn SessionStore>>,
        id: &SessionId,
        owner: &str,
        ttl: Duration,
        store_errors: &Counter,
    ) -> Result<Option<Self>, ServeError> {
        let Some((store, leases)) = store.and_then(|store| Some((store, store.leases()?))) else {
            return Ok(None);
        };
        match leases.claim(id, owner, ttl) {
            Ok(Some(lease)) => Ok(Some(Self {
                store: store.clone(),
                lease,
                ttl,
                store_errors: store_errors.clone(),
            })),
            Ok(None) => Err(ServeError::ChatRunning(id.to_string())),
            Err(error) => {
                store_errors.inc();
                Err(ServeError::Internal(format!(
                    "the chat cannot start: {error}"
                )))
            }
        }
    }

    /// The number after which this chat numbers its session's events.
    pub fn first_sequence(&self) -> u64 {
        self.lease.first_sequence()
    }

    /// The session's `updated_at` as the claim found it.
    pub fn updated_at(&self) -> Option<&str> {
        self.lease.updated_at.as_deref()
    }

    /// Runs `chat`, renewing the lease meanwhile with the last number given out
    /// (`last_sequence`). A lease that cannot be renewed (it lapsed while this server was
    /// paused, or the store cannot be reached) cancels the chat through `cancel`; `chat` is
    /// then run to its (interrupted) end.
    pub async fn hold<T>(
        &self,
        cancel: &CancellationToken,
        last_sequence: impl Fn() -> u64,
        chat: impl Future<Output = T>,
    ) -> T {
        let mut chat = std::pin::pin!(chat);
        // At least a millisecond apart: a zero period is no interval.
        let period = renewal_interval(self.ttl).max(Duration::from_millis(1));
        let mut renewals = tokio::time::interval(period);
        renewals.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        // The first tick is at once: the claim has just been made.
        renewals.tick().await;
        let mut held = true;
        loop {
            tokio::select! {
                ended = &mut chat => return ended,
                _ = renewals.tick(), if held => {
                    if !self.renew(last_sequence()) {
                        held = false;
                        cancel.cancel();
                    }
                }
            }
        }
    }

    /// Extends the lease; whether it is still this server's.
    fn renew(&self, last_sequence: u64) -> bool {
        let Some(leases) = self.store.leases() else {
            return true;
        };
        match leases.renew(&self.lease, self.ttl, last_sequence) {
            Ok(true) => true,
            Ok(false) => {
                tracing::warn!(
                    "session `{}`: its lease passed to another server; the chat stops",
                    self.lease.session
                );
                false
            }
            Err(error) => {
                self.store_errors.inc();
                tracing::warn!(
                    "session `{}`: its lease cannot be renewed ({error}); the chat stops",
                    self.lease.session
                );
                false
            }
        }
    }

    /// Gives the session up for the next chat, on any server, which numbers its events
    /// after `last_sequence`: the session's `updated_at` as this chat leaves it (none when
    /// unknown).
    pub fn release(self, last_sequence: u64) -> Option<String> {
        let leases = self.store.leases()?;
        match leases.release(&self.lease, last_sequence) {
            Ok(updated_at) => updated_at,
            Err(error) => {
                self.store_errors.inc();
                tracing::warn!(
                    "session `{}`: its lease could not be given up ({error}); it lapses in {} s",
                    self.lease.session,
                    self.ttl.as_secs_f32()
                );
                None
            }
        }
    }
}

/// Sweeps the leases that lapsed in the store `sessions` share with other servers, every
/// renewal interval, for as long as `sessions` is in use (nothing without a shared store).
pub fn keep_sweeping(sessions: &Arc<Sessions>) {
    if sessions.shared_store().is_none() {
        return;
    }
    let period = renewal_interval(sessions.defaults().lease).max(Duration::from_millis(1));
    let sessions: Weak<Sessions> = Arc::downgrade(sessions);
    tokio::spawn(async move {
        let mut ticks = tokio::time::interval(period);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticks.tick().await;
            let Some(sessions) = sessions.upgrade() else {
                return;
            };
            if let Err(error) = tokio::task::spawn_blocking(move || sweep(&sessions)).await {
                tracing::warn!("the sweep of lapsed leases failed: {error}");
            }
        }
    });
}

/// Takes every lapsed lease over, tells each session's clients that its chat was interrupted
/// (the store now reads it so), and gives the session up for its next chat.
fn sweep(sessions: &Sessions) {
    let Some(store) = sessions.shared_store() else {
        return;
    };
    let Some(leases) = store.leases() else {
        return;
    };
    let lapsed = match leases.sweep(sessions.owner(), sessions.defaults().lease) {
        Ok(lapsed) => lapsed,
        Err(error) => {
            sessions.metrics().store_errors.inc();
            tracing::warn!("lapsed leases cannot be swept: {error}");
            return;
        }
    };
    for lease in lapsed {
        tracing::warn!(
            "session `{}`: its server stopped renewing the chat's lease; the chat is interrupted",
            lease.session
        );
        let last = match sessions.get(lease.session.as_str()) {
            // This server's own chat, which outlived its lease (the server was paused): it
            // stops, and tells its clients itself.
            Ok(live) if live.cancel() => lock(&live.projector).last_sequence(),
            Ok(live) => live.interrupted_elsewhere(lease.first_sequence()),
            // Deleted meanwhile: nobody to tell.
            Err(_) => lease.first_sequence(),
        };
        if let Err(error) = leases.release(&lease, last) {
            tracing::warn!(
                "session `{}`: its lease could not be given up after the sweep ({error})",
                lease.session
            );
        }
    }
}
