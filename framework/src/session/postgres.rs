//! [`PostgresStore`]: sessions in a PostgreSQL database that several agentry servers share. The
//! same records as the [`SqliteStore`](super::SqliteStore), one transaction per recorded step of
//! a chat; the store creates its tables and brings them up to date itself, one server at a time.

use super::lease::{ChatLeases, Lease};
use super::rows::{ChatRows, ChatState, ReadBack, Rows, to_json};
use super::{
    ChatKey, ChatProgress, ChatRecord, SessionMeta, SessionStore, StoreError, StoredSession,
    now_rfc3339,
};
use crate::ids::SessionId;
use crate::sync::lock;
use postgres::{Client, GenericClient, NoTls, Row};
use std::collections::HashMap;
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::Mutex;
use std::time::Duration;

/// The schema's versions, in order: the version each step brings the database to, and its SQL.
/// Tables are prefixed so that a database shared with other programs stays readable.
const MIGRATIONS: &[(i32, &str)] = &[
    (
        1,
        "CREATE TABLE agentry_sessions (
        id          TEXT PRIMARY KEY,
        cwd         TEXT NOT NULL,
        title       TEXT,
        created_at  TEXT NOT NULL,
        updated_at  TEXT NOT NULL,
        remembered  TEXT NOT NULL DEFAULT '{\"allowed\":[],\"rejected\":[]}'
    );
    CREATE INDEX agentry_sessions_by_update ON agentry_sessions (updated_at DESC, id);
    CREATE TABLE agentry_chats (
        id          BIGSERIAL PRIMARY KEY,
        session_id  TEXT NOT NULL REFERENCES agentry_sessions(id) ON DELETE CASCADE,
        stop_reason TEXT,
        usage       TEXT NOT NULL,
        created_at  TEXT NOT NULL,
        history     TEXT,
        paused      TEXT,
        running     BOOLEAN NOT NULL DEFAULT FALSE
    );
    CREATE INDEX agentry_chats_by_session ON agentry_chats (session_id, id);
    CREATE TABLE agentry_messages (
        chat_id     BIGINT NOT NULL REFERENCES agentry_chats(id) ON DELETE CASCADE,
        seq         INTEGER NOT NULL,
        body        TEXT NOT NULL,
        PRIMARY KEY (chat_id, seq)
    );
    CREATE TABLE agentry_events (
        chat_id     BIGINT NOT NULL REFERENCES agentry_chats(id) ON DELETE CASCADE,
        seq         INTEGER NOT NULL,
        body        TEXT NOT NULL,
        PRIMARY KEY (chat_id, seq)
    );",
    ),
    // Who runs each session's chat (a session may be claimed before it is first stored).
    (
        2,
        "CREATE SEQUENCE agentry_lease_fences;
        CREATE TABLE agentry_chat_leases (
            session_id  TEXT PRIMARY KEY,
            owner       TEXT NOT NULL,
            fence       BIGINT NOT NULL,
            expires_at  TIMESTAMPTZ NOT NULL
        );",
    ),
    // A lease outlives its chat, free (no expiry) between chats, keeping the last number the
    // session's events were given; a chat carries the fence of the lease it began under.
    (
        3,
        "ALTER TABLE agentry_chat_leases ALTER COLUMN expires_at DROP NOT NULL;
        ALTER TABLE agentry_chat_leases ADD COLUMN last_sequence BIGINT NOT NULL DEFAULT 0;
        CREATE INDEX agentry_chat_leases_by_expiry ON agentry_chat_leases (expires_at);
        ALTER TABLE agentry_chats ADD COLUMN fence BIGINT;",
    ),
    // Each recorded step of a chat is one statement (one round trip): a function that checks
    // the chat and its lease and writes, in the statement's own transaction. A refusal is an
    // error of class AG: AG001 the lease was lost, AG002 no such session, AG003 the chat ended.
    (
        4,
        "CREATE FUNCTION agentry_check_lease(p_session TEXT, p_fence BIGINT) RETURNS VOID
        LANGUAGE plpgsql AS $$
        BEGIN
            IF p_fence IS NULL THEN
                RETURN;
            END IF;
            PERFORM 1 FROM agentry_chat_leases
            WHERE session_id = p_session AND fence = p_fence AND expires_at >= clock_timestamp()
            FOR SHARE;
            IF NOT FOUND THEN
                RAISE EXCEPTION 'the lease of session % passed on', p_session USING ERRCODE = 'AG001';
            END IF;
        END $$;

        CREATE FUNCTION agentry_touch(p_session TEXT, p_now TEXT, p_remembered TEXT, p_title TEXT)
        RETURNS VOID LANGUAGE plpgsql AS $$
        BEGIN
            UPDATE agentry_sessions SET updated_at = p_now,
                remembered = COALESCE(p_remembered, remembered), title = COALESCE(title, p_title)
            WHERE id = p_session;
            IF NOT FOUND THEN
                RAISE EXCEPTION 'no session %', p_session USING ERRCODE = 'AG002';
            END IF;
        END $$;

        CREATE FUNCTION agentry_running_chat(p_session TEXT, p_chat BIGINT) RETURNS VOID
        LANGUAGE plpgsql AS $$
        DECLARE
            v_running BOOLEAN;
            v_fence BIGINT;
        BEGIN
            SELECT running, fence INTO v_running, v_fence FROM agentry_chats
            WHERE id = p_chat AND session_id = p_session FOR UPDATE;
            IF NOT FOUND THEN
                RAISE EXCEPTION 'no session %', p_session USING ERRCODE = 'AG002';
            END IF;
            IF NOT v_running THEN
                RAISE EXCEPTION 'chat % of session % has ended already', p_chat, p_session
                    USING ERRCODE = 'AG003';
            END IF;
            PERFORM agentry_check_lease(p_session, v_fence);
        END $$;

        CREATE FUNCTION agentry_add_rows(p_chat BIGINT, p_history TEXT, p_messages TEXT[],
                                         p_events TEXT[])
        RETURNS VOID LANGUAGE plpgsql AS $$
        BEGIN
            -- A compaction: the history before the chat's messages, which are recorded anew.
            IF p_history IS NOT NULL THEN
                UPDATE agentry_chats SET history = p_history WHERE id = p_chat;
                DELETE FROM agentry_messages WHERE chat_id = p_chat;
            END IF;
            INSERT INTO agentry_messages (chat_id, seq, body)
            SELECT p_chat, next.seq + t.n::INTEGER - 1, t.body
            FROM unnest(p_messages) WITH ORDINALITY AS t(body, n),
                 (SELECT COALESCE(MAX(seq) + 1, 0) AS seq FROM agentry_messages
                  WHERE chat_id = p_chat) AS next;
            INSERT INTO agentry_events (chat_id, seq, body)
            SELECT p_chat, next.seq + t.n::INTEGER - 1, t.body
            FROM unnest(p_events) WITH ORDINALITY AS t(body, n),
                 (SELECT COALESCE(MAX(seq) + 1, 0) AS seq FROM agentry_events
                  WHERE chat_id = p_chat) AS next;
        END $$;

        CREATE FUNCTION agentry_begin_chat(p_session TEXT, p_fence BIGINT, p_now TEXT,
                                           p_title TEXT, p_history TEXT, p_messages TEXT[],
                                           p_events TEXT[])
        RETURNS BIGINT LANGUAGE plpgsql AS $$
        DECLARE
            v_chat BIGINT;
        BEGIN
            PERFORM agentry_check_lease(p_session, p_fence);
            PERFORM agentry_touch(p_session, p_now, NULL, p_title);
            INSERT INTO agentry_chats (session_id, usage, created_at, running, fence)
            VALUES (p_session, '{}', p_now, TRUE, p_fence) RETURNING id INTO v_chat;
            PERFORM agentry_add_rows(v_chat, p_history, p_messages, p_events);
            RETURN v_chat;
        END $$;

        CREATE FUNCTION agentry_continue_chat(p_session TEXT, p_chat BIGINT, p_now TEXT,
                                              p_history TEXT, p_messages TEXT[],
                                              p_events TEXT[])
        RETURNS VOID LANGUAGE plpgsql AS $$
        BEGIN
            PERFORM agentry_running_chat(p_session, p_chat);
            PERFORM agentry_touch(p_session, p_now, NULL, NULL);
            PERFORM agentry_add_rows(p_chat, p_history, p_messages, p_events);
        END $$;

        CREATE FUNCTION agentry_end_chat(p_session TEXT, p_begun BIGINT, p_fence BIGINT,
                                         p_now TEXT, p_remembered TEXT, p_title TEXT,
                                         p_stop_reason TEXT, p_usage TEXT, p_history TEXT,
                                         p_paused TEXT, p_messages TEXT[], p_events TEXT[])
        RETURNS VOID LANGUAGE plpgsql AS $$
        DECLARE
            v_chat BIGINT := p_begun;
        BEGIN
            IF p_begun IS NULL THEN
                PERFORM agentry_check_lease(p_session, p_fence);
            END IF;
            PERFORM agentry_touch(p_session, p_now, p_remembered, p_title);
            IF p_begun IS NOT NULL THEN
                PERFORM agentry_running_chat(p_session, p_begun);
                UPDATE agentry_chats SET stop_reason = p_stop_reason, usage = p_usage,
                    paused = p_paused, running = FALSE
                WHERE id = p_begun;
                PERFORM agentry_add_rows(v_chat, p_history, p_messages, p_events);
            ELSE
                INSERT INTO agentry_chats
                    (session_id, stop_reason, usage, created_at, history, paused)
                VALUES (p_session, p_stop_reason, p_usage, p_now, p_history, p_paused)
                RETURNING id INTO v_chat;
                PERFORM agentry_add_rows(v_chat, NULL, p_messages, p_events);
            END IF;
        END $$;",
    ),
];

