//! # agentry-postgres
//!
//! [`PostgresStore`]: an agent's sessions in a PostgreSQL database that several servers share.
//! The same records as `agentry-sqlite`'s store, one transaction per recorded step of a chat; the
//! store creates its tables and brings them up to date itself, one server at a time.

mod leases;
mod schema;

use agentry::checkpoint::ChatCheckpoint;
use agentry::ids::SessionId;
use agentry::session::lease::ChatLeases;
use agentry::session::rows::{ChatRows, ChatState, ReadBack, Rows, to_json};
use agentry::session::{
    ChatKey, ChatProgress, ChatRecord, SessionMeta, SessionStore, StoreError, StoredSession,
    now_rfc3339,
};
use agentry::sync::lock;
use postgres::{Client, GenericClient, NoTls, Row};
use std::collections::HashMap;
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::Mutex;

/// A [`SessionStore`] in a PostgreSQL database, keeping the [`ChatLeases`] of the servers that
/// share it; a chat begun while this store holds its session's lease carries the lease's fence,
/// and its writes are refused once the lease has lapsed or passed on.
///
/// Its calls block, as the SQLite store's do. The `postgres` client runs a runtime of its own,
/// which may not start inside another's, so each call runs on a short-lived thread of its own
/// while the caller waits; a caller on a worker of tokio's multi-threaded runtime hands the
/// worker's other tasks to another thread meanwhile, so a server's other chats go on. A
/// connection that breaks is made anew at the next call: a server that was unreachable for a
/// while is used again when it returns.
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
        store.with(schema::migrate)?;
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
            Err(panic) => Err(StoreError::Panicked(agentry::sync::panic_message(&*panic))),
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

fn meta_from_row(row: &Row) -> SessionMeta {
    SessionMeta {
        id: SessionId(row.get(0)),
        cwd: PathBuf::from(row.get::<_, String>(1)),
        title: row.get(2),
        created_at: row.get(3),
        updated_at: row.get(4),
    }
}

/// A finished chat's fields as `agentry_end_chat` takes them.
struct EndChat {
    begun: Option<i64>,
    fence: Option<i64>,
    remembered: String,
    title: Option<String>,
    stop_reason: Option<&'static str>,
    usage: String,
    history: Option<String>,
    paused: Option<String>,
    rows: Rows,
}

impl EndChat {
    /// `chat`'s fields, under the lease numbered `fence` when this server holds one.
    fn of(chat: &ChatRecord, fence: Option<i64>) -> Result<Self, StoreError> {
        Ok(Self {
            begun: chat.begun.map(|key| key.0),
            fence,
            remembered: to_json(&chat.remembered)?,
            title: chat.title.clone(),
            stop_reason: chat.stop_reason.map(|s| s.as_str()),
            usage: to_json(&chat.usage)?,
            history: chat.history.as_ref().map(to_json).transpose()?,
            paused: chat.paused.as_ref().map(to_json).transpose()?,
            rows: Rows::of(&chat.messages, &chat.events)?,
        })
    }

    /// Appends the chat (or ends the begun one) to session `id`.
    fn run(&self, client: &mut impl GenericClient, id: &SessionId) -> Result<(), postgres::Error> {
        client.execute(
            "SELECT agentry_end_chat($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
            &[
                &id.as_str(),
                &self.begun,
                &self.fence,
                &now_rfc3339(),
                &self.remembered,
                &self.title,
                &self.stop_reason,
                &self.usage,
                &self.history,
                &self.paused,
                &self.rows.messages,
                &self.rows.events,
            ],
        )?;
        Ok(())
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
             WHERE ch.session_id = $1 AND ch.id >= $2 AND NOT ch.rewound
             ORDER BY ch.id, t.seq"
        ),
        &[&id.as_str(), &from_chat],
    )?;
    Ok(rows.iter().map(|row| (row.get(0), row.get(1))).collect())
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
        let end = EndChat::of(chat, lock(&self.held).get(id).copied())?;
        self.call_function(id, |client| end.run(client, id))
    }

    fn save_checkpoint(
        &self,
        id: &SessionId,
        chat: ChatKey,
        checkpoint: &ChatCheckpoint,
    ) -> Result<(), StoreError> {
        let checkpoint = to_json(checkpoint)?;
        let saved = self.with(|client| {
            client.execute(
                "UPDATE agentry_chats SET checkpoint = $3 WHERE id = $1 AND session_id = $2",
                &[&chat.0, &id.as_str(), &checkpoint],
            )
        })?;
        if saved == 0 {
            return Err(StoreError::NotFound(id.clone()));
        }
        Ok(())
    }

    fn rewind(&self, id: &SessionId, chat: ChatKey, rewind: &ChatRecord) -> Result<(), StoreError> {
        let end = EndChat::of(rewind, lock(&self.held).get(id).copied())?;
        self.call_function(id, |client| {
            let mut tx = client.transaction()?;
            tx.execute("SELECT agentry_rewind($1, $2)", &[&id.as_str(), &chat.0])?;
            end.run(&mut tx, id)?;
            tx.commit()
        })
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
                     WHERE session_id = $1 AND history IS NOT NULL AND NOT rewound
                     ORDER BY id DESC LIMIT 1",
                    &[&id.as_str()],
                )?
                .map(|row| (row.get(0), row.get(1)));
            // A running chat whose lease holds runs on its server; one whose lease lapsed (or
            // that never had one) was abandoned.
            let mut checkpoints = HashMap::new();
            let chats = tx
                .query(
                    "SELECT c.id, c.running,
                            COALESCE(c.fence = l.fence AND l.expires_at >= clock_timestamp(), FALSE),
                            c.checkpoint
                     FROM agentry_chats c
                     LEFT JOIN agentry_chat_leases l ON l.session_id = c.session_id
                     WHERE c.session_id = $1 AND NOT c.rewound ORDER BY c.id",
                    &[&id.as_str()],
                )?
                .iter()
                .map(|row| {
                    let state = match (row.get(1), row.get(2)) {
                        (true, true) => ChatState::RunningElsewhere,
                        (running, _) => ChatState::unleased(running),
                    };
                    if let Some(checkpoint) = row.get::<_, Option<String>>(3) {
                        checkpoints.insert(row.get(0), checkpoint);
                    }
                    (row.get(0), state)
                })
                .collect();
            let paused = tx
                .query_opt(
                    "SELECT paused FROM agentry_chats WHERE session_id = $1 AND NOT rewound
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
                checkpoints,
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
mod tests;
