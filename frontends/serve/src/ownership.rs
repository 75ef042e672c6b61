//! Which server runs a session's chat when several share one store: the chat claims the
//! session's lease in the store before it starts (a second claim, from any server, is refused
//! as a running chat), renews it while it runs, and gives it up at its end. A server that
//! cannot renew stops its chat, which ends interrupted: once its lease lapses another server
//! may run the session, and two must never run it at once.

use crate::error::ServeError;
use agentry::ids::SessionId;
use agentry::session::SessionStore;
use agentry::session::lease::{Lease, renewal_interval};
use std::future::Future;
use std::sync::Arc;
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
}

impl Ownership {
    /// Claims session `id`'s chat for server `owner`, holding `ttl` between renewals; `None`
    /// without a store that keeps leases (one server, which keeps the rule itself).
    pub fn claim(
        store: Option<&Arc<dyn SessionStore>>,
        id: &SessionId,
        owner: &str,
        ttl: Duration,
    ) -> Result<Option<Self>, ServeError> {
        let Some((store, leases)) = store.and_then(|store| Some((store, store.leases()?))) else {
            return Ok(None);
        };
        match leases.claim(id, owner, ttl) {
            Ok(Some(lease)) => Ok(Some(Self {
                store: store.clone(),
                lease,
                ttl,
            })),
            Ok(None) => Err(ServeError::ChatRunning(id.to_string())),
            Err(error) => Err(ServeError::Internal(format!(
                "the chat cannot start: {error}"
            ))),
        }
    }

    /// Runs `chat`, renewing the lease meanwhile. A lease that cannot be renewed (it lapsed
    /// while this server was paused, or the store cannot be reached) cancels the chat through
    /// `cancel`; `chat` is then run to its (interrupted) end.
    pub async fn hold<T>(&self, cancel: &CancellationToken, chat: impl Future<Output = T>) -> T {
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
                    if !self.renew() {
                        held = false;
                        cancel.cancel();
                    }
                }
            }
        }
    }

    /// Extends the lease; whether it is still this server's.
    fn renew(&self) -> bool {
        let Some(leases) = self.store.leases() else {
            return true;
        };
        match leases.renew(&self.lease, self.ttl) {
            Ok(true) => true,
            Ok(false) => {
                tracing::warn!(
                    "session `{}`: its lease passed to another server; the chat stops",
                    self.lease.session
                );
                false
            }
            Err(error) => {
                tracing::warn!(
                    "session `{}`: its lease cannot be renewed ({error}); the chat stops",
                    self.lease.session
                );
                false
            }
        }
    }

    /// Gives the session up for the next chat, on any server.
    pub fn release(self) {
        if let Some(leases) = self.store.leases()
            && let Err(error) = leases.release(&self.lease)
        {
            tracing::warn!(
                "session `{}`: its lease could not be given up ({error}); it lapses in {} s",
                self.lease.session,
                self.ttl.as_secs_f32()
            );
        }
    }
}