/// The advisory lock that servers starting together take in turn to migrate the schema.
const MIGRATION_LOCK: i64 = 0x0061_6765_6e74_7279;

/// A [`SessionStore`] in a PostgreSQL database, keeping the [`ChatLeases`] of the servers that
/// share it; a chat begun while this store holds its session's lease carries the lease's fence,
/// and its writes are refused once the lease has lapsed or passed on.
///
/// Its calls block, as the SQLite store's do. The `postgres` client runs a runtime of its own,
/// which may not start inside another's, so each call runs on a short-lived thread of its own
/// while the caller waits; a caller on a worker of tokio's multi-threaded runtime hands the
/// worker's other tasks to another thread meanwhile, so a server's other chats go on. A connection that breaks is made anew at
/// the next call: a server that was unreachable for a while is used again when it returns.
pub struct PostgresStore {
    config: postgres::Config,
    address: String,
    client: Mutex<Option<Client>>,
    /// The fences of the leases this store claimed and holds, by session.
    held: Mutex<HashMap<SessionId, i64>>,
}

impl PostgresStore {
    /// Connects to the database at `url` (`postgres://user[:password]@host[:port]/database`, or
    /// PostgreSQL's `key=value` form) and brings its tables up to date.
    pub fn open(url: &str) -> Result<Self, StoreError> {
        let config = postgres::Config::from_str(url).map_err(|e| StoreError::Server {
            address: "postgres".to_owned(),
            message: format!("not a PostgreSQL URL: {e}"),
        })?;
        let store = Self {
            address: address(&config),
            config,
            client: Mutex::new(None),
            held: Mutex::default(),
        };
        store.with(migrate)?;
        Ok(store)
    }

