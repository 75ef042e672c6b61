//! # agentry-sqlite
//!
//! [`SqliteStore`]: an agent's sessions in an embedded SQLite file (WAL journal, one transaction
//! per recorded step of a chat), for [`AgentBuilder::store`](agentry::agent::AgentBuilder::store).
//! A chat's row is `running` from its beginning until it is appended.

use agentry::checkpoint::ChatCheckpoint;
use agentry::ids::SessionId;
use agentry::session::rows::{ChatRows, ChatState, ReadBack, Rows, to_json};
use agentry::session::{
    ChatKey, ChatProgress, ChatRecord, SessionMeta, SessionStore, StoreError, StoredSession,
    now_rfc3339,
};
use agentry::sync::lock;
use rusqlite::{Connection, OptionalExtension, params};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS sessions (
    id          TEXT PRIMARY KEY,
    cwd         TEXT NOT NULL,
    title       TEXT,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    remembered  TEXT NOT NULL DEFAULT '{\"allowed\":[],\"rejected\":[]}'
);
CREATE TABLE IF NOT EXISTS chats (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id  TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    stop_reason TEXT,
    usage       TEXT NOT NULL,
    created_at  TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS chats_by_session ON chats(session_id, id);
CREATE TABLE IF NOT EXISTS messages (
    chat_id     INTEGER NOT NULL REFERENCES chats(id) ON DELETE CASCADE,
    seq         INTEGER NOT NULL,
    body        TEXT NOT NULL,
    PRIMARY KEY (chat_id, seq)
);
CREATE TABLE IF NOT EXISTS events (
    chat_id     INTEGER NOT NULL REFERENCES chats(id) ON DELETE CASCADE,
    seq         INTEGER NOT NULL,
    body        TEXT NOT NULL,
    PRIMARY KEY (chat_id, seq)
);
";

/// Migrations, in order: the schema version each one brings the database to, and its SQL.
const MIGRATIONS: &[(i64, &str)] = &[
    (2, "ALTER TABLE chats ADD COLUMN history TEXT"),
    (3, "ALTER TABLE chats ADD COLUMN paused TEXT"),
    (
        4,
        "ALTER TABLE chats ADD COLUMN running INTEGER NOT NULL DEFAULT 0",
    ),
    (
        5,
        "ALTER TABLE chats ADD COLUMN rewound INTEGER NOT NULL DEFAULT 0;
         ALTER TABLE chats ADD COLUMN checkpoint TEXT;",
    ),
];

/// A [`SessionStore`] in one SQLite file.
pub struct SqliteStore {
    path: PathBuf,
    connection: Mutex<Connection>,
}

impl SqliteStore {
    /// Opens (creating it and its folder when needed) the database at `path`.
    pub fn open(path: impl Into<PathBuf>) -> Result<Self, StoreError> {
        let path = path.into();
        let db_error = |e: &dyn std::fmt::Display| StoreError::Database {
            path: path.clone(),
            message: e.to_string(),
        };
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            agentry_plugin::private::create_folder(parent).map_err(|e| db_error(&e))?;
        }
        // Conversations and tool outputs are the user's alone: the file is made 0600 (SQLite
        // gives its -wal and -shm files the same mode), and one made looser before is tightened.
        if !path.exists() {
            let _ = agentry_plugin::private::file_options()
                .write(true)
                .create_new(true)
                .open(&path);
        }
        let connection = Connection::open(&path)
            .and_then(|connection| {
                connection.pragma_update(None, "journal_mode", "WAL")?;
                connection.pragma_update(None, "synchronous", "NORMAL")?;
                connection.pragma_update(None, "foreign_keys", "ON")?;
                connection.busy_timeout(std::time::Duration::from_secs(5))?;
                connection.execute_batch(SCHEMA)?;
                migrate(&connection)?;
                Ok(connection)
            })
            .map_err(|e| match unwritable_folder(&path) {
                Some(why) => db_error(&format!("{e} ({why})")),
                None => db_error(&e),
            })?;
        for file in [path.clone(), sidecar(&path, "-wal"), sidecar(&path, "-shm")] {
            if file.exists() {
                agentry_plugin::private::file(&file).map_err(|e| db_error(&e))?;
            }
        }
        Ok(Self {
            path,
            connection: Mutex::new(connection),
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn with<T>(
        &self,
        work: impl FnOnce(&mut Connection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut connection = lock(&self.connection);
        work(&mut connection)
    }

    fn db(&self, error: rusqlite::Error) -> StoreError {
        StoreError::Database {
            path: self.path.clone(),
            message: error.to_string(),
        }
    }
}

/// The database's `-wal` or `-shm` file.
fn sidecar(database: &Path, suffix: &str) -> PathBuf {
    let mut name = database.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// Why the database's folder cannot be written in (SQLite needs to, for its write-ahead log),
/// when it cannot: the usual reason a database will not open.
fn unwritable_folder(database: &Path) -> Option<String> {
    let folder = database
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let probe = folder.join(format!(".agentry-write-probe-{}", std::process::id()));
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
    {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            None
        }
        Err(e) => Some(format!(
            "the folder {} is not writable: {e}",
            folder.display()
        )),
    }
}

impl SqliteStore {
    /// Sets the session's `updated_at`, remembered answers (when given) and title (when it has
    /// none); `NotFound` when there is no such session.
    fn touch(
        &self,
        tx: &rusqlite::Transaction<'_>,
        id: &SessionId,
        remembered: Option<&str>,
        title: Option<&str>,
    ) -> Result<(), StoreError> {
        let updated = tx
            .execute(
                "UPDATE sessions SET updated_at = ?2, remembered = COALESCE(?3, remembered), title = COALESCE(title, ?4) WHERE id = ?1",
                params![id.as_str(), now_rfc3339(), remembered, title],
            )
            .map_err(|e| self.db(e))?;
        if updated == 0 {
            return Err(StoreError::NotFound(id.clone()));
        }
        Ok(())
    }

    /// Checks that `chat` is a running chat of session `id`.
    fn running_chat(
        &self,
        tx: &rusqlite::Transaction<'_>,
        id: &SessionId,
        chat: ChatKey,
    ) -> Result<(), StoreError> {
        let running: Option<bool> = tx
            .query_row(
                "SELECT running FROM chats WHERE id = ?1 AND session_id = ?2",
                params![chat.0, id.as_str()],
                |row| row.get(0),
            )
            .optional()
            .map_err(|e| self.db(e))?;
        match running {
            Some(true) => Ok(()),
            Some(false) => Err(StoreError::Corrupt(format!(
                "chat {} of session `{id}` has ended already",
                chat.0
            ))),
            None => Err(StoreError::NotFound(id.clone())),
        }
    }

    /// When the chat compacted the history (`history` is its JSON): keeps it as the history
    /// before the chat's messages, which are then recorded anew.
    fn restart_history(
        &self,
        tx: &rusqlite::Transaction<'_>,
        chat: i64,
        history: Option<&str>,
    ) -> Result<(), StoreError> {
        if let Some(history) = history {
            tx.execute(
                "UPDATE chats SET history = ?2 WHERE id = ?1",
                params![chat, history],
            )
            .and_then(|_| tx.execute("DELETE FROM messages WHERE chat_id = ?1", params![chat]))
            .map_err(|e| self.db(e))?;
        }
        Ok(())
    }

    /// Appends one finished chat (or ends a begun one) within `tx`.
    fn append_in(
        &self,
        tx: &rusqlite::Transaction<'_>,
        id: &SessionId,
        chat: &ChatRecord,
    ) -> Result<(), StoreError> {
        let usage = to_json(&chat.usage)?;
        let remembered = to_json(&chat.remembered)?;
        let rows = Rows::of(&chat.messages, &chat.events)?;
        let history = chat.history.as_ref().map(to_json).transpose()?;
        let paused = chat.paused.as_ref().map(to_json).transpose()?;
        let stop_reason = chat.stop_reason.map(|s| s.as_str());
        self.touch(tx, id, Some(&remembered), chat.title.as_deref())?;
        let chat_id = match chat.begun {
            Some(begun) => {
                self.running_chat(tx, id, begun)?;
                self.restart_history(tx, begun.0, history.as_deref())?;
                tx.execute(
                    "UPDATE chats SET stop_reason = ?2, usage = ?3, paused = ?4, running = 0 WHERE id = ?1",
                    params![begun.0, stop_reason, usage, paused],
                )
                .map_err(|e| self.db(e))?;
                begun.0
            }
            None => {
                tx.execute(
                    "INSERT INTO chats (session_id, stop_reason, usage, created_at, history, paused) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                    params![id.as_str(), stop_reason, usage, now_rfc3339(), history, paused],
                )
                .map_err(|e| self.db(e))?;
                tx.last_insert_rowid()
            }
        };
        self.insert_rows(tx, chat_id, &rows)
    }

    /// Adds `rows` to chat `chat`, after the rows it has.
    fn insert_rows(
        &self,
        tx: &rusqlite::Transaction<'_>,
        chat: i64,
        rows: &Rows,
    ) -> Result<(), StoreError> {
        for (table, bodies) in [("messages", &rows.messages), ("events", &rows.events)] {
            let next: i64 = tx
                .query_row(
                    &format!("SELECT COALESCE(MAX(seq) + 1, 0) FROM {table} WHERE chat_id = ?1"),
                    params![chat],
                    |row| row.get(0),
                )
                .map_err(|e| self.db(e))?;
            let mut insert = tx
                .prepare_cached(&format!(
                    "INSERT INTO {table} (chat_id, seq, body) VALUES (?1, ?2, ?3)"
                ))
                .map_err(|e| self.db(e))?;
            for (seq, body) in (next..).zip(bodies.iter()) {
                insert
                    .execute(params![chat, seq, body])
                    .map_err(|e| self.db(e))?;
            }
        }
        Ok(())
    }
}

/// Brings a database of an older schema up to date, one version at a time.
fn migrate(connection: &Connection) -> rusqlite::Result<()> {
    let version: i64 = connection.pragma_query_value(None, "user_version", |row| row.get(0))?;
    for (target, sql) in MIGRATIONS.iter().filter(|(target, _)| *target > version) {
        connection.execute_batch(sql)?;
        connection.pragma_update(None, "user_version", target)?;
    }
    Ok(())
}

fn meta_from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<SessionMeta> {
    Ok(SessionMeta {
        id: SessionId(row.get(0)?),
        cwd: PathBuf::from(row.get::<_, String>(1)?),
        title: row.get(2)?,
        created_at: row.get(3)?,
        updated_at: row.get(4)?,
    })
}

impl SessionStore for SqliteStore {
    fn ping(&self) -> Result<(), StoreError> {
        self.with(|c| {
            c.query_row("SELECT count(*) FROM sessions", [], |_| Ok(()))
                .map_err(|e| self.db(e))
        })
    }

    fn create(&self, meta: &SessionMeta) -> Result<(), StoreError> {
        self.with(|c| {
            c.execute(
                "INSERT INTO sessions (id, cwd, title, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5)",
                params![
                    meta.id.as_str(),
                    meta.cwd.to_string_lossy(),
                    meta.title,
                    meta.created_at,
                    meta.updated_at
                ],
            )
            .map_err(|e| self.db(e))?;
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
        self.with(|c| {
            let tx = c.transaction().map_err(|e| self.db(e))?;
            self.touch(&tx, id, None, title)?;
            tx.execute(
                "INSERT INTO chats (session_id, usage, created_at, history, running) VALUES (?1, '{}', ?2, ?3, 1)",
                params![id.as_str(), now_rfc3339(), history],
            )
            .map_err(|e| self.db(e))?;
            let chat = tx.last_insert_rowid();
            self.insert_rows(&tx, chat, &rows)?;
            tx.commit().map_err(|e| self.db(e))?;
            Ok(Some(ChatKey(chat)))
        })
    }

    fn continue_chat(
        &self,
        id: &SessionId,
        chat: ChatKey,
        more: &ChatProgress,
    ) -> Result<(), StoreError> {
        let rows = Rows::of(&more.messages, &more.events)?;
        let history = more.history.as_ref().map(to_json).transpose()?;
        self.with(|c| {
            let tx = c.transaction().map_err(|e| self.db(e))?;
            self.running_chat(&tx, id, chat)?;
            self.touch(&tx, id, None, None)?;
            self.restart_history(&tx, chat.0, history.as_deref())?;
            self.insert_rows(&tx, chat.0, &rows)?;
            tx.commit().map_err(|e| self.db(e))
        })
    }

    fn append_chat(&self, id: &SessionId, chat: &ChatRecord) -> Result<(), StoreError> {
        self.with(|c| {
            let tx = c.transaction().map_err(|e| self.db(e))?;
            self.append_in(&tx, id, chat)?;
            tx.commit().map_err(|e| self.db(e))
        })
    }

    fn save_checkpoint(
        &self,
        id: &SessionId,
        chat: ChatKey,
        checkpoint: &ChatCheckpoint,
    ) -> Result<(), StoreError> {
        let checkpoint = to_json(checkpoint)?;
        self.with(|c| {
            let saved = c
                .execute(
                    "UPDATE chats SET checkpoint = ?3 WHERE id = ?1 AND session_id = ?2",
                    params![chat.0, id.as_str(), checkpoint],
                )
                .map_err(|e| self.db(e))?;
            if saved == 0 {
                return Err(StoreError::NotFound(id.clone()));
            }
            Ok(())
        })
    }

    fn rewind(&self, id: &SessionId, chat: ChatKey, rewind: &ChatRecord) -> Result<(), StoreError> {
        self.with(|c| {
            let tx = c.transaction().map_err(|e| self.db(e))?;
            let cut = tx
                .execute(
                    "UPDATE chats SET rewound = 1 WHERE session_id = ?1 AND id >= ?2
                     AND EXISTS (SELECT 1 FROM chats WHERE id = ?2 AND session_id = ?1)",
                    params![id.as_str(), chat.0],
                )
                .map_err(|e| self.db(e))?;
            if cut == 0 {
                return Err(StoreError::NotFound(id.clone()));
            }
            self.append_in(&tx, id, rewind)?;
            tx.commit().map_err(|e| self.db(e))
        })
    }

    fn load(&self, id: &SessionId) -> Result<StoredSession, StoreError> {
        self.with(|c| {
            let row = c
                .query_row(
                    "SELECT id, cwd, title, created_at, updated_at, remembered FROM sessions WHERE id = ?1",
                    params![id.as_str()],
                    |row| Ok((meta_from_row(row)?, row.get::<_, String>(5)?)),
                )
                .optional()
                .map_err(|e| self.db(e))?;
            let (meta, remembered) = row.ok_or_else(|| StoreError::NotFound(id.clone()))?;
            // The history starts at the latest compaction, if any.
            let reset: Option<(i64, String)> = c
                .query_row(
                    "SELECT id, history FROM chats WHERE session_id = ?1 AND history IS NOT NULL AND rewound = 0 ORDER BY id DESC LIMIT 1",
                    params![id.as_str()],
                    |row| Ok((row.get(0)?, row.get(1)?)),
                )
                .optional()
                .map_err(|e| self.db(e))?;
            let rows = |table: &str, from_chat: i64| -> Result<ChatRows, StoreError> {
                let mut query = c
                    .prepare(&format!(
                        "SELECT t.chat_id, t.body FROM {table} t JOIN chats ch ON ch.id = t.chat_id
                         WHERE ch.session_id = ?1 AND ch.id >= ?2 AND ch.rewound = 0
                         ORDER BY ch.id, t.seq"
                    ))
                    .map_err(|e| self.db(e))?;
                let rows = query
                    .query_map(params![id.as_str(), from_chat], |row| {
                        Ok((row.get(0)?, row.get(1)?))
                    })
                    .map_err(|e| self.db(e))?;
                rows.collect::<Result<Vec<_>, _>>().map_err(|e| self.db(e))
            };
            let mut checkpoints = HashMap::new();
            let chats: Vec<(i64, ChatState)> = {
                let mut query = c
                    .prepare(
                        "SELECT id, running, checkpoint FROM chats
                         WHERE session_id = ?1 AND rewound = 0 ORDER BY id",
                    )
                    .map_err(|e| self.db(e))?;
                let rows = query
                    .query_map(params![id.as_str()], |row| {
                        let chat: i64 = row.get(0)?;
                        if let Some(checkpoint) = row.get::<_, Option<String>>(2)? {
                            checkpoints.insert(chat, checkpoint);
                        }
                        Ok((chat, ChatState::unleased(row.get(1)?)))
                    })
                    .map_err(|e| self.db(e))?;
                rows.collect::<Result<_, _>>().map_err(|e| self.db(e))?
            };
            let paused: Option<String> = c
                .query_row(
                    "SELECT paused FROM chats WHERE session_id = ?1 AND rewound = 0 ORDER BY id DESC LIMIT 1",
                    params![id.as_str()],
                    |row| row.get(0),
                )
                .optional()
                .map_err(|e| self.db(e))?
                .flatten();
            let messages = rows("messages", ReadBack::history_from(&reset))?;
            ReadBack {
                meta,
                remembered,
                reset,
                chats,
                messages,
                events: rows("events", 0)?,
                paused,
                checkpoints,
            }
            .assemble(id)
        })
    }

    fn meta(&self, id: &SessionId) -> Result<SessionMeta, StoreError> {
        self.with(|c| {
            c.query_row(
                "SELECT id, cwd, title, created_at, updated_at FROM sessions WHERE id = ?1",
                params![id.as_str()],
                meta_from_row,
            )
            .optional()
            .map_err(|e| self.db(e))?
            .ok_or_else(|| StoreError::NotFound(id.clone()))
        })
    }

    fn list(&self) -> Result<Vec<SessionMeta>, StoreError> {
        self.with(|c| {
            let mut query = c
                .prepare(
                    "SELECT id, cwd, title, created_at, updated_at FROM sessions ORDER BY updated_at DESC, id",
                )
                .map_err(|e| self.db(e))?;
            let rows = query.query_map([], meta_from_row).map_err(|e| self.db(e))?;
            rows.collect::<Result<Vec<_>, _>>().map_err(|e| self.db(e))
        })
    }

    fn delete(&self, id: &SessionId) -> Result<(), StoreError> {
        self.with(|c| {
            let removed = c
                .execute("DELETE FROM sessions WHERE id = ?1", params![id.as_str()])
                .map_err(|e| self.db(e))?;
            if removed == 0 {
                Err(StoreError::NotFound(id.clone()))
            } else {
                Ok(())
            }
        })
    }

    fn rename(&self, id: &SessionId, title: &str) -> Result<(), StoreError> {
        self.with(|c| {
            let renamed = c
                .execute(
                    "UPDATE sessions SET title = ?2 WHERE id = ?1",
                    params![id.as_str(), title],
                )
                .map_err(|e| self.db(e))?;
            if renamed == 0 {
                Err(StoreError::NotFound(id.clone()))
            } else {
                Ok(())
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn chats_append_in_order_and_survive_reopening() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nested/sessions.db");
        let store: Arc<dyn SessionStore> = Arc::new(SqliteStore::open(&path).unwrap());
        agentry::testing::stores::check(store, || {
            Arc::new(SqliteStore::open(&path).unwrap()) as Arc<dyn SessionStore>
        });
    }

    #[test]
    fn a_rewind_leaves_the_later_chats_out_after_reopening() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sessions.db");
        let store: Arc<dyn SessionStore> = Arc::new(SqliteStore::open(&path).unwrap());
        agentry::testing::stores::check_rewind(store, || {
            Arc::new(SqliteStore::open(&path).unwrap()) as Arc<dyn SessionStore>
        });
    }

    #[test]
    fn a_chat_begun_and_never_ended_reads_as_interrupted_after_reopening() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sessions.db");
        let store: Arc<dyn SessionStore> = Arc::new(SqliteStore::open(&path).unwrap());
        agentry::testing::stores::check_progress(store, || {
            Arc::new(SqliteStore::open(&path).unwrap()) as Arc<dyn SessionStore>
        });
    }
}
