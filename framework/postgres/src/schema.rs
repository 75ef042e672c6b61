//! The PostgreSQL store's schema: its versions in order, and how a server brings a database up
//! to date (one server at a time).

use postgres::Client;

/// The schema's versions, in order: the version each step brings the database to, and its SQL.
/// Tables are prefixed so that a database shared with other programs stays readable.
pub(super) const MIGRATIONS: &[(i32, &str)] = &[
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
    // Checkpoints kept with their chats, and rewinds: the chats from one on left out.
    (
        5,
        "ALTER TABLE agentry_chats ADD COLUMN rewound BOOLEAN NOT NULL DEFAULT FALSE;
        ALTER TABLE agentry_chats ADD COLUMN checkpoint TEXT;
        CREATE FUNCTION agentry_rewind(p_session TEXT, p_chat BIGINT) RETURNS VOID
        LANGUAGE plpgsql AS $$
        BEGIN
            PERFORM 1 FROM agentry_chats WHERE id = p_chat AND session_id = p_session;
            IF NOT FOUND THEN
                RAISE EXCEPTION 'no chat % in session %', p_chat, p_session USING ERRCODE = 'AG002';
            END IF;
            UPDATE agentry_chats SET rewound = TRUE WHERE session_id = p_session AND id >= p_chat;
        END $$;",
    ),
];

/// The advisory lock that servers starting together take in turn to migrate the schema.
const MIGRATION_LOCK: i64 = 0x0061_6765_6e74_7279;

/// Brings the schema up to date under an advisory lock, so that servers starting together
/// migrate one after another.
pub(super) fn migrate(client: &mut Client) -> Result<(), postgres::Error> {
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