    /// The server and database, as errors name them (no password).
    pub fn address(&self) -> &str {
        &self.address
    }

    /// Runs `work` with a connection (made when there is none), on a thread outside any async
    /// runtime. A connection left closed by a failure is dropped, to be made anew next time.
    fn with<T: Send>(
        &self,
        work: impl FnOnce(&mut Client) -> Result<T, postgres::Error> + Send,
    ) -> Result<T, StoreError> {
        let on_worker = tokio::runtime::Handle::try_current().is_ok_and(|runtime| {
            runtime.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread
        });
        if on_worker {
            tokio::task::block_in_place(|| self.call(work))
        } else {
            self.call(work)
        }
    }

    /// [`with`](Self::with)'s call, on a thread of its own.
    fn call<T: Send>(
        &self,
        work: impl FnOnce(&mut Client) -> Result<T, postgres::Error> + Send,
    ) -> Result<T, StoreError> {
        let mut slot = lock(&self.client);
        let slot: &mut Option<Client> = &mut slot;
        let config = &self.config;
        let outcome = std::thread::scope(|scope| {
            scope
                .spawn(move || {
                    let client = match slot {
                        Some(client) if !client.is_closed() => client,
                        _ => slot.insert(config.connect(NoTls)?),
                    };
                    let outcome = work(client);
                    if client.is_closed() {
                        *slot = None;
                    }
                    outcome
                })
                .join()
        });
        match outcome {
            Ok(done) => done.map_err(|e| self.failed(&e)),
            Err(panic) => Err(StoreError::Panicked(crate::sync::panic_message(&*panic))),
        }
    }

