//! Serving many users: `agentry serve` instances sharing one PostgreSQL store (a throwaway
//! server of Debian's, on loopback), and the other front-ends on the same store.

use super::{Server, events, send, wait_for};
use crate::{run_openai, sandbox};
use agentry_tests::mock_model::{MockModelServer, MockReply, MockTurn};
use agentry_tests::servers::Postgres;
use serde_json::json;
use std::time::Duration;

/// Runs a chat of session `id` on `server` through the REST API, which must complete.
fn chat(server: &Server, id: &str, message: &str) {
    let (status, end) = server.call(
        "POST",
        &format!("/api/sessions/{id}/chat"),
        Some(json!({ "message": message })),
    );
    assert_eq!(
        (status, &end["status"]),
        (200, &json!("completed")),
        "{end}"
    );
}

#[test]
fn instances_on_one_postgres_store_give_the_same_sessions_and_messages() {
    let postgres = Postgres::start();
    let store = postgres.database();
    let sb = sandbox();
    let model = MockModelServer::start_blocking([
        MockTurn::Reply(MockReply::text("Kept in PostgreSQL.")),
        MockTurn::Reply(MockReply::text("Answered by the other instance.")),
        MockTurn::Reply(MockReply::text("Back on the first.")),
    ]);
    // A is given the store with the flag, B by the configuration's `[serve] store`.
    sb.write(
        "project/.agentry/config.toml",
        &format!("[serve]\nstore = {store:?}\n"),
    );
    let token = ["--token", "shared-token"];
    let a = Server::start(&sb, &model, &[&token[..], &["--store", &store]].concat());
    let b = Server::start(&sb, &model, &token);
    let id = a.new_session(&sb);
    chat(&a, &id, "Where is this kept?");
    let listed = |server: &Server| server.call("GET", "/api/sessions", None).1["sessions"].clone();
    assert_eq!(listed(&a)[0]["session_id"], id.as_str());
    assert_eq!(listed(&a), listed(&b));
    // The turns as stored, numbered alike: the session's numbers are kept with it.
    let messages = |server: &Server| {
        let (status, body) = server.call("GET", &format!("/api/sessions/{id}/messages"), None);
        assert_eq!(status, 200, "{body}");
        body["turns"].clone()
    };
    let last_sequence = |server: &Server| {
        let (_, body) = server.call("GET", &format!("/api/sessions/{id}/messages"), None);
        body["sequence"].as_u64().unwrap()
    };
    assert_eq!(messages(&a), messages(&b));
    let first = last_sequence(&a);
    assert_eq!(first, last_sequence(&b));
    assert_eq!(
        messages(&b)[1]["blocks"][0]["content"],
        "Kept in PostgreSQL."
    );
    // The next chat of the session runs on the other instance, after the first.
    chat(&b, &id, "And now?");
    let turns = messages(&a);
    assert_eq!(turns.as_array().unwrap().len(), 4, "{turns:#}");
    assert_eq!(turns, messages(&b));
    // B numbered its chat's events after A's: a client that followed A skips none of them.
    assert!(last_sequence(&b) > first);
    assert_eq!(last_sequence(&a), last_sequence(&b));
    let sent = model.requests()[1].body["messages"].to_string();
    assert!(
        sent.contains("Kept in PostgreSQL."),
        "B's chat had A's history: {sent}"
    );
    // A had the session open from before B's chat: it reads it again rather than going on
    // from what it had.
    chat(&a, &id, "Once more");
    let sent = model.requests()[2].body["messages"].to_string();
    assert!(
        sent.contains("Answered by the other instance."),
        "A's chat had B's exchange: {sent}"
    );
    assert_eq!(messages(&a).as_array().unwrap().len(), 6);
    assert_eq!(messages(&a), messages(&b));
    // The rows are PostgreSQL's, not a file's.
    chat_count_is(&postgres, &store, 3);
    assert!(!sb.database().exists());
}

