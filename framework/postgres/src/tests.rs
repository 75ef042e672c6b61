//! The PostgreSQL store against a throwaway server.

use super::*;
use agentry::model::Message;
use agentry::session::interrupted;
use agentry_tests::servers::Postgres;
use std::sync::Arc;
use std::time::Duration;

fn opened(url: &str) -> Arc<dyn SessionStore> {
    Arc::new(PostgresStore::open(url).unwrap())
}

#[test]
fn chats_append_in_order_and_survive_reconnecting() {
    let server = Postgres::start();
    let url = server.database();
    agentry::testing::stores::check(opened(&url), || opened(&url));
}

#[test]
fn a_chat_begun_and_never_ended_reads_as_interrupted_from_another_connection() {
    let server = Postgres::start();
    let url = server.database();
    agentry::testing::stores::check_progress(opened(&url), || opened(&url));
}

#[test]
fn a_rewind_leaves_the_later_chats_out_from_another_connection() {
    let server = Postgres::start();
    let url = server.database();
    agentry::testing::stores::check_rewind(opened(&url), || opened(&url));
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
    let latest = schema::MIGRATIONS.last().unwrap().0;
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
        stop_reason: Some(agentry::event::StopReason::EndTurn),
        usage: agentry::event::Usage::default(),
        remembered: agentry::permission::RememberedAnswers::default(),
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