    /// Runs one statement calling one of the schema's functions: its refusals (errors of
    /// class AG) are the store's errors about session `id`.
    fn call_function<T: Send>(
        &self,
        id: &SessionId,
        work: impl FnOnce(&mut Client) -> Result<T, postgres::Error> + Send,
    ) -> Result<T, StoreError> {
        let refusal = std::sync::Mutex::new(None);
        let outcome = self.with(|client| {
            work(client).inspect_err(|error| {
                let code = error.code().map(|code| code.code().to_owned());
                *lock(&refusal) = match code.as_deref() {
                    Some("AG001") => Some(StoreError::LeaseLost(id.clone())),
                    Some("AG002") => Some(StoreError::NotFound(id.clone())),
                    Some("AG003") => Some(StoreError::Corrupt(
                        error
                            .as_db_error()
                            .map_or_else(|| error.to_string(), |db| db.message().to_owned()),
                    )),
                    _ => None,
                };
            })
        });
        match (
            outcome,
            refusal
                .into_inner()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        ) {
            (Err(_), Some(refused)) => Err(refused),
            (outcome, _) => outcome,
        }
    }

    fn failed(&self, error: &postgres::Error) -> StoreError {
        StoreError::Server {
            address: self.address.clone(),
            message: match error.as_db_error() {
                Some(db) => db.to_string(),
                None => error.to_string(),
            },
        }
    }
}

impl Drop for PostgresStore {
    /// Closes the connection, which blocks on the client's own runtime: on a thread of its
    /// own, as every call does, since the store may be dropped inside an async runtime.
    fn drop(&mut self) {
        let client = self
            .client
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        if let Some(client) = client {
            std::thread::scope(|scope| {
                scope.spawn(move || drop(client));
            });
        }
    }
}

/// `postgres://user@host:port/database` of `config`, without its password.
fn address(config: &postgres::Config) -> String {
    let host = match config.get_hosts().first() {
        Some(postgres::config::Host::Tcp(name)) => name.clone(),
        Some(postgres::config::Host::Unix(folder)) => folder.display().to_string(),
        None => "localhost".to_owned(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let user = config
        .get_user()
        .map(|u| format!("{u}@"))
        .unwrap_or_default();
    let database = config.get_dbname().unwrap_or_default();
    format!("postgres://{user}{host}:{port}/{database}")
}

/// Brings the schema up to date under an advisory lock, so that servers starting together
/// migrate one after another.
fn migrate(client: &mut Client) -> Result<(), postgres::Error> {
    let mut tx = client.transaction()?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])?;
    tx.batch_execute(
        "CREATE TABLE IF NOT EXISTS agentry_schema (version INTEGER NOT NULL PRIMARY KEY)",
    )?;
    let version: i32 = tx
        .query_one("SELECT COALESCE(MAX(version), 0) FROM agentry_schema", &[])?
        .get(0);
    for (target, sql) in MIGRATIONS.iter().filter(|(target, _)| *target > version) {
        tx.batch_execute(sql)?;
        tx.execute(
            "INSERT INTO agentry_schema (version) VALUES ($1)",
            &[target],
        )?;
    }
    tx.commit()
}

fn meta_from_row(row: &Row) -> SessionMeta {
    SessionMeta {
        id: SessionId(row.get(0)),
        cwd: PathBuf::from(row.get::<_, String>(1)),
        title: row.get(2),
        created_at: row.get(3),
        updated_at: row.get(4),
    }
}

/// The rows of `table` of session `id`'s chats from `from_chat` on, in order.
fn chat_rows(
    client: &mut impl GenericClient,
    table: &str,
    id: &SessionId,
    from_chat: i64,
) -> Result<ChatRows, postgres::Error> {
    let rows = client.query(
        &format!(
            "SELECT t.chat_id, t.body FROM {table} t JOIN agentry_chats ch ON ch.id = t.chat_id
             WHERE ch.session_id = $1 AND ch.id >= $2 ORDER BY ch.id, t.seq"
        ),
        &[&id.as_str(), &from_chat],
    )?;
    Ok(rows.iter().map(|row| (row.get(0), row.get(1))).collect())
}

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