#[test]
fn run_and_sessions_take_the_store_from_the_flag_or_the_environment() {
    let postgres = Postgres::start();
    let store = postgres.database();
    let sb = sandbox();
    let model = MockModelServer::start_blocking([MockTurn::Reply(MockReply::text("Noted."))]);
    let out = run_openai(&sb, &model, &["--store", &store, "Note this"]);
    assert_eq!(out.code, Some(0), "{out:?}");
    let listed = sb.run_with_env(&["sessions", "--json"], &[("AGENTRY_STORE", &store)]);
    assert_eq!(listed.code, Some(0), "{listed:?}");
    let sessions = listed.json();
    assert_eq!(sessions.as_array().unwrap().len(), 1, "{sessions}");
    assert_eq!(sessions[0]["title"], "Note this");
    // The data folder's own database was never made.
    let local = sb.run(&["sessions", "--json"]);
    assert_eq!(local.json(), json!([]));
}

#[test]
fn a_store_that_cannot_be_reached_fails_the_start_naming_it_without_its_password() {
    let sb = sandbox();
    let port = agentry_tests::servers::free_port();
    let url = format!("postgres://agentry:hunter2@127.0.0.1:{port}/sessions");
    let out = sb.run_with_env(
        &[
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--store",
            &url,
            "--model",
            "openai/gpt-4.1",
        ],
        &[("OPENAI_API_KEY", "sk-e2e")],
    );
    assert_ne!(out.code, Some(0), "{out:?}");
    assert!(
        out.stderr.contains(&format!(
            "session store postgres://agentry@127.0.0.1:{port}/sessions"
        )),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("hunter2"), "{}", out.stderr);
}

#[test]
fn a_chat_whose_folder_is_not_on_this_server_is_refused_with_the_reason() {
    let postgres = Postgres::start();
    let store = postgres.database();
    let sb = sandbox();
    let model = MockModelServer::start_blocking([MockTurn::Reply(MockReply::text("Made it."))]);
    let server = Server::start(&sb, &model, &["--store", &store]);
    // A session made in a folder that another server has, and this one does not (removed
    // here after the session's first chat, as a volume mounted elsewhere only).
    let elsewhere = sb.project().join("mounted-elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    let (status, made) = server.call("POST", "/api/sessions", Some(json!({"cwd": elsewhere})));
    assert_eq!(status, 201, "{made}");
    let id = made["session_id"].as_str().unwrap().to_owned();
    chat(&server, &id, "First, where the folder is");
    std::fs::remove_dir(&elsewhere).unwrap();
    let (status, error) = server.call(
        "POST",
        &format!("/api/sessions/{id}/chat"),
        Some(json!({"message": "And now?"})),
    );
    assert_eq!(
        (status, &error["code"]),
        (409, &json!("workspace_missing")),
        "{error}"
    );
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains(&elsewhere.display().to_string()) && message.contains("sharing a store"),
        "{message}"
    );
    // Over the chat protocol: a system:error, and the connection goes on.
    let out = server.client_over(
        &sb,
        "ws",
        vec![
            send("chat:send", json!({"session_id": id, "message": "Still?"})),
            wait_for("system:error", 1),
        ],
    );
    let error = events(&out, "system:error")[0];
    assert_eq!(error["code"], "workspace_missing");
    assert_eq!(error["session_id"], id.as_str());
    assert_eq!(model.requests().len(), 1, "no chat reached the model");
}

