//! Operating `agentry serve`: the health and readiness checks a load balancer probes, and the
//! drain on SIGTERM that lets running chats finish (or stops them, stored whole) before the
//! process exits.

use super::Server;
use crate::sandbox;
use agentry_tests::http;
use agentry_tests::mock_model::{MockModelServer, MockReply, MockTurn};
use agentry_tests::servers::{Postgres, Prometheus, Redis};
use nix::sys::signal::Signal;
use serde_json::json;
use std::time::Duration;

#[test]
fn health_and_readiness_answer_without_a_token_and_name_only_what_is_wrong() {
    let (mut postgres, mut redis) = (Postgres::start(), Redis::start());
    let sb = sandbox();
    let model = MockModelServer::start_blocking([]);
    let server = Server::start(
        &sb,
        &model,
        &["--store", &postgres.database(), "--broker", &redis.url()],
    );
    let probe = |path: &str| http::call("GET", &format!("{}{path}", server.url), None, None);
    assert_eq!(probe("/healthz"), (200, json!({"status": "ok"})));
    assert_eq!(probe("/readyz"), (200, json!({"status": "ready"})));
    // Everything else still needs the token.
    assert_eq!(probe("/api/sessions").0, 401);
    redis.stop();
    assert_eq!(
        probe("/readyz"),
        (503, json!({"status": "unavailable", "failing": ["broker"]}))
    );
    postgres.stop();
    let (status, body) = probe("/readyz");
    assert_eq!(
        (status, body.clone()),
        (
            503,
            json!({"status": "unavailable", "failing": ["store", "broker"]})
        )
    );
    // Nothing about where they are.
    assert!(!body.to_string().contains("127.0.0.1"), "{body}");
    // The process itself answers.
    assert_eq!(probe("/healthz").0, 200);
    redis.restart();
    postgres.restart();
    let ready = (0..50).any(|_| {
        std::thread::sleep(Duration::from_millis(100));
        probe("/readyz").0 == 200
    });
    assert!(ready, "{:?}", probe("/readyz"));
}

/// Starts a chat of a new session on `server` on a thread of its own; the REST answer.
fn chat_in_background(
    server: &Server,
    sb: &agentry_tests::Sandbox,
    message: &str,
) -> (String, std::thread::JoinHandle<(u16, serde_json::Value)>) {
    let id = server.new_session(sb);
    let (url, token, message) = (
        format!("{}/api/sessions/{id}/chat", server.url),
        server.token.clone(),
        message.to_owned(),
    );
    let running = std::thread::spawn(move || {
        http::call(
            "POST",
            &url,
            Some(&json!({"message": message})),
            token.as_deref(),
        )
    });
    (id, running)
}

#[test]
fn on_sigterm_a_chat_that_fits_the_drain_time_completes_and_new_chats_are_refused() {
    let sb = sandbox();
    let slow = MockReply {
        pause_before_last: Some(Duration::from_millis(1500)),
        ..MockReply::text("Finished in time.")
    };
    let model = MockModelServer::start_blocking([MockTurn::Reply(slow)]);
    let mut server = Server::start(&sb, &model, &["--drain-timeout", "20"]);
    let other = server.new_session(&sb);
    let (_, running) = chat_in_background(&server, &sb, "Take your time");
    while model.requests().is_empty() {
        std::thread::sleep(Duration::from_millis(20));
    }
    server.signal(Signal::SIGTERM);
    // At once: not ready, and no new chat.
    let (status, ready) = http::call("GET", &format!("{}/readyz", server.url), None, None);
    assert_eq!(
        (status, &ready["failing"]),
        (503, &json!(["draining"])),
        "{ready}"
    );
    let (status, refused) = server.call(
        "POST",
        &format!("/api/sessions/{other}/chat"),
        Some(json!({"message": "Me too?"})),
    );
    assert_eq!(
        (status, &refused["code"]),
        (503, &json!("draining")),
        "{refused}"
    );
    let (status, end) = running.join().unwrap();
    assert_eq!(
        (status, &end["status"]),
        (200, &json!("completed")),
        "{end}"
    );
    assert_eq!(end["result"]["output"], "Finished in time.");
    // Then the process ends, well.
    assert!(server.running.wait().success());
}

