//! The leases on sessions' chats as the PostgreSQL store keeps them (`agentry_chat_leases`).

use super::PostgresStore;
use agentry::ids::SessionId;
use agentry::session::StoreError;
use agentry::session::lease::{ChatLeases, Lease};
use agentry::sync::lock;
use std::time::Duration;

impl ChatLeases for PostgresStore {
    fn claim(
        &self,
        id: &SessionId,
        owner: &str,
        ttl: Duration,
    ) -> Result<Option<Lease>, StoreError> {
        let millis = millis(ttl);
        // One statement: a free or lapsed lease is taken, a live one kept (the primary key
        // lets only one claim of a session stand).
        let claimed = self.with(|client| {
            client
                .query_opt(
                    "INSERT INTO agentry_chat_leases (session_id, owner, fence, expires_at)
                     VALUES ($1, $2, nextval('agentry_lease_fences'),
                             clock_timestamp() + $3 * INTERVAL '1 millisecond')
                     ON CONFLICT (session_id) DO UPDATE
                         SET owner = EXCLUDED.owner, fence = EXCLUDED.fence,
                             expires_at = EXCLUDED.expires_at
                         WHERE agentry_chat_leases.expires_at IS NULL
                            OR agentry_chat_leases.expires_at < clock_timestamp()
                     RETURNING fence, last_sequence,
                         (SELECT updated_at FROM agentry_sessions WHERE id = $1)",
                    &[&id.as_str(), &owner, &millis],
                )
                .map(|row| row.map(|row| (row.get::<_, i64>(0), row.get::<_, i64>(1), row.get(2))))
        })?;
        let Some((fence, last_sequence, updated_at)) = claimed else {
            return Ok(None);
        };
        lock(&self.held).insert(id.clone(), fence);
        Ok(Some(Lease {
            session: id.clone(),
            owner: owner.to_owned(),
            fence,
            last_sequence: sequence_of(last_sequence),
            updated_at,
        }))
    }

    fn renew(&self, lease: &Lease, ttl: Duration, last_sequence: u64) -> Result<bool, StoreError> {
        let millis = millis(ttl);
        let last = stored_sequence(last_sequence);
        let renewed = self.with(|client| {
            client.execute(
                "UPDATE agentry_chat_leases
                 SET expires_at = clock_timestamp() + $4 * INTERVAL '1 millisecond',
                     last_sequence = GREATEST(last_sequence, $5)
                 WHERE session_id = $1 AND owner = $2 AND fence = $3
                   AND expires_at >= clock_timestamp()",
                &[
                    &lease.session.as_str(),
                    &lease.owner,
                    &lease.fence,
                    &millis,
                    &last,
                ],
            )
        })?;
        Ok(renewed == 1)
    }

    fn release(&self, lease: &Lease, last_sequence: u64) -> Result<Option<String>, StoreError> {
        let last = stored_sequence(last_sequence);
        let released = self.with(|client| {
            client.query_opt(
                "UPDATE agentry_chat_leases
                 SET expires_at = NULL, last_sequence = GREATEST(last_sequence, $3)
                 WHERE session_id = $1 AND fence = $2
                 RETURNING (SELECT updated_at FROM agentry_sessions WHERE id = $1)",
                &[&lease.session.as_str(), &lease.fence, &last],
            )
        })?;
        let mut held = lock(&self.held);
        if held.get(&lease.session) == Some(&lease.fence) {
            held.remove(&lease.session);
        }
        Ok(released.and_then(|row| row.get(0)))
    }

    fn sweep(&self, owner: &str, ttl: Duration) -> Result<Vec<Lease>, StoreError> {
        let millis = millis(ttl);
        // Concurrent sweepers each take a lease at most once: the second finds it extended.
        let rows = self.with(|client| {
            client.query(
                "UPDATE agentry_chat_leases
                 SET owner = $1, fence = nextval('agentry_lease_fences'),
                     expires_at = clock_timestamp() + $2 * INTERVAL '1 millisecond'
                 WHERE expires_at < clock_timestamp()
                 RETURNING session_id, fence, last_sequence,
                     (SELECT updated_at FROM agentry_sessions WHERE id = session_id)",
                &[&owner, &millis],
            )
        })?;
        Ok(rows
            .iter()
            .map(|row| Lease {
                session: SessionId(row.get(0)),
                owner: owner.to_owned(),
                fence: row.get(1),
                last_sequence: sequence_of(row.get(2)),
                updated_at: row.get(3),
            })
            .collect())
    }

    fn last_sequence(&self, id: &SessionId) -> Result<u64, StoreError> {
        let row = self.with(|client| {
            client.query_opt(
                "SELECT last_sequence FROM agentry_chat_leases WHERE session_id = $1",
                &[&id.as_str()],
            )
        })?;
        Ok(row.map_or(0, |row| sequence_of(row.get(0))))
    }
}

/// A sequence number as a `BIGINT` column keeps it.
fn stored_sequence(sequence: u64) -> i64 {
    i64::try_from(sequence).unwrap_or(i64::MAX)
}

/// A `BIGINT` column's sequence number.
fn sequence_of(stored: i64) -> u64 {
    u64::try_from(stored).unwrap_or(0)
}

/// `ttl` in whole milliseconds, as PostgreSQL's intervals take it.
fn millis(ttl: Duration) -> f64 {
    ttl.as_millis() as f64
}