impl SessionStore for PostgresStore {
    fn leases(&self) -> Option<&dyn ChatLeases> {
        Some(self)
    }

    fn ping(&self) -> Result<(), StoreError> {
        self.with(|client| client.simple_query("SELECT 1").map(drop))
    }

    fn create(&self, meta: &SessionMeta) -> Result<(), StoreError> {
        let cwd = meta.cwd.to_string_lossy().into_owned();
        self.with(|client| {
            client.execute(
                "INSERT INTO agentry_sessions (id, cwd, title, created_at, updated_at)
                 VALUES ($1, $2, $3, $4, $5)",
                &[
                    &meta.id.as_str(),
                    &cwd,
                    &meta.title,
                    &meta.created_at,
                    &meta.updated_at,
                ],
            )?;
            Ok(())
        })
    }

    fn begin_chat(
        &self,
        id: &SessionId,
        title: Option<&str>,
        first: &ChatProgress,
    ) -> Result<Option<ChatKey>, StoreError> {
        let rows = Rows::of(&first.messages, &first.events)?;
        let history = first.history.as_ref().map(to_json).transpose()?;
        let fence = lock(&self.held).get(id).copied();
        let chat = self.call_function(id, |client| {
            client
                .query_one(
                    "SELECT agentry_begin_chat($1, $2, $3, $4, $5, $6, $7)",
                    &[
                        &id.as_str(),
                        &fence,
                        &now_rfc3339(),
                        &title,
                        &history,
                        &rows.messages,
                        &rows.events,
                    ],
                )
                .map(|row| row.get::<_, i64>(0))
        })?;
        Ok(Some(ChatKey(chat)))
    }

    fn continue_chat(
        &self,
        id: &SessionId,
        chat: ChatKey,
        more: &ChatProgress,
    ) -> Result<(), StoreError> {
        let rows = Rows::of(&more.messages, &more.events)?;
        let history = more.history.as_ref().map(to_json).transpose()?;
        self.call_function(id, |client| {
            client.execute(
                "SELECT agentry_continue_chat($1, $2, $3, $4, $5, $6)",
                &[
                    &id.as_str(),
                    &chat.0,
                    &now_rfc3339(),
                    &history,
                    &rows.messages,
                    &rows.events,
                ],
            )
        })?;
        Ok(())
    }

    fn append_chat(&self, id: &SessionId, chat: &ChatRecord) -> Result<(), StoreError> {
        let usage = to_json(&chat.usage)?;
        let remembered = to_json(&chat.remembered)?;
        let rows = Rows::of(&chat.messages, &chat.events)?;
        let history = chat.history.as_ref().map(to_json).transpose()?;
        let paused = chat.paused.as_ref().map(to_json).transpose()?;
        let stop_reason = chat.stop_reason.map(|s| s.as_str());
        let fence = lock(&self.held).get(id).copied();
        let begun = chat.begun.map(|key| key.0);
        self.call_function(id, |client| {
            client.execute(
                "SELECT agentry_end_chat($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
                &[
                    &id.as_str(),
                    &begun,
                    &fence,
                    &now_rfc3339(),
                    &remembered,
                    &chat.title,
                    &stop_reason,
                    &usage,
                    &history,
                    &paused,
                    &rows.messages,
                    &rows.events,
                ],
            )
        })?;
        Ok(())
    }