#[test]
fn on_sigterm_a_chat_that_outlives_the_drain_time_ends_interrupted_and_stored_whole() {
    let sb = sandbox();
    let endless = MockReply {
        pause_before_last: Some(Duration::from_secs(60)),
        ..MockReply::text("Never finished.")
    };
    let model = MockModelServer::start_blocking([MockTurn::Reply(endless)]);
    let mut server = Server::start(&sb, &model, &["--drain-timeout", "1"]);
    let (id, running) = chat_in_background(&server, &sb, "A long one");
    while model.requests().is_empty() {
        std::thread::sleep(Duration::from_millis(20));
    }
    server.signal(Signal::SIGTERM);
    let (status, end) = running.join().unwrap();
    assert_eq!(
        (status, &end["status"]),
        (200, &json!("interrupted")),
        "{end}"
    );
    assert!(server.running.wait().success());
    // Started again on the same data: the chat is there, interrupted, the prompt kept.
    let token = server.token.clone().unwrap_or_default();
    drop(server);
    let again = Server::start(&sb, &model, &["--token", &token]);
    let (status, messages) = again.call("GET", &format!("/api/sessions/{id}/messages"), None);
    assert_eq!(status, 200, "{messages}");
    assert!(messages.to_string().contains("A long one"), "{messages:#}");
    let turns = messages["turns"].as_array().unwrap();
    assert_eq!(
        turns.last().unwrap()["status"],
        "interrupted",
        "{messages:#}"
    );
}

#[test]
fn prometheus_scrapes_chats_model_requests_and_tool_calls_and_promtool_passes_the_exposition() {
    let sb = sandbox();
    let model = MockModelServer::start_blocking([
        MockTurn::Reply(MockReply::tool_call(
            "say",
            "Bash",
            json!({"command": "echo measured", "description": "say it"}),
        )),
        MockTurn::Reply(MockReply::text("Measured.")),
    ]);
    let port = agentry_tests::servers::free_port();
    let metrics = format!("127.0.0.1:{port}");
    let server = Server::start(
        &sb,
        &model,
        &["--permission-mode", "bypass", "--metrics-listen", &metrics],
    );
    // On the main address the metrics need the token; on their own address, not.
    let on_main = format!("{}/metrics", server.url);
    assert_eq!(http::call("GET", &on_main, None, None).0, 401);
    let id = server.new_session(&sb);
    let (status, end) = server.call(
        "POST",
        &format!("/api/sessions/{id}/chat"),
        Some(json!({"message": "Measure"})),
    );
    assert_eq!(
        (status, &end["status"]),
        (200, &json!("completed")),
        "{end}"
    );
    let prometheus = Prometheus::start(&[&metrics]);
    let series = |name: &str| {
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        loop {
            let result = prometheus.query(name);
            if !result.as_array().unwrap().is_empty() {
                return result;
            }
            assert!(std::time::Instant::now() < deadline, "no {name} series");
            std::thread::sleep(Duration::from_millis(200));
        }
    };
    let value = |series: &serde_json::Value| -> f64 {
        series["value"][1].as_str().unwrap().parse().unwrap()
    };
    let chats = series("agentry_chats_total");
    assert_eq!(chats[0]["metric"]["status"], "end_turn", "{chats}");
    assert_eq!(value(&chats[0]), 1.0);
    let requests = series("agentry_model_requests_total");
    assert_eq!(requests[0]["metric"]["provider"], "openai", "{requests}");
    assert_eq!(requests[0]["metric"]["model"], "gpt-4.1", "{requests}");
    assert_eq!(requests[0]["metric"]["outcome"], "completed", "{requests}");
    assert_eq!(value(&requests[0]), 2.0, "{requests}");
    let calls = series("agentry_tool_calls_total");
    assert_eq!(
        (&calls[0]["metric"]["tool"], &calls[0]["metric"]["status"]),
        (&json!("Bash"), &json!("completed")),
        "{calls}"
    );
    assert!(value(&series("sum(agentry_tokens_total)")[0]) > 0.0);
    // Two requests of 20 input and 5 output tokens at GPT-4.1's $2 and $8 a million.
    let cost = series("agentry_cost_usd_total");
    assert_eq!(cost[0]["metric"]["model"], "gpt-4.1", "{cost}");
    assert!((value(&cost[0]) - 0.00016).abs() < 1e-12, "{cost}");
    // No label names a session or a path.
    let (status, exposition) = http::call("GET", &format!("http://{metrics}/metrics"), None, None);
    assert_eq!(status, 200);
    let exposition = exposition.as_str().unwrap().to_owned();
    assert!(!exposition.contains(&id), "{exposition}");
    assert!(!exposition.contains(&sb.project().display().to_string()));
    // promtool finds nothing to say of the exposition.
    let mut check = std::process::Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("promtool (package prometheus)");
    use std::io::Write;
    check
        .stdin
        .take()
        .unwrap()
        .write_all(exposition.as_bytes())
        .unwrap();
    let checked = check.wait_with_output().unwrap();
    assert!(
        checked.status.success(),
        "{}{}",
        String::from_utf8_lossy(&checked.stdout),
        String::from_utf8_lossy(&checked.stderr)
    );
}

