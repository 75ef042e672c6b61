//! `agentry serve` with the official `socket.io-client` and a plain WebSocket client (the `ws`
//! package; both in `tests/peers/chat-client.mjs`) and the REST API: the protocol's flows with their exact event sequences, errors
//! that keep the connection, reconnection mid-chat, sessions after a restart, the token and
//! Origin checks. The model is the mock model server.

use agentry_tests::mock_model::{MockModelServer, MockReply, MockTurn};
use agentry_tests::peers::{Transcript, run_chat_client, run_page_client};
use agentry_tests::{Running, Sandbox, http};
use serde_json::{Value, json};
use std::path::Path;
use std::time::Duration;

/// A running `agentry serve` on a free loopback port, and the token it printed.
pub(crate) struct Server {
    running: Running,
    url: String,
    token: Option<String>,
}

impl Drop for Server {
    /// Stops the server as a service manager does (SIGTERM), so it removes its sessions'
    /// temporary folders; killed if it has not ended within five seconds.
    fn drop(&mut self) {
        if !matches!(self.running.child.try_wait(), Ok(None)) {
            return;
        }
        self.running.signal(nix::sys::signal::Signal::SIGTERM);
        for _ in 0..500 {
            if !matches!(self.running.child.try_wait(), Ok(None)) {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.running.child.kill();
        let _ = self.running.child.wait();
    }
}

impl Server {
    pub(crate) fn start(sb: &Sandbox, model: &MockModelServer, args: &[&str]) -> Server {
        Self::start_with_env(sb, model, args, &[])
    }

    /// [`Server::start`] with more environment variables.
    pub(crate) fn start_with_env(
        sb: &Sandbox,
        model: &MockModelServer,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> Server {
        Self::start_at(sb, model, "127.0.0.1:0", args, env)
    }

    /// [`Server::start_with_env`] listening on `listen`.
    fn start_at(
        sb: &Sandbox,
        model: &MockModelServer,
        listen: &str,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> Server {
        let base = format!("{}/v1", model.url());
        let mut command = vec!["serve", "--listen", listen];
        if !args.contains(&"--model") {
            command.extend(["--model", "openai/gpt-4.1"]);
        }
        command.extend_from_slice(args);
        let mut env = env.to_vec();
        env.extend([("OPENAI_API_KEY", "sk-e2e"), ("OPENAI_BASE_URL", &base)]);
        let running = sb.spawn_with_env(&command, &env);
        let line = running.wait_for_line(|l| l.contains("listening on"));
        let url = line.rsplit(' ').next().unwrap().to_owned();
        // The link to open, with the token the server made (or was given).
        let open = running.wait_for_line(|l| l.contains("agentry serve: open "));
        let token = open
            .split_once("?token=")
            .map(|(_, token)| token.to_owned());
        Server {
            running,
            url,
            token,
        }
    }

    /// Stops the server and starts it again on the same address with the same token and data,
    /// as a service manager restarts it.
    pub(crate) fn restart(mut self, sb: &Sandbox, model: &MockModelServer) -> Server {
        let listen = self.url.trim_start_matches("http://").to_owned();
        let token = self.token.take().unwrap_or_default();
        drop(self);
        Self::start_at(sb, model, &listen, &["--token", &token], &[])
    }

    /// Sends the server's process `signal` (SIGKILL to kill it as a crash would, SIGSTOP to
    /// pause it, SIGCONT to let it go on).
    pub(crate) fn signal(&self, signal: nix::sys::signal::Signal) {
        self.running.signal(signal);
    }

    /// The link `agentry serve` printed for the page.
    pub(crate) fn page_link(&self) -> String {
        match &self.token {
            Some(token) => format!("{}/?token={token}", self.url),
            None => format!("{}/", self.url),
        }
    }

    /// The `Authorization` header a client sends to be let in.
    pub(crate) fn authorization(&self) -> String {
        format!(
            "Authorization: Bearer {}",
            self.token.as_deref().unwrap_or_default()
        )
    }

    /// The headers a client sends to be let in.
    fn credentials(&self) -> Value {
        match &self.token {
            Some(token) => json!({"Authorization": format!("Bearer {token}")}),
            None => json!({}),
        }
    }

    pub(super) fn ws(&self) -> String {
        format!("{}/ws", self.url.replace("http://", "ws://"))
    }

    /// A REST call: the status and the JSON body (`null` when empty).
    pub(crate) fn call(&self, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
        http::call(
            method,
            &format!("{}{path}", self.url),
            body.as_ref(),
            self.token.as_deref(),
        )
    }

    pub(super) fn new_session(&self, sb: &Sandbox) -> String {
        let (status, body) = self.call("POST", "/api/sessions", Some(json!({"cwd": sb.project()})));
        assert_eq!(status, 201, "{body}");
        body["session_id"].as_str().unwrap().to_owned()
    }

    /// Runs the test client over `transport` (`ws` or `socket.io`).
    pub(super) fn client_over(
        &self,
        sb: &Sandbox,
        transport: &str,
        steps: Vec<Value>,
    ) -> Transcript {
        self.client_in_background(sb, transport, steps)
            .join()
            .unwrap()
    }

    /// Runs the test client over `transport` on a thread of its own, while the test goes on.
    pub(super) fn client_in_background(
        &self,
        sb: &Sandbox,
        transport: &str,
        steps: Vec<Value>,
    ) -> std::thread::JoinHandle<Transcript> {
        self.client_through(&self.url, sb, transport, steps)
    }

    /// Runs the test client over `transport` on a thread of its own, reaching this server (with
    /// its token) through `base` (a load balancer's `http://host:port`); Socket.IO over
    /// WebSocket alone there, as behind a load balancer without sticky sessions.
    pub(super) fn client_through(
        &self,
        base: &str,
        sb: &Sandbox,
        transport: &str,
        steps: Vec<Value>,
    ) -> std::thread::JoinHandle<Transcript> {
        let url = match transport {
            "ws" => format!("{}/ws", base.replace("http://", "ws://")),
            _ => base.to_owned(),
        };
        let mut scenario = json!({"transport": transport, "url": url, "steps": steps, "headers": self.credentials()});
        if base != self.url {
            scenario["socketio_transports"] = json!(["websocket"]);
        }
        let folder = sb.project().parent().unwrap().to_owned();
        std::thread::spawn(move || run_chat_client(&scenario, &folder, Duration::from_secs(60)))
    }
}

pub(super) fn send(event: &str, data: Value) -> Value {
    json!({"op": "send", "event": event, "data": data})
}

pub(super) fn wait_for(event: &str, count: usize) -> Value {
    json!({"op": "wait_for", "event": event, "count": count})
}

/// The events seen, as `(event, detail)`: the patch type, or the turn's role and status.
pub(super) fn outline(out: &Transcript) -> Vec<String> {
    out.of_kind("event")
        .into_iter()
        .map(|r| {
            let data = &r["data"];
            let event = r["event"].as_str().unwrap();
            match event {
                "turn:patch" => format!("{event} {}", data["patch_type"].as_str().unwrap()),
                "turn:start" | "turn:end" => format!(
                    "{event} {} {}",
                    data["role"].as_str().unwrap(),
                    data["status"].as_str().unwrap()
                ),
                "chat:end" => format!("{event} {}", data["status"].as_str().unwrap()),
                _ => event.to_owned(),
            }
        })
        .collect()
}

pub(super) fn events<'a>(out: &'a Transcript, name: &str) -> Vec<&'a Value> {
    out.of_kind("event")
        .into_iter()
        .filter(|r| r["event"] == name)
        .map(|r| &r["data"])
        .collect()
}

/// A model reply asking AskUserQuestion (call `ask_1`): staging or production?
pub(super) fn deploy_question() -> MockTurn {
    MockTurn::Reply(MockReply::tool_call(
        "ask_1",
        "AskUserQuestion",
        json!({"questions": [{"question": "Which environment?", "header": "Deploy",
            "options": [{"label": "staging"}, {"label": "production"}]}]}),
    ))
}

/// Runs `flow` over the plain WebSocket, then over Socket.IO.
pub(super) fn on_both_transports(flow: fn(&str)) {
    for transport in ["ws", "socket.io"] {
        flow(transport);
    }
}

mod admission;
mod clouds;
mod cluster;
mod connection;
mod cost;
mod flows;
mod many;
mod operations;
mod page;
mod page_sessions;
mod rest;
mod rewind;
mod sequences;

/// The page's steps that open a new session, send `message` once it is ready and wait for
/// `answer` to show and the chat to end, followed by the steps of `then` (an array).
pub(super) fn with_first_message(message: &str, answer: &str, then: Value) -> Value {
    let mut steps = vec![
        json!({"op": "click", "selector": "#new-session"}),
        json!({"op": "wait_text", "selector": "#state", "text": "Ready"}),
        json!({"op": "fill", "selector": "#message", "text": message}),
        json!({"op": "press", "selector": "#message", "key": "Enter"}),
        json!({"op": "wait_text", "selector": ".turn.assistant .answer", "text": answer}),
        // The chat has ended (and the session store holds it, its checkpoint included) only
        // when the page says so: the answer's text comes before.
        json!({"op": "wait_text", "selector": "#state", "text": "Ready"}),
    ];
    if let Value::Array(more) = then {
        steps.extend(more);
    }
    Value::Array(steps)
}

/// Runs `steps` on the page at `link` and fails on any failed step; the steps' texts.
pub(super) fn run_page(
    link: &str,
    steps: Value,
    extra: Value,
    dir: &Path,
) -> (Vec<String>, Transcript) {
    let mut scenario = json!({"url": link, "steps": steps});
    if let (Some(scenario), Value::Object(extra)) = (scenario.as_object_mut(), extra) {
        scenario.extend(extra);
    }
    let out = run_page_client(&scenario, dir, Duration::from_secs(120));
    assert!(
        out.of_kind("failed").is_empty(),
        "{:#?}\n{}",
        out.records,
        out.stderr
    );
    let texts = out
        .of_kind("step")
        .iter()
        .filter_map(|s| s["text"].as_str().map(str::to_owned))
        .collect();
    (texts, out)
}