    fn load(&self, id: &SessionId) -> Result<StoredSession, StoreError> {
        // One snapshot of the session, however its chats move meanwhile.
        let read = self.with(|client| {
            let mut tx = client
                .build_transaction()
                .isolation_level(postgres::IsolationLevel::RepeatableRead)
                .read_only(true)
                .start()?;
            let Some(row) = tx.query_opt(
                "SELECT id, cwd, title, created_at, updated_at, remembered
                 FROM agentry_sessions WHERE id = $1",
                &[&id.as_str()],
            )?
            else {
                return Ok(None);
            };
            // The history starts at the latest compaction, if any.
            let reset = tx
                .query_opt(
                    "SELECT id, history FROM agentry_chats
                     WHERE session_id = $1 AND history IS NOT NULL ORDER BY id DESC LIMIT 1",
                    &[&id.as_str()],
                )?
                .map(|row| (row.get(0), row.get(1)));
            // A running chat whose lease holds runs on its server; one whose lease lapsed (or
            // that never had one) was abandoned.
            let chats = tx
                .query(
                    "SELECT c.id, c.running,
                            COALESCE(c.fence = l.fence AND l.expires_at >= clock_timestamp(), FALSE)
                     FROM agentry_chats c
                     LEFT JOIN agentry_chat_leases l ON l.session_id = c.session_id
                     WHERE c.session_id = $1 ORDER BY c.id",
                    &[&id.as_str()],
                )?
                .iter()
                .map(|row| {
                    let state = match (row.get(1), row.get(2)) {
                        (true, true) => ChatState::RunningElsewhere,
                        (running, _) => ChatState::unleased(running),
                    };
                    (row.get(0), state)
                })
                .collect();
            let paused = tx
                .query_opt(
                    "SELECT paused FROM agentry_chats WHERE session_id = $1
                     ORDER BY id DESC LIMIT 1",
                    &[&id.as_str()],
                )?
                .and_then(|row| row.get(0));
            let messages = chat_rows(
                &mut tx,
                "agentry_messages",
                id,
                ReadBack::history_from(&reset),
            )?;
            let events = chat_rows(&mut tx, "agentry_events", id, 0)?;
            tx.commit()?;
            Ok(Some(ReadBack {
                meta: meta_from_row(&row),
                remembered: row.get(5),
                reset,
                chats,
                messages,
                events,
                paused,
            }))
        })?;
        read.ok_or_else(|| StoreError::NotFound(id.clone()))?
            .assemble(id)
    }

    fn meta(&self, id: &SessionId) -> Result<SessionMeta, StoreError> {
        let row = self.with(|client| {
            client
                .query_opt(
                    "SELECT id, cwd, title, created_at, updated_at FROM agentry_sessions
                     WHERE id = $1",
                    &[&id.as_str()],
                )
                .map(|row| row.as_ref().map(meta_from_row))
        })?;
        row.ok_or_else(|| StoreError::NotFound(id.clone()))
    }

    fn list(&self) -> Result<Vec<SessionMeta>, StoreError> {
        self.with(|client| {
            let rows = client.query(
                "SELECT id, cwd, title, created_at, updated_at FROM agentry_sessions
                 ORDER BY updated_at DESC, id",
                &[],
            )?;
            Ok(rows.iter().map(meta_from_row).collect())
        })
    }

    fn delete(&self, id: &SessionId) -> Result<(), StoreError> {
        let removed = self.with(|client| {
            client.execute(
                "DELETE FROM agentry_sessions WHERE id = $1",
                &[&id.as_str()],
            )
        })?;
        if removed == 0 {
            return Err(StoreError::NotFound(id.clone()));
        }
        Ok(())
    }