#[test]
fn json_logs_are_one_object_a_line_with_the_chats_session_and_chat_ids() {
    let sb = sandbox();
    let model = MockModelServer::start_blocking([MockTurn::Reply(MockReply::text("Logged."))]);
    let mut server = Server::start_with_env(
        &sb,
        &model,
        &["--log-format", "json"],
        &[("AGENTRY_LOG", "info")],
    );
    let id = server.new_session(&sb);
    let (status, end) = server.call(
        "POST",
        &format!("/api/sessions/{id}/chat"),
        Some(json!({"message": "Log this"})),
    );
    assert_eq!(
        (status, &end["status"]),
        (200, &json!("completed")),
        "{end}"
    );
    server.signal(Signal::SIGTERM);
    assert!(server.running.wait().success());
    let mut stderr = String::new();
    std::io::Read::read_to_string(server.running.child.stderr.as_mut().unwrap(), &mut stderr)
        .unwrap();
    let lines: Vec<serde_json::Value> = stderr
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect();
    let ended = lines
        .iter()
        .find(|line| line["fields"]["message"] == "chat ended")
        .unwrap_or_else(|| panic!("{stderr}"));
    assert_eq!(ended["span"]["session_id"], id.as_str(), "{ended}");
    assert_eq!(ended["fields"]["stop_reason"], "end_turn", "{ended}");
    let chat_id = ended["span"]["chat_id"].as_str().unwrap();
    let started = lines
        .iter()
        .find(|line| line["fields"]["message"] == "chat started")
        .unwrap();
    assert_eq!(started["span"]["chat_id"], chat_id);
}

#[test]
fn past_the_most_running_chats_a_chat_is_refused_busy_and_the_refusal_is_counted() {
    let sb = sandbox();
    let slow = MockReply {
        pause_before_last: Some(Duration::from_millis(1500)),
        ..MockReply::text("One at a time.")
    };
    let model = MockModelServer::start_blocking([
        MockTurn::Reply(slow),
        MockTurn::Reply(MockReply::text("My turn now.")),
    ]);
    let server = Server::start(&sb, &model, &["--max-running-chats", "1"]);
    let second = server.new_session(&sb);
    let (_, running) = chat_in_background(&server, &sb, "First");
    while model.requests().is_empty() {
        std::thread::sleep(Duration::from_millis(20));
    }
    let send_second = || {
        server.call(
            "POST",
            &format!("/api/sessions/{second}/chat"),
            Some(json!({"message": "Second"})),
        )
    };
    let (status, refused) = send_second();
    assert_eq!(
        (status, &refused["code"]),
        (503, &json!("busy")),
        "{refused}"
    );
    assert_eq!(running.join().unwrap().0, 200);
    // The place is free again.
    let (status, end) = send_second();
    assert_eq!(
        (status, &end["status"]),
        (200, &json!("completed")),
        "{end}"
    );
    let (_, metrics) = server.call("GET", "/metrics", None);
    assert!(
        metrics
            .as_str()
            .unwrap()
            .contains("agentry_refused_total{reason=\"busy\"} 1"),
        "{metrics}"
    );
}