#[test]
fn one_sessions_chats_sent_to_two_instances_at_once_run_one_at_a_time() {
    let postgres = Postgres::start();
    let store = postgres.database();
    let sb = sandbox();
    // The first answer takes a second and a half, so the two chats overlap.
    let slow = MockReply {
        pause_before_last: Some(Duration::from_millis(1500)),
        ..MockReply::text("Only one of us.")
    };
    let model = MockModelServer::start_blocking([
        MockTurn::Reply(MockReply::text("Stored.")),
        MockTurn::Reply(slow),
        MockTurn::Reply(MockReply::text("Free again.")),
    ]);
    let flags = ["--store", store.as_str()];
    let (a, b) = (
        Server::start(&sb, &model, &flags),
        Server::start(&sb, &model, &flags),
    );
    // A session both instances know from the store (one made and not yet stored is A's alone).
    let id = a.new_session(&sb);
    chat(&a, &id, "First");
    // Each instance's address and token, for threads of their own.
    let send = |(url, token): (String, Option<String>)| {
        agentry_tests::http::call(
            "POST",
            &format!("{url}/api/sessions/{id}/chat"),
            Some(&json!({"message": "Both at once"})),
            token.as_deref(),
        )
    };
    let barrier = std::sync::Barrier::new(2);
    let (from_a, from_b) = std::thread::scope(|scope| {
        let on = |server: &Server| {
            let (barrier, send) = (&barrier, &send);
            let target = (server.url.clone(), server.token.clone());
            scope.spawn(move || {
                barrier.wait();
                send(target)
            })
        };
        let (a, b) = (on(&a), on(&b));
        (a.join().unwrap(), b.join().unwrap())
    });
    let mut statuses = [from_a.0, from_b.0];
    statuses.sort_unstable();
    assert_eq!(statuses, [200, 409], "{from_a:?} {from_b:?}");
    let refused = if from_a.0 == 409 {
        &from_a.1
    } else {
        &from_b.1
    };
    assert_eq!(refused["code"], "chat_running", "{refused}");
    assert_eq!(
        model.requests().len(),
        2,
        "one of the two chats reached the model"
    );
    // The chat that ran gave the session up: the next runs on either instance.
    chat(&b, &id, "And now?");
    chat_count_is(&postgres, &store, 3);
}

/// Sends a chat of session `id` to `server` on a thread of its own: its status and `chat:end`.
fn chat_in_background(
    server: &Server,
    id: &str,
    message: &str,
) -> std::thread::JoinHandle<(u16, serde_json::Value)> {
    let target = (server.url.clone(), server.token.clone());
    let (id, message) = (id.to_owned(), message.to_owned());
    std::thread::spawn(move || {
        let (url, token) = target;
        agentry_tests::http::call(
            "POST",
            &format!("{url}/api/sessions/{id}/chat"),
            Some(&json!({ "message": message })),
            token.as_deref(),
        )
    })
}

