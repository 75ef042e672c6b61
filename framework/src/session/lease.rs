//! Who runs a session's chat when several servers share one store: a lease the running server
//! claims in the store, renews while the chat runs and gives up at its end. A second claim
//! fails while the lease holds, so one chat of a session runs at a time across every server;
//! a server that cannot renew (it was paused, or lost the store) stops its chat, since another
//! may claim the session once the lease has lapsed.

use super::StoreError;
use crate::ids::SessionId;
use std::time::Duration;

/// A claimed lease on a session's chat.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lease {
    /// The session.
    pub session: SessionId,
    /// The server holding it.
    pub owner: String,
    /// Its number, larger than every earlier lease's: a write that carries an older one is
    /// from a server that has lost the session.
    pub fence: i64,
}

/// Leases on sessions' chats, kept where the sessions are.
pub trait ChatLeases: Send + Sync {
    /// Claims session `id`'s chat for `owner` for `ttl`: the lease, or `None` while another
    /// claim has not lapsed.
    fn claim(
        &self,
        id: &SessionId,
        owner: &str,
        ttl: Duration,
    ) -> Result<Option<Lease>, StoreError>;
    /// Extends `lease` by `ttl` from now; `false` when it has lapsed or passed to another
    /// server (its holder must stop).
    fn renew(&self, lease: &Lease, ttl: Duration) -> Result<bool, StoreError>;
    /// Gives `lease` up, when it is still held.
    fn release(&self, lease: &Lease) -> Result<(), StoreError>;
}

/// How often a running chat's lease of `ttl` is renewed: three times a lease, so that one
/// slow or failed renewal does not lose it.
pub fn renewal_interval(ttl: Duration) -> Duration {
    ttl / 3
}
