//! Serving many users with live events shared: `agentry serve` instances on one PostgreSQL
//! store and one Redis broker (throwaway servers of Debian's, on loopback). A client follows a
//! chat from any instance, moves to another mid-chat, stops the chat or answers its permission
//! question from any instance, and loses nothing when Redis restarts; and Debian's nginx in
//! front of two instances, round-robin, with no sticky sessions.

use super::{Server, send, wait_for};
use crate::sandbox;
use agentry_tests::Sandbox;
use agentry_tests::mock_model::{MockModelServer, MockReply, MockTurn};
use agentry_tests::peers::Transcript;
use agentry_tests::servers::{Nginx, Postgres, Redis};
use serde_json::{Value, json};
use std::time::Duration;

/// Instances sharing one store and one broker, and a session they all know (after a first
/// chat on the first instance).
struct Cluster {
    servers: Vec<Server>,
    model: MockModelServer,
    redis: Redis,
    sb: Sandbox,
    id: String,
    _postgres: Postgres,
}

/// `count` instances with `flags`, the store and broker given by the configuration, the model
/// answering the first chat, then `replies`.
fn cluster(count: usize, replies: Vec<MockTurn>, flags: &[&str]) -> Cluster {
    let postgres = Postgres::start();
    let redis = Redis::start();
    let sb = sandbox();
    sb.write(
        "project/.agentry/config.toml",
        &format!(
            "[serve]\nstore = {:?}\nbroker = {:?}\n",
            postgres.database(),
            redis.url()
        ),
    );
    let mut turns = vec![MockTurn::Reply(MockReply::text("Stored."))];
    turns.extend(replies);
    let model = MockModelServer::start_blocking(turns);
    let flags = [&["--token", "one-token-for-all"][..], flags].concat();
    let servers: Vec<Server> = (0..count)
        .map(|_| Server::start(&sb, &model, &flags))
        .collect();
    let id = servers[0].new_session(&sb);
    let (status, end) = servers[0].call(
        "POST",
        &format!("/api/sessions/{id}/chat"),
        Some(json!({"message": "First"})),
    );
    assert_eq!(
        (status, &end["status"]),
        (200, &json!("completed")),
        "{end}"
    );
    Cluster {
        servers,
        model,
        redis,
        sb,
        id,
        _postgres: postgres,
    }
}

/// `count` instances running commands without asking, the model running `sleep SECONDS` then
/// answering `answer`.
fn sleeping(count: usize, seconds: u32, answer: &str) -> Cluster {
    cluster(
        count,
        vec![
            MockTurn::Reply(MockReply::tool_call(
                "slow",
                "Bash",
                json!({"command": format!("sleep {seconds}; echo slept"), "description": "wait"}),
            )),
            MockTurn::Reply(MockReply::text(answer)),
        ],
        &["--permission-mode", "bypass"],
    )
}

impl Cluster {
    /// Session's turns as instance `n` gives them.
    fn messages(&self, n: usize) -> Value {
        let (status, body) =
            self.servers[n].call("GET", &format!("/api/sessions/{}/messages", self.id), None);
        assert_eq!(status, 200, "{body}");
        body
    }

    /// The first three instances.
    fn three(&self) -> (&Server, &Server, &Server) {
        (&self.servers[0], &self.servers[1], &self.servers[2])
    }