/// Waits until the model has been asked `count` times.
fn wait_for_requests(model: &MockModelServer, count: usize) {
    while model.requests().len() < count {
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The statuses of session `id`'s turns as `server` gives them.
fn turn_statuses(server: &Server, id: &str) -> Vec<String> {
    let (_, messages) = server.call("GET", &format!("/api/sessions/{id}/messages"), None);
    messages["turns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|turn| turn["status"].as_str().unwrap().to_owned())
        .collect()
}

/// Waits (at most 20 s) until session `id`'s last turn on `server` is interrupted.
fn wait_until_interrupted(server: &Server, id: &str) {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let statuses = turn_statuses(server, id);
        if statuses.last().map(String::as_str) == Some("interrupted") {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "never interrupted: {statuses:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Asserts that the store holds `count` chats.
fn chat_count_is(postgres: &Postgres, store: &str, count: u32) {
    let database = store.rsplit('/').next().unwrap();
    assert_eq!(
        postgres
            .sql(database, "SELECT count(*) FROM agentry_chats")
            .trim(),
        count.to_string()
    );
}

#[test]
fn a_chat_whose_store_goes_away_stops_as_interrupted_and_the_session_goes_on_after() {
    let mut postgres = Postgres::start();
    let store = postgres.database();
    let sb = sandbox();
    // A lease of two seconds, renewed every two thirds of a second.
    sb.write("project/.agentry/config.toml", "[serve]\nlease_secs = 2\n");
    // Far longer than a renewal of the lease: the chat must stop before the answer ends, not
    // run on unrecorded.
    let endless = MockReply {
        pause_before_last: Some(Duration::from_secs(60)),
        ..MockReply::text("Never recorded.")
    };
    let model = MockModelServer::start_blocking([
        MockTurn::Reply(MockReply::text("Stored.")),
        MockTurn::Reply(endless),
        MockTurn::Reply(MockReply::text("Back again.")),
    ]);
    let server = Server::start(&sb, &model, &["--store", &store]);
    let id = server.new_session(&sb);
    chat(&server, &id, "First");
    let running = chat_in_background(&server, &id, "A long one");
    wait_for_requests(&model, 2);
    postgres.stop();
    let (status, end) = running.join().unwrap();
    assert_eq!(
        (status, &end["status"]),
        (200, &json!("interrupted")),
        "{end}"
    );
    // While the store is away, a new chat is refused, naming it.
    let (status, error) = server.call(
        "POST",
        &format!("/api/sessions/{id}/chat"),
        Some(json!({"message": "Now?"})),
    );
    assert_eq!(status, 500, "{error}");
    let port = postgres.port();
    assert!(
        error["message"].as_str().unwrap().contains(&format!(
            "session store postgres://agentry@127.0.0.1:{port}/"
        )),
        "{error}"
    );
    // Back: the cut chat reads as interrupted once its lease lapsed (it could not be given up
    // while the store was away), and the session goes on.
    postgres.restart();
    wait_until_interrupted(&server, &id);
    // The stopped chat could not give its lease up while the store was away: the session is
    // free once the lease lapses, two seconds after its last renewal (a lease of the default
    // ten seconds would still hold when this gives up).
    let deadline = std::time::Instant::now() + Duration::from_secs(3);
    loop {
        let (status, end) = server.call(
            "POST",
            &format!("/api/sessions/{id}/chat"),
            Some(json!({"message": "Back?"})),
        );
        if status == 409 && std::time::Instant::now() < deadline {
            assert_eq!(end["code"], "chat_running", "{end}");
            std::thread::sleep(Duration::from_millis(500));
            continue;
        }
        assert_eq!(
            (status, &end["status"]),
            (200, &json!("completed")),
            "{end}"
        );
        break;
    }
}

#[test]
fn a_lease_of_no_time_is_refused_at_start() {
    let sb = sandbox();
    sb.write("project/.agentry/config.toml", "[serve]\nlease_secs = 0\n");
    let out = sb.run_with_env(
        &[
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--model",
            "openai/gpt-4.1",
        ],
        &[("OPENAI_API_KEY", "sk-e2e")],
    );
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(
        out.stderr.contains("[serve] lease_secs must be at least 1"),
        "{}",
        out.stderr
    );
}

/// Two instances on one store with leases of two seconds (swept every two thirds of one), the
/// model given `replies`; a session both know, after a first chat on A.
fn two_instances_with_short_leases(
    replies: Vec<MockTurn>,
) -> (
    Postgres,
    String,
    agentry_tests::Sandbox,
    MockModelServer,
    Server,
    Server,
    String,
) {
    let postgres = Postgres::start();
    let store = postgres.database();
    let sb = sandbox();
    sb.write(
        "project/.agentry/config.toml",
        &format!("[serve]\nstore = {store:?}\nlease_secs = 2\n"),
    );
    let mut turns = vec![MockTurn::Reply(MockReply::text("Stored."))];
    turns.extend(replies);
    let model = MockModelServer::start_blocking(turns);
    let (a, b) = (
        Server::start(&sb, &model, &[]),
        Server::start(&sb, &model, &[]),
    );
    let id = a.new_session(&sb);
    chat(&a, &id, "First");
    (postgres, store, sb, model, a, b, id)
}

#[test]
fn a_chat_whose_instance_is_killed_is_shown_interrupted_elsewhere_and_the_session_goes_on() {
    let endless = MockReply {
        pause_before_last: Some(Duration::from_secs(60)),
        ..MockReply::text("Never finished.")
    };
    let (postgres, store, sb, model, a, b, id) = two_instances_with_short_leases(vec![
        MockTurn::Reply(endless),
        MockTurn::Reply(MockReply::text("Picked up on B.")),
    ]);
    // A client of B follows the session.
    let follower = b.client_in_background(
        &sb,
        "ws",
        vec![
            send("session:subscribe", json!({"session_id": id})),
            wait_for("chat:end", 1),
        ],
    );
    let running = chat_in_background(&a, &id, "A long one");
    wait_for_requests(&model, 2);
    // While A runs it, B shows the session without the chat (it is not over), not interrupted.
    assert_eq!(turn_statuses(&b, &id), ["completed", "completed"]);
    let (status, refused) = b.call(
        "POST",
        &format!("/api/sessions/{id}/chat"),
        Some(json!({"message": "Not yet"})),
    );
    assert_eq!(
        (status, &refused["code"]),
        (409, &json!("chat_running")),
        "{refused}"
    );
    a.signal(nix::sys::signal::Signal::SIGKILL);
    // Its client's connection broke (the HTTP helper panics on that), or it got an error.
    if let Ok((status, end)) = running.join() {
        assert_ne!(status, 200, "A died mid-chat: {end}");
    }
    // B's client hears the chat end, interrupted, once A's lease lapsed and B swept it.
    let heard = follower.join().unwrap();
    let ends = events(&heard, "chat:end");
    assert_eq!(ends.len(), 1, "{:#?}", heard.records);
    assert_eq!(ends[0]["status"], "interrupted", "{:#?}", heard.records);
    let notices: Vec<_> = events(&heard, "turn:start")
        .into_iter()
        .filter(|turn| turn["role"] == "system")
        .collect();
    assert_eq!(notices.len(), 1, "{:#?}", heard.records);
    assert_eq!(notices[0]["status"], "interrupted");
    wait_until_interrupted(&b, &id);
    // The session takes a new chat, on B, whose model reads the note about the cut.
    chat(&b, &id, "Go on");
    let sent = model.requests()[2].body["messages"].to_string();
    assert!(sent.contains("interrupted"), "{sent}");
    let statuses = turn_statuses(&b, &id);
    assert_eq!(
        statuses.last().map(String::as_str),
        Some("completed"),
        "{statuses:?}"
    );
    chat_count_is(&postgres, &store, 3);
}

#[test]
fn an_instance_paused_past_its_lease_has_its_late_writes_refused_and_stops_its_chat() {
    // The answer's end comes three seconds in, while A is paused: when A goes on, the answer
    // is there at once, racing A's next renewal.
    let late = MockReply {
        pause_before_last: Some(Duration::from_secs(3)),
        ..MockReply::text("Late answer.")
    };
    let (postgres, store, _sb, model, a, b, id) = two_instances_with_short_leases(vec![
        MockTurn::Reply(late),
        MockTurn::Reply(MockReply::text("B's answer.")),
    ]);
    let running = chat_in_background(&a, &id, "A slow one");
    wait_for_requests(&model, 2);
    a.signal(nix::sys::signal::Signal::SIGSTOP);
    // B finds A's lease lapsed and marks the chat interrupted.
    wait_until_interrupted(&b, &id);
    std::thread::sleep(Duration::from_secs(2));
    a.signal(nix::sys::signal::Signal::SIGCONT);
    let (status, end) = running.join().unwrap();
    assert_eq!(status, 200, "{end}");
    assert_ne!(end["status"], "completed", "A's chat stops: {end}");
    // Nothing A wrote after losing the lease was kept: the chat is still the one B marked.
    let (_, messages) = b.call("GET", &format!("/api/sessions/{id}/messages"), None);
    assert!(
        !messages.to_string().contains("Late answer."),
        "{messages:#}"
    );
    let statuses = turn_statuses(&b, &id);
    assert_eq!(
        statuses.iter().filter(|s| *s == "interrupted").count(),
        1,
        "{statuses:?}"
    );
    let database = store.rsplit('/').next().unwrap();
    assert_eq!(
        postgres
            .sql(database, "SELECT count(*) FROM agentry_chats WHERE running")
            .trim(),
        "1",
        "A could not end the chat it lost"
    );
    // The session goes on, on either instance, and both read it alike.
    chat(&b, &id, "Go on");
    let (_, on_a) = a.call("GET", &format!("/api/sessions/{id}/messages"), None);
    let (_, on_b) = b.call("GET", &format!("/api/sessions/{id}/messages"), None);
    assert_eq!(on_a, on_b);
}