#[test]
fn a_connection_past_its_message_rate_is_told_rate_limited_and_stays_open() {
    let sb = sandbox();
    let model = MockModelServer::start_blocking([]);
    let server = Server::start(&sb, &model, &["--max-messages-per-second", "3"]);
    let id = server.new_session(&sb);
    let mut steps: Vec<serde_json::Value> = (0..10)
        .map(|_| super::send("session:subscribe", json!({"session_id": id})))
        .collect();
    steps.push(json!({"op": "sleep", "ms": 1200}));
    steps.push(super::send("session:subscribe", json!({"session_id": id})));
    steps.push(json!({"op": "sleep", "ms": 300}));
    let out = server.client_over(&sb, "ws", steps);
    let limited: Vec<_> = super::events(&out, "system:error")
        .into_iter()
        .filter(|error| error["code"] == "rate_limited")
        .collect();
    // Three a second, with a burst of three: of ten sent at once, about seven are refused
    // (more get through only if the sending took a good part of a second).
    assert!(limited.len() >= 5, "{:#?}", out.records);
    // The others got through, and one more after a second: the connection stayed.
    let subscribed = super::events(&out, "session:subscribed").len();
    assert_eq!(subscribed + limited.len(), 11, "{:#?}", out.records);
    assert!(out.of_kind("failed").is_empty(), "{:#?}", out.records);
}

#[test]
fn past_the_most_sessions_a_token_may_hold_one_more_is_refused_even_when_asked_for_at_once() {
    let sb = sandbox();
    let model = MockModelServer::start_blocking([]);
    let server = Server::start(&sb, &model, &["--max-sessions-per-token", "3"]);
    let (url, token) = (format!("{}/api/sessions", server.url), server.token.clone());
    let body = json!({"cwd": sb.project()});
    let create = || agentry_tests::http::call("POST", &url, Some(&body), token.as_deref());
    // Eight asked for at once: three places, however the requests interleave.
    let outcomes: Vec<(u16, serde_json::Value)> = std::thread::scope(|scope| {
        let asks: Vec<_> = (0..8).map(|_| scope.spawn(create)).collect();
        asks.into_iter().map(|ask| ask.join().unwrap()).collect()
    });
    let made: Vec<&str> = outcomes
        .iter()
        .filter(|(status, _)| *status == 201)
        .map(|(_, body)| body["session_id"].as_str().unwrap())
        .collect();
    assert_eq!(made.len(), 3, "{outcomes:#?}");
    for (status, body) in outcomes.iter().filter(|(status, _)| *status != 201) {
        assert_eq!(
            (*status, &body["code"]),
            (429, &json!("too_many_sessions")),
            "{body}"
        );
    }
    // Deleting a session that is not one of them frees nothing.
    let (status, _) = server.call("DELETE", "/api/sessions/sess_not_there", None);
    assert_eq!(status, 404);
    assert_eq!(create().0, 429);
    // Deleting one of them frees its place, once.
    let (status, _) = server.call("DELETE", &format!("/api/sessions/{}", made[0]), None);
    assert_eq!(status, 204);
    assert_eq!(create().0, 201);
    assert_eq!(create().0, 429);
    let (_, metrics) = server.call("GET", "/metrics", None);
    let refusals = format!(
        "agentry_refused_total{{reason=\"too_many_sessions\"}} {}",
        5 + 2
    );
    assert!(metrics.as_str().unwrap().contains(&refusals), "{metrics}");
}