    fn rename(&self, id: &SessionId, title: &str) -> Result<(), StoreError> {
        let renamed = self.with(|client| {
            client.execute(
                "UPDATE agentry_sessions SET title = $2 WHERE id = $1",
                &[&id.as_str(), &title],
            )
        })?;
        if renamed == 0 {
            return Err(StoreError::NotFound(id.clone()));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Message;
    use crate::session::interrupted;
    use agentry_tests::servers::Postgres;
    use std::sync::Arc;

    fn opened(url: &str) -> Arc<dyn SessionStore> {
        Arc::new(PostgresStore::open(url).unwrap())
    }

    #[test]
    fn chats_append_in_order_and_survive_reconnecting() {
        let server = Postgres::start();
        let url = server.database();
        super::super::contract::check(opened(&url), || opened(&url));
    }

    #[test]
    fn a_chat_begun_and_never_ended_reads_as_interrupted_from_another_connection() {
        let server = Postgres::start();
        let url = server.database();
        super::super::contract::check_progress(opened(&url), || opened(&url));
    }

    #[test]
    fn servers_starting_together_migrate_once_and_the_schema_is_kept_up_to_date() {
        let server = Postgres::start();
        let url = server.database();
        let stores: Vec<_> = std::thread::scope(|scope| {
            let opening: Vec<_> = (0..4)
                .map(|_| scope.spawn(|| PostgresStore::open(&url)))
                .collect();
            opening.into_iter().map(|o| o.join().unwrap()).collect()
        });
        assert!(stores.iter().all(Result::is_ok));
        let name = url.rsplit('/').next().unwrap();
        let versions = server.sql(
            name,
            "SELECT string_agg(version::TEXT, ',') FROM agentry_schema",
        );
        let latest = MIGRATIONS.last().unwrap().0;
        assert_eq!(
            versions.trim(),
            (1..=latest)
                .map(|v| v.to_string())
                .collect::<Vec<_>>()
                .join(",")
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn it_is_called_from_async_code_and_reconnects_after_the_server_restarts() {
        let mut server = Postgres::start();
        let url = server.database();
        let store = PostgresStore::open(&url).unwrap();
        store.create(&contract_meta("s")).unwrap();
        // Dropped connected, inside the runtime: its connection closes without a panic.
        let other = PostgresStore::open(&url).unwrap();
        assert_eq!(other.list().unwrap().len(), 1);
        drop(other);
        server.restart();
        // The first call after the restart may find its connection closed; the store then
        // connects anew.
        let _ = store.list();
        assert_eq!(store.list().unwrap()[0].id.as_str(), "s");
        server.stop();
        let Err(StoreError::Server { address, message }) = store.list() else {
            panic!("a stopped server is an error");
        };
        assert_eq!(
            address,
            format!(
                "postgres://agentry@127.0.0.1:{}/{}",
                server.port(),
                url.rsplit('/').next().unwrap()
            )
        );
        assert!(!message.is_empty());
    }

    #[test]
    fn one_server_holds_a_sessions_lease_until_it_lapses_and_a_lapsed_holder_is_told() {
        let server = Postgres::start();
        let url = server.database();
        let (a, b) = (opened(&url), opened(&url));
        let (a, b) = (a.leases().unwrap(), b.leases().unwrap());
        let id: SessionId = "s".into();
        let long = Duration::from_secs(30);
        let held = a
            .claim(&id, "a", long)
            .unwrap()
            .expect("a free session is claimed");
        assert_eq!(
            b.claim(&id, "b", long).unwrap(),
            None,
            "a live lease is kept"
        );
        assert!(a.renew(&held, long, 7).unwrap());
        // Another session is free meanwhile.
        assert!(b.claim(&"other".into(), "b", long).unwrap().is_some());
        // Released, the session is free at once, and its next holder numbers after the last.
        a.release(&held, 9).unwrap();
        let short = Duration::from_millis(200);
        let lapsing = b.claim(&id, "b", short).unwrap().expect("released");
        assert!(lapsing.fence > held.fence);
        assert_eq!(lapsing.last_sequence, 9);
        assert!(lapsing.first_sequence() > held.first_sequence());
        std::thread::sleep(Duration::from_millis(400));
        // Lapsed: another server takes it over, and the old holder can neither renew nor
        // release the new lease.
        let taken = a
            .claim(&id, "a", long)
            .unwrap()
            .expect("a lapsed lease is taken over");
        assert!(taken.fence > lapsing.fence);
        assert!(!b.renew(&lapsing, long, 10).unwrap());
        b.release(&lapsing, 10).unwrap();
        assert_eq!(b.claim(&id, "b", long).unwrap(), None);
        assert!(a.renew(&taken, long, 11).unwrap());
        assert_eq!(a.last_sequence(&id).unwrap(), 11);
        assert_eq!(a.last_sequence(&"never".into()).unwrap(), 0);
    }

    #[test]
    fn a_chat_runs_elsewhere_while_its_lease_holds_and_once_swept_its_late_writes_are_refused() {
        let server = Postgres::start();
        let url = server.database();
        let (a, b) = (opened(&url), opened(&url));
        let id: SessionId = "s".into();
        a.create(&contract_meta("s")).unwrap();
        let short = Duration::from_millis(300);
        let lease = a.leases().unwrap().claim(&id, "a", short).unwrap().unwrap();
        let chat = a
            .begin_chat(&id, None, &progress("asked"))
            .unwrap()
            .unwrap();
        // While A holds the lease, B reads the session without A's chat: it is not over.
        let seen = b.load(&id).unwrap();
        assert!(
            seen.messages.is_empty() && seen.events.is_empty(),
            "{seen:?}"
        );
        // Nothing lapsed yet: nothing to sweep.
        assert_eq!(b.leases().unwrap().sweep("b", short).unwrap(), []);
        a.continue_chat(&id, chat, &progress("a round")).unwrap();
        // A is paused past its lease: B sweeps it, and A's chat now reads as interrupted.
        std::thread::sleep(Duration::from_millis(500));
        let swept = b.leases().unwrap().sweep("b", short).unwrap();
        assert_eq!(swept.len(), 1);
        assert_eq!(
            (swept[0].session.as_str(), swept[0].owner.as_str()),
            ("s", "b")
        );
        assert!(swept[0].fence > lease.fence);
        assert_eq!(
            b.leases().unwrap().sweep("b", short).unwrap(),
            [],
            "swept once"
        );
        let (note, mark) = interrupted(&id);
        let seen = b.load(&id).unwrap();
        assert_eq!(
            seen.messages,
            [
                Message::user_text("asked"),
                Message::user_text("a round"),
                note
            ]
        );
        assert_eq!(seen.events.last(), Some(&mark));
        // A, going on, is refused: neither a round nor the chat's end is recorded.
        let late = a.continue_chat(&id, chat, &progress("late round"));
        assert!(matches!(late, Err(StoreError::LeaseLost(_))), "{late:?}");
        let mut end = contract_record("late end");
        end.begun = Some(chat);
        let late = a.append_chat(&id, &end);
        assert!(matches!(late, Err(StoreError::LeaseLost(_))), "{late:?}");
        assert!(!a.leases().unwrap().renew(&lease, short, 1).unwrap());
        // B tells its clients, gives the session up, and the next chat (on A) runs.
        b.leases().unwrap().release(&swept[0], 5).unwrap();
        let again = a.leases().unwrap().claim(&id, "a", short).unwrap().unwrap();
        assert_eq!(again.last_sequence, 5);
        let next = a.begin_chat(&id, None, &progress("next")).unwrap().unwrap();
        let mut end = contract_record("next end");
        end.begun = Some(next);
        a.append_chat(&id, &end).unwrap();
        a.leases().unwrap().release(&again, 6).unwrap();
        let seen = b.load(&id).unwrap();
        assert_eq!(seen.messages.len(), 5, "{:?}", seen.messages);
        assert_eq!(seen.messages[4], Message::user_text("next end"));
        // A lease this store no longer holds fences nothing: a chat without one is recorded.
        a.append_chat(&id, &contract_record("unleased")).unwrap();
        assert_eq!(b.load(&id).unwrap().messages.len(), 6);
    }

    #[test]
    fn a_url_that_is_not_one_or_a_password_is_never_shown() {
        let Err(StoreError::Server { message, .. }) = PostgresStore::open("mysql://x") else {
            panic!("not a PostgreSQL URL");
        };
        assert!(message.contains("not a PostgreSQL URL"), "{message}");
        let Err(refused) = PostgresStore::open("postgres://me:s3cret@127.0.0.1:1/db") else {
            panic!("nothing listens on port 1");
        };
        let said = refused.to_string();
        assert!(said.contains("postgres://me@127.0.0.1:1/db"), "{said}");
        assert!(!said.contains("s3cret"), "{said}");
    }

    fn progress(text: &str) -> ChatProgress {
        ChatProgress {
            messages: vec![Message::user_text(text)],
            events: Vec::new(),
            history: None,
        }
    }

    fn contract_record(text: &str) -> ChatRecord {
        ChatRecord {
            begun: None,
            messages: vec![Message::user_text(text)],
            events: Vec::new(),
            stop_reason: Some(crate::event::StopReason::EndTurn),
            usage: crate::event::Usage::default(),
            remembered: crate::permission::RememberedAnswers::default(),
            title: None,
            history: None,
            paused: None,
        }
    }

    fn contract_meta(id: &str) -> SessionMeta {
        SessionMeta {
            id: id.into(),
            cwd: "/p".into(),
            title: None,
            created_at: now_rfc3339(),
            updated_at: now_rfc3339(),
        }
    }
}