    /// Waits until the model has been asked `count` times.
    fn wait_for_requests(&self, count: usize) {
        while self.model.requests().len() < count {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// The session events a client saw (not `session:subscribed` or `system:error`), in order.
fn session_events(out: &Transcript) -> Vec<(String, Value)> {
    out.of_kind("event")
        .into_iter()
        .filter(|r| {
            !matches!(
                r["event"].as_str(),
                Some("session:subscribed" | "system:error")
            )
        })
        .map(|r| (r["event"].as_str().unwrap().to_owned(), r["data"].clone()))
        .collect()
}

/// The session events of a client that saw a chat through to its end, completed.
fn completed_chat(out: &Transcript) -> Vec<(String, Value)> {
    let events = session_events(out);
    let end = events
        .last()
        .map(|(event, data)| (event.as_str(), &data["status"]));
    assert_eq!(
        end,
        Some(("chat:end", &json!("completed"))),
        "{:#?}",
        out.records
    );
    events
}

/// The `(event, sequence)` of each of `events`.
fn outline(events: &[(String, Value)]) -> Vec<(String, u64)> {
    events
        .iter()
        .map(|(event, data)| (event.clone(), data["sequence"].as_u64().unwrap_or(0)))
        .collect()
}

#[test]
fn a_client_that_moves_to_a_third_instance_mid_chat_gets_every_event_of_the_chat_once() {
    let cluster = sleeping(3, 1, "Slept well.");
    let (a, b, c) = cluster.three();
    let id = &cluster.id;
    // Follows the session on B, then, mid-chat, on C from where it was.
    let mover = b.client_in_background(
        &cluster.sb,
        "ws",
        vec![
            send("session:subscribe", json!({"session_id": id})),
            wait_for("turn:patch", 1),
            json!({"op": "reconnect", "url": c.ws()}),
            send(
                "session:subscribe",
                json!({"session_id": id, "after_sequence": "$last_sequence"}),
            ),
            wait_for("chat:end", 1),
        ],
    );
    // The chat runs on A, whose own client sees it whole.
    let on_a = a.client_over(
        &cluster.sb,
        "ws",
        vec![
            send("chat:send", json!({"session_id": id, "message": "Sleep"})),
            wait_for("chat:end", 1),
        ],
    );
    let moved = mover.join().unwrap();
    let expected = completed_chat(&on_a);
    assert!(expected.len() > 5, "{expected:#?}");
    let got = session_events(&moved);
    assert_eq!(outline(&got), outline(&expected), "{:#?}", moved.records);
    assert_eq!(got, expected);
    // The client did move: it opened twice.
    assert_eq!(moved.of_kind("open").len(), 2);
    // Every instance gives the session alike.
    let on_a = cluster.messages(0);
    assert_eq!(on_a["turns"].as_array().unwrap().len(), 5, "{on_a:#}");
    assert_eq!(on_a, cluster.messages(1));
    assert_eq!(on_a, cluster.messages(2));
}

#[test]
fn chat_stop_on_one_instance_and_a_permission_answer_on_another_reach_the_chat_where_it_runs() {
    let endless = MockReply {
        pause_before_last: Some(Duration::from_secs(60)),
        ..MockReply::text("Never finished.")
    };
    let cluster = cluster(
        3,
        vec![
            MockTurn::Reply(MockReply::tool_call(
                "ask",
                "Bash",
                json!({"command": "echo allowed", "description": "say it"}),
            )),
            MockTurn::Reply(endless),
        ],
        &[],
    );
    let (a, b, c) = cluster.three();
    let id = &cluster.id;
    let on_a = a.client_in_background(
        &cluster.sb,
        "ws",
        vec![
            send("chat:send", json!({"session_id": id, "message": "Say it"})),
            wait_for("chat:end", 1),
        ],
    );
    // C sees A's question and answers it.
    let on_c = c.client_over(
        &cluster.sb,
        "socket.io",
        vec![
            send("session:subscribe", json!({"session_id": id})),
            wait_for("permission:request", 1),
            send(
                "permission:respond",
                json!({"session_id": id, "request_id": "$permission", "option_id": "allow_once"}),
            ),
            wait_for("permission:resolved", 1),
        ],
    );
    assert!(on_c.of_kind("failed").is_empty(), "{:#?}", on_c.records);
    // The command ran and the model is answering, without end: B stops the chat.
    cluster.wait_for_requests(3);
    let on_b = b.client_over(
        &cluster.sb,
        "ws",
        vec![
            send("session:subscribe", json!({"session_id": id})),
            send("chat:stop", json!({"session_id": id})),
            wait_for("chat:end", 1),
        ],
    );
    let on_a = on_a.join().unwrap();
    let ends = super::events(&on_a, "chat:end");
    assert_eq!(ends.len(), 1, "{:#?}", on_a.records);
    assert_eq!(ends[0]["status"], "interrupted", "{:#?}", on_a.records);
    assert_eq!(super::events(&on_b, "chat:end")[0]["status"], "interrupted");
    // The question was A's, answered once, from C.
    let resolved = super::events(&on_a, "permission:resolved");
    assert_eq!(resolved.len(), 1, "{:#?}", on_a.records);
    assert_eq!(resolved[0]["option_id"], "allow_once");
    let asked = super::events(&on_c, "permission:request");
    assert_eq!(asked[0]["request_id"], resolved[0]["request_id"]);
    let turns = cluster.messages(1);
    assert!(turns.to_string().contains("allowed"), "{turns:#}");
    // Nothing runs now: stopping again, from anywhere, stops nothing.
    let (status, cancelled) = c.call("POST", &format!("/api/sessions/{id}/cancel"), None);
    assert_eq!(
        (status, &cancelled["cancelled"]),
        (200, &json!(false)),
        "{cancelled}"
    );
}

#[test]
fn a_question_asked_in_a_chat_on_one_instance_is_answered_on_another() {
    let cluster = cluster(
        2,
        vec![
            super::deploy_question(),
            MockTurn::Reply(MockReply::text("Deploying to staging.")),
        ],
        &[],
    );
    let (a, b) = (&cluster.servers[0], &cluster.servers[1]);
    let id = &cluster.id;
    // A's chat pauses on the question; a client of B sees it and answers it.
    let on_a = a.client_in_background(
        &cluster.sb,
        "ws",
        vec![
            send("chat:send", json!({"session_id": id, "message": "Deploy?"})),
            wait_for("chat:end", 2),
        ],
    );
    let on_b = b.client_over(
        &cluster.sb,
        "ws",
        vec![
            send("session:subscribe", json!({"session_id": id})),
            wait_for("chat:end", 1),
            send(
                "chat:send",
                json!({"session_id": id, "message": "", "askuser_answer":
                    {"tool_call_id": "$answer_call", "selections": {"0": [0]}, "custom": {}}}),
            ),
            wait_for("chat:end", 2),
        ],
    );
    let on_a = on_a.join().unwrap();
    for (seen, out) in [("A", &on_a), ("B", &on_b)] {
        let ends: Vec<_> = super::events(out, "chat:end")
            .iter()
            .map(|end| end["finish_reason"].clone())
            .collect();
        // Both clients' records, so a failure shows what the other side saw too.
        assert_eq!(
            ends,
            [json!("paused"), json!("completed")],
            "{seen}: A saw {:#?}\nB saw {:#?}",
            on_a.records,
            on_b.records
        );
    }
    // The answer reached the model, which went on from the question.
    let sent = cluster.model.requests()[2].body["messages"].to_string();
    assert!(sent.contains("staging"), "{sent}");
    assert_eq!(cluster.messages(0), cluster.messages(1));
}

#[test]
fn redis_restarted_mid_chat_loses_nothing_and_a_client_elsewhere_catches_up() {
    let mut cluster = sleeping(2, 3, "All done.");
    let id = cluster.id.clone();
    let follower = cluster.servers[1].client_in_background(
        &cluster.sb,
        "ws",
        vec![
            send("session:subscribe", json!({"session_id": id})),
            wait_for("turn:patch", 1),
            wait_for("system:error", 1),
            json!({"op": "sleep", "ms": 1500}),
            send(
                "session:subscribe",
                json!({"session_id": id, "after_sequence": "$last_sequence"}),
            ),
            wait_for("chat:end", 1),
        ],
    );
    let on_a = cluster.servers[0].client_in_background(
        &cluster.sb,
        "ws",
        vec![
            send("chat:send", json!({"session_id": id, "message": "Wait"})),
            wait_for("chat:end", 1),
        ],
    );
    // While the command sleeps, Redis goes away and comes back empty.
    cluster.wait_for_requests(2);
    std::thread::sleep(Duration::from_millis(500));
    cluster.redis.stop();
    std::thread::sleep(Duration::from_millis(500));
    cluster.redis.restart();
    let (on_a, followed) = (on_a.join().unwrap(), follower.join().unwrap());
    // The chat went on and is stored whole.
    let expected = completed_chat(&on_a);
    let stored = cluster.messages(0);
    assert!(stored.to_string().contains("All done."), "{stored:#}");
    assert_eq!(stored, cluster.messages(1));
    // B's client was told, subscribed again, and got every event once, in order.
    let told = super::events(&followed, "system:error");
    assert_eq!(told[0]["code"], "live_events_interrupted", "{told:#?}");
    assert_eq!(outline(&session_events(&followed)), outline(&expected));
}

#[test]
fn behind_nginx_round_robin_both_transports_chat_with_no_sticky_sessions() {
    let cluster = cluster(
        2,
        vec![
            MockTurn::Reply(MockReply::text("Through nginx, over ws.")),
            MockTurn::Reply(MockReply::text("Through nginx, over Socket.IO.")),
        ],
        &[],
    );
    let upstreams: Vec<String> = cluster
        .servers
        .iter()
        .map(|server| server.url.trim_start_matches("http://").to_owned())
        .collect();
    let nginx = Nginx::start(&upstreams.iter().map(String::as_str).collect::<Vec<_>>());
    let id = &cluster.id;
    let server = &cluster.servers[0];
    for (transport, answer) in [
        ("ws", "Through nginx, over ws."),
        ("socket.io", "Through nginx, over Socket.IO."),
    ] {
        let out = server
            .client_through(
                &nginx.url(),
                &cluster.sb,
                transport,
                vec![
                    send("chat:send", json!({"session_id": id, "message": "Hello"})),
                    wait_for("chat:end", 1),
                ],
            )
            .join()
            .unwrap();
        let ends = super::events(&out, "chat:end");
        assert_eq!(ends.len(), 1, "{transport}: {:#?}", out.records);
        assert_eq!(
            ends[0]["status"], "completed",
            "{transport}: {:#?}",
            out.records
        );
        assert_eq!(ends[0]["result"]["output"], answer, "{transport}");
    }
    // The REST API through nginx: the same answer whichever instance gives it.
    let listed: Vec<Value> = (0..4)
        .map(|_| {
            let (status, body) = agentry_tests::http::call(
                "GET",
                &format!("{}/api/sessions/{id}/messages", nginx.url()),
                None,
                server.token.as_deref(),
            );
            assert_eq!(status, 200, "{body}");
            body
        })
        .collect();
    assert!(listed.windows(2).all(|w| w[0] == w[1]), "{listed:#?}");
    assert_eq!(listed[0]["turns"].as_array().unwrap().len(), 6);
    // A session made through nginx, by either instance, is known to both at once: the next
    // request may reach the other.
    let (status, made) = agentry_tests::http::call(
        "POST",
        &format!("{}/api/sessions", nginx.url()),
        Some(&json!({"cwd": cluster.sb.project()})),
        server.token.as_deref(),
    );
    assert_eq!(status, 201, "{made}");
    let made = made["session_id"].as_str().unwrap();
    for server in &cluster.servers {
        let (status, turns) = server.call("GET", &format!("/api/sessions/{made}/messages"), None);
        assert_eq!((status, &turns["turns"]), (200, &json!([])), "{turns}");
    }
    // Both instances took requests: nothing was pinned to one.
    let log = nginx.access_log();
    for upstream in &upstreams {
        assert!(
            log.contains(upstream.as_str()),
            "{upstream} never used:\n{log}"
        );
    }
}
