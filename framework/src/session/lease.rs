//! Who runs a session's chat when several servers share one store: a lease the running server
//! claims in the store, renews while the chat runs and gives up at its end. A second claim
//! fails while the lease holds, so one chat of a session runs at a time across every server;
//! a server that cannot renew (it was paused, or lost the store) stops its chat, since another
//! may claim the session once the lease has lapsed.
//!
//! A chat begun under a lease is recorded with the lease's fence number, and the store refuses
//! its writes once the session's lease has passed to another holder: a server that was paused
//! past its lease cannot add to a session that has moved on. Reading the session back, a chat
//! whose lease holds is running elsewhere and left out; one whose lease lapsed is interrupted.
//!
//! The lease also keeps the last number its holder gave the session's events (a front-end's
//! numbering of what its clients see), so the next holder, on any server, numbers after it.

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
    /// The last number the session's events were given, as the previous holder left it.
    pub last_sequence: u64,
    /// The session's `updated_at` when the lease was claimed (none before it is stored): a
    /// holder that read the session at another time reads it again before its chat.
    pub updated_at: Option<String>,
}

/// How many event numbers a holder may give out before the next holder's start: each lease
/// numbers from `fence × SEQUENCE_SPAN` on, so that a holder that died before saying how far
/// it numbered is still followed by larger numbers. Four million events a chat, and two
/// thousand million chats before the numbers pass 2^53 (what JavaScript counts exactly).
pub const SEQUENCE_SPAN: u64 = 1 << 22;

impl Lease {
    /// The number after which this lease's holder numbers the session's events: above every
    /// number an earlier holder gave out.
    pub fn first_sequence(&self) -> u64 {
        let fenced = u64::try_from(self.fence).unwrap_or(0) * SEQUENCE_SPAN;
        fenced.max(self.last_sequence)
    }
}

/// Leases on sessions' chats, kept where the sessions are.
pub trait ChatLeases: Send + Sync {
    /// Claims session `id`'s chat for `owner` for `ttl`: the lease, or `None` while another
    /// claim has not lapsed. Chats begun by this store under the session's lease carry it.
    fn claim(
        &self,
        id: &SessionId,
        owner: &str,
        ttl: Duration,
    ) -> Result<Option<Lease>, StoreError>;
    /// Extends `lease` by `ttl` from now, keeping `last_sequence` as the last number its
    /// holder gave out; `false` when it has lapsed or passed to another server (its holder
    /// must stop).
    fn renew(&self, lease: &Lease, ttl: Duration, last_sequence: u64) -> Result<bool, StoreError>;
    /// Gives `lease` up, when it is still held, keeping `last_sequence` for the next holder:
    /// the session's `updated_at` as its holder leaves it (none when the lease had passed on,
    /// or the session is not stored).
    fn release(&self, lease: &Lease, last_sequence: u64) -> Result<Option<String>, StoreError>;
    /// Claims for `owner`, for `ttl`, every session whose lease lapsed (its holder died or
    /// was cut off): their unfinished chats now read as interrupted and their holders' writes
    /// are refused. The sweeper tells the sessions' clients, then releases each lease.
    fn sweep(&self, owner: &str, ttl: Duration) -> Result<Vec<Lease>, StoreError>;
    /// The last number session `id`'s events were given by a holder of its lease (0 when it
    /// never had one).
    fn last_sequence(&self, id: &SessionId) -> Result<u64, StoreError>;
}

/// How often a running chat's lease of `ttl` is renewed, and lapsed leases swept: three times
/// a lease, so that one slow or failed renewal does not lose it.
pub fn renewal_interval(ttl: Duration) -> Duration {
    ttl / 3
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lease_numbers_above_its_fence_span_and_what_the_last_holder_left() {
        let lease = |fence, last_sequence| Lease {
            session: "s".into(),
            owner: "a".into(),
            fence,
            last_sequence,
            updated_at: None,
        };
        assert_eq!(lease(3, 0).first_sequence(), 3 * SEQUENCE_SPAN);
        assert_eq!(
            lease(3, 3 * SEQUENCE_SPAN + 9).first_sequence(),
            3 * SEQUENCE_SPAN + 9
        );
        // A later lease starts above everything an earlier one gave out within its span.
        assert!(lease(4, 0).first_sequence() > lease(3, 0).first_sequence() + SEQUENCE_SPAN - 1);
    }
}
