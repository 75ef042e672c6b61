//! A mock of the hosted model APIs on 127.0.0.1. It plays scripted turns, rendering each in the
//! wire format of the endpoint that was called — OpenAI Chat Completions (`…/chat/completions`),
//! OpenAI Responses (`…/responses`) or Anthropic Messages (`…/v1/messages`) — as the real
//! services stream them. A turn can also be an error answer (with headers such as
//! `retry-after`), a recorded body played as it is, a stream cut off after some bytes, or one that
//! stalls. Bytes can be delivered in awkward pieces. Every request is recorded.

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::Response;
use futures::StreamExt;
use serde_json::{Value, json};
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// One part of a scripted answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Part {
    /// Answer text, streamed in pieces of at most `MockReply::piece` characters.
    Text(String),
    /// Reasoning, with the signature Anthropic closes it with.
    Thinking {
        /// The reasoning.
        text: String,
        /// Its signature.
        signature: String,
    },
    /// A tool call; its arguments stream in three fragments.
    ToolCall {
        /// The call's id.
        id: String,
        /// The tool's name.
        name: String,
        /// The arguments (JSON text).
        arguments: String,
    },
}

/// Why a scripted answer ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// end_turn / stop.
    EndTurn,
    /// tool_use / tool_calls.
    ToolUse,
    /// max_tokens / length.
    MaxTokens,
    /// refusal / content_filter.
    Refusal,
}

/// A scripted streamed answer.
#[derive(Debug, Clone)]
pub struct MockReply {
    /// What it says.
    pub parts: Vec<Part>,
    /// Why it ends.
    pub stop: Stop,
    /// Input, output, cache-read and cache-write tokens reported.
    pub usage: [u64; 4],
    /// The most characters per text delta.
    pub piece: usize,
    /// Deliver the body in pieces of this many bytes (one piece per event when `None`).
    pub split_bytes: Option<usize>,
    /// Cut the connection after this many bytes.
    pub drop_after: Option<usize>,
    /// Send nothing more after this many bytes (the connection stays open).
    pub stall_after: Option<usize>,
    /// Wait this long before sending the last piece (so a client has drained the rest, and the
    /// time from the last byte to the client's end is its own latency, not a backlog).
    pub pause_before_last: Option<Duration>,
}

impl MockReply {
    /// An answer made of these parts, ending as `stop`.
    pub fn new(parts: Vec<Part>, stop: Stop) -> Self {
        Self {
            parts,
            stop,
            usage: [20, 5, 0, 0],
            piece: usize::MAX,
            split_bytes: None,
            drop_after: None,
            stall_after: None,
            pause_before_last: None,
        }
    }

    /// A text answer that ends the turn.
    pub fn text(text: &str) -> Self {
        Self::new(vec![Part::Text(text.to_owned())], Stop::EndTurn)
    }

    /// An answer that calls one tool.
    pub fn tool_call(id: &str, name: &str, arguments: Value) -> Self {
        Self::new(
            vec![Part::ToolCall {
                id: id.to_owned(),
                name: name.to_owned(),
                arguments: arguments.to_string(),
            }],
            Stop::ToolUse,
        )
    }
}

/// One scripted turn: what the next request gets.
#[derive(Debug, Clone)]
pub enum MockTurn {
    /// A streamed answer in the endpoint's wire format.
    Reply(MockReply),
    /// An error answer.
    Status {
        /// The HTTP status.
        status: u16,
        /// Extra headers (`retry-after`, …).
        headers: Vec<(String, String)>,
        /// The body.
        body: String,
    },
    /// A body played exactly as given (a recorded stream), as `text/event-stream`.
    Raw(Vec<u8>),
}

/// A request the mock received.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// The path.
    pub path: String,
    /// The headers.
    pub headers: HeaderMap,
    /// The JSON body.
    pub body: Value,
}

/// Answers a request (its JSON body) with a turn, in place of the queue.
pub type Responder = Box<dyn Fn(&Value) -> MockTurn + Send + Sync>;

#[derive(Default)]
struct Shared {
    turns: Mutex<VecDeque<MockTurn>>,
    /// When set, every request is answered by it (and not recorded: load runs send many).
    responder: Option<Responder>,
    requests: Mutex<Vec<Recorded>>,
    last_byte: Mutex<Option<Instant>>,
    hung_up: AtomicBool,
}

/// The running mock server; it stops when dropped.
pub struct MockModelServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    /// The serving task, when it runs on the caller's runtime.
    task: Option<tokio::task::JoinHandle<()>>,
}

impl Drop for MockModelServer {
    fn drop(&mut self) {
        if let Some(task) = &self.task {
            task.abort();
        }
    }
}

impl MockModelServer {
    /// Starts a server on an ephemeral port of 127.0.0.1 (call inside a tokio runtime).
    pub async fn start(turns: impl IntoIterator<Item = MockTurn>) -> Self {
        let shared = Shared::default();
        shared.turns.lock().unwrap().extend(turns);
        Self::serve(shared).await
    }

    /// Starts a server that answers each request with `responder`'s turn for its JSON body (a
    /// model for load runs: any number of conversations at once).
    pub async fn start_responding(responder: Responder) -> Self {
        Self::serve(Shared {
            responder: Some(responder),
            ..Shared::default()
        })
        .await
    }

    async fn serve(shared: Shared) -> Self {
        let shared = Arc::new(shared);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        // Hosted APIs send each event at once; without TCP_NODELAY the kernel would hold small
        // writes back for the client's delayed ACK (up to 40 ms), which is not agentry's cost.
        let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
            let _ = tcp.set_nodelay(true);
        });
        let app = axum::Router::new()
            .fallback(answer)
            .with_state(shared.clone());
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Self {
            addr,
            shared,
            task: Some(task),
        }
    }

    /// Starts a server on its own runtime thread, for tests that are not async (the binary's).
    pub fn start_blocking(turns: impl IntoIterator<Item = MockTurn> + Send + 'static) -> Self {
        Self::on_own_thread(move || Self::start(turns))
    }

    /// [`MockModelServer::start_responding`] on its own runtime thread.
    pub fn start_responding_blocking(responder: Responder) -> Self {
        Self::on_own_thread(move || Self::start_responding(responder))
    }

    fn on_own_thread<F, Started>(start: F) -> Self
    where
        F: FnOnce() -> Started + Send + 'static,
        Started: std::future::Future<Output = Self>,
    {
        let (sender, receiver) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async move {
                let server = start().await;
                let (addr, shared) = (server.addr, server.shared.clone());
                sender.send((addr, shared)).unwrap();
                // Serve until the process ends.
                std::future::pending::<()>().await;
                drop(server);
            });
        });
        let (addr, shared) = receiver.recv().unwrap();
        Self {
            addr,
            shared,
            task: None,
        }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Queues more turns.
    pub fn push(&self, turn: MockTurn) {
        self.shared.turns.lock().unwrap().push_back(turn);
    }

    /// Every request so far.
    pub fn requests(&self) -> Vec<Recorded> {
        self.shared.requests.lock().unwrap().clone()
    }

    /// When the last byte of the last streamed body was handed to the connection.
    pub fn last_byte_at(&self) -> Option<Instant> {
        *self.shared.last_byte.lock().unwrap()
    }

    /// Whether a client hung up before a streamed body was complete.
    pub fn client_hung_up(&self) -> bool {
        self.shared.hung_up.load(Ordering::SeqCst)
    }
}

async fn answer(
    State(shared): State<Arc<Shared>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let path = uri.path().to_owned();
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let turn = match &shared.responder {
        Some(responder) => Some(responder(&body)),
        None => {
            shared.requests.lock().unwrap().push(Recorded {
                path: path.clone(),
                headers,
                body,
            });
            shared.turns.lock().unwrap().pop_front()
        }
    };
    match turn {
        None => status(
            500,
            &[],
            r#"{"error":{"message":"the mock has no turn left"}}"#,
        ),
        Some(MockTurn::Status {
            status: code,
            headers,
            body,
        }) => status(code, &headers, &body),
        Some(MockTurn::Raw(bytes)) => stream_body(shared, vec![Bytes::from(bytes)], Cut::default()),
        Some(MockTurn::Reply(reply)) => {
            let events = if path.ends_with("/messages") {
                anthropic_events(&reply)
            } else if path.ends_with("/responses") {
                responses_events(&reply)
            } else {
                chat_events(&reply)
            };
            let pieces = match reply.split_bytes {
                Some(size) => events
                    .concat()
                    .as_bytes()
                    .chunks(size)
                    .map(Bytes::copy_from_slice)
                    .collect(),
                None => events.into_iter().map(Bytes::from).collect(),
            };
            let cut = Cut {
                drop_after: reply.drop_after,
                stall_after: reply.stall_after,
                pause_before_last: reply.pause_before_last,
            };
            stream_body(shared, pieces, cut)
        }
    }
}

fn status(code: u16, headers: &[(String, String)], body: &str) -> Response {
    let mut response = Response::builder()
        .status(StatusCode::from_u16(code).unwrap())
        .header("content-type", "application/json");
    for (name, value) in headers {
        response = response.header(name, value);
    }
    response.body(Body::from(body.to_owned())).unwrap()
}

/// Marks the shared state when the body is dropped before its end (the client hung up).
struct HangUpWatch {
    shared: Arc<Shared>,
    finished: bool,
}

impl Drop for HangUpWatch {
    fn drop(&mut self) {
        if !self.finished {
            self.shared.hung_up.store(true, Ordering::SeqCst);
        }
    }
}

/// How a streamed body departs from a plain, complete one.
#[derive(Default)]
struct Cut {
    drop_after: Option<usize>,
    stall_after: Option<usize>,
    pause_before_last: Option<Duration>,
}

fn stream_body(shared: Arc<Shared>, pieces: Vec<Bytes>, cut: Cut) -> Response {
    let Cut {
        drop_after,
        stall_after,
        pause_before_last,
    } = cut;
    let limit = drop_after.or(stall_after);
    let mut sent = 0usize;
    let mut out: Vec<Bytes> = Vec::new();
    for piece in pieces {
        match limit {
            Some(limit) if sent + piece.len() > limit => {
                out.push(piece.slice(..limit - sent));
                sent = limit;
                break;
            }
            _ => {
                sent += piece.len();
                out.push(piece);
            }
        }
    }
    let cut = limit.is_some_and(|limit| sent == limit);
    let watch = HangUpWatch {
        shared: shared.clone(),
        finished: false,
    };
    let body = async_body(out, pause_before_last, move || {
        *shared.last_byte.lock().unwrap() = Some(Instant::now());
    })
    .chain(futures::stream::once(async move {
        // Moved in whole, so dropping this future (the client hung up) drops the watch.
        let mut watch = watch;
        if cut && drop_after.is_some() {
            watch.finished = true;
            return Err(std::io::Error::other("the mock cut the connection"));
        }
        if cut {
            // Stall: keep the connection open and send nothing more.
            tokio::time::sleep(Duration::from_secs(3600)).await;
        }
        watch.finished = true;
        Ok(Bytes::new())
    }));
    Response::builder()
        .status(200)
        .header("content-type", "text/event-stream")
        .header("cache-control", "no-cache")
        .body(Body::from_stream(body))
        .unwrap()
}

/// The pieces as a body stream; `on_last` runs as the last piece is handed over.
fn async_body(
    pieces: Vec<Bytes>,
    pause_before_last: Option<Duration>,
    on_last: impl Fn() + Send + Sync + 'static,
) -> impl futures::Stream<Item = Result<Bytes, std::io::Error>> + Send {
    let count = pieces.len();
    let on_last = Arc::new(on_last);
    futures::stream::iter(pieces.into_iter().enumerate()).then(move |(i, piece)| {
        let on_last = on_last.clone();
        async move {
            let is_last = i + 1 == count;
            match pause_before_last {
                Some(pause) if is_last => tokio::time::sleep(pause).await,
                // Yield between pieces so each reaches the socket on its own.
                _ => tokio::task::yield_now().await,
            }
            if is_last {
                on_last();
            }
            Ok(piece)
        }
    })
}

fn sse(event: Option<&str>, data: &Value) -> String {
    match event {
        Some(name) => format!("event: {name}\ndata: {data}\n\n"),
        None => format!("data: {data}\n\n"),
    }
}

fn pieces(text: &str, size: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars
        .chunks(size.max(1))
        .map(|c| c.iter().collect())
        .collect()
}

fn thirds(text: &str) -> Vec<String> {
    let size = text.chars().count().div_ceil(3).max(1);
    pieces(text, size)
}

/// The Chat Completions stream, as OpenAI sends it.
pub fn chat_events(reply: &MockReply) -> Vec<String> {
    let chunk = |delta: Value, finish: Value| {
        sse(
            None,
            &json!({
                "id": "chatcmpl-mock", "object": "chat.completion.chunk", "created": 1, "model": "mock",
                "usage": null, "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}],
                "obfuscation": "x",
            }),
        )
    };
    let mut out = vec![chunk(
        json!({"role": "assistant", "content": ""}),
        Value::Null,
    )];
    let mut tool_index = 0;
    for part in &reply.parts {
        match part {
            Part::Text(text) => out.extend(
                pieces(text, reply.piece)
                    .iter()
                    .map(|p| chunk(json!({"content": p}), Value::Null)),
            ),
            Part::Thinking { text, .. } => out.extend(pieces(text, reply.piece).iter().map(|p| {
                chunk(
                    json!({"content": null, "reasoning_content": p}),
                    Value::Null,
                )
            })),
            Part::ToolCall {
                id,
                name,
                arguments,
            } => {
                out.push(chunk(json!({"tool_calls": [{"index": tool_index, "id": id, "type": "function", "function": {"name": name, "arguments": ""}}]}), Value::Null));
                for fragment in thirds(arguments) {
                    out.push(chunk(json!({"tool_calls": [{"index": tool_index, "function": {"arguments": fragment}}]}), Value::Null));
                }
                tool_index += 1;
            }
        }
    }
    let finish = match reply.stop {
        Stop::EndTurn => "stop",
        Stop::ToolUse => "tool_calls",
        Stop::MaxTokens => "length",
        Stop::Refusal => "content_filter",
    };
    out.push(chunk(json!({}), json!(finish)));
    let [input, output, cache_read, _] = reply.usage;
    out.push(sse(None, &json!({
        "id": "chatcmpl-mock", "object": "chat.completion.chunk", "created": 1, "model": "mock", "choices": [],
        "usage": {"prompt_tokens": input + cache_read, "completion_tokens": output, "total_tokens": input + cache_read + output,
                  "prompt_tokens_details": {"cached_tokens": cache_read}},
    })));
    out.push("data: [DONE]\n\n".to_owned());
    out
}

/// The Messages stream, as Anthropic sends it (pings included).
pub fn anthropic_events(reply: &MockReply) -> Vec<String> {
    let [input, output, cache_read, cache_write] = reply.usage;
    let mut out = vec![sse(
        Some("message_start"),
        &json!({"type": "message_start", "message": {
            "id": "msg_mock", "type": "message", "role": "assistant", "model": "mock", "content": [],
            "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": input, "cache_read_input_tokens": cache_read, "cache_creation_input_tokens": cache_write, "output_tokens": 1},
        }}),
    )];
    let event = |kind: &str, payload: Value| sse(Some(kind), &payload);
    for (index, part) in reply.parts.iter().enumerate() {
        let delta = |delta: Value| {
            event(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": index, "delta": delta}),
            )
        };
        match part {
            Part::Text(text) => {
                out.push(event("content_block_start", json!({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}})));
                if index == 0 {
                    out.push(event("ping", json!({"type": "ping"})));
                }
                out.extend(
                    pieces(text, reply.piece)
                        .iter()
                        .map(|p| delta(json!({"type": "text_delta", "text": p}))),
                );
            }
            Part::Thinking { text, signature } => {
                out.push(event("content_block_start", json!({"type": "content_block_start", "index": index, "content_block": {"type": "thinking", "thinking": "", "signature": ""}})));
                out.extend(
                    pieces(text, reply.piece)
                        .iter()
                        .map(|p| delta(json!({"type": "thinking_delta", "thinking": p}))),
                );
                out.push(delta(
                    json!({"type": "signature_delta", "signature": signature}),
                ));
            }
            Part::ToolCall {
                id,
                name,
                arguments,
            } => {
                out.push(event("content_block_start", json!({"type": "content_block_start", "index": index, "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}})));
                out.push(delta(
                    json!({"type": "input_json_delta", "partial_json": ""}),
                ));
                out.extend(
                    thirds(arguments)
                        .iter()
                        .map(|f| delta(json!({"type": "input_json_delta", "partial_json": f}))),
                );
            }
        }
        out.push(event(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": index}),
        ));
    }
    let stop = match reply.stop {
        Stop::EndTurn => "end_turn",
        Stop::ToolUse => "tool_use",
        Stop::MaxTokens => "max_tokens",
        Stop::Refusal => "refusal",
    };
    out.push(event("message_delta", json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null}, "usage": {"output_tokens": output}})));
    out.push(event("message_stop", json!({"type": "message_stop"})));
    out
}

/// The Responses stream, as OpenAI sends it.
pub fn responses_events(reply: &MockReply) -> Vec<String> {
    let event = |kind: &str, mut payload: Value| {
        payload["type"] = json!(kind);
        sse(Some(kind), &payload)
    };
    let mut out = vec![event(
        "response.created",
        json!({"response": {"id": "resp_mock", "status": "in_progress"}}),
    )];
    for (index, part) in reply.parts.iter().enumerate() {
        match part {
            Part::Text(text) => out.extend(pieces(text, reply.piece).iter().map(|p| {
                event(
                    "response.output_text.delta",
                    json!({"output_index": index, "content_index": 0, "delta": p}),
                )
            })),
            Part::Thinking { text, .. } => out.extend(pieces(text, reply.piece).iter().map(|p| {
                event(
                    "response.reasoning_summary_text.delta",
                    json!({"output_index": index, "summary_index": 0, "delta": p}),
                )
            })),
            Part::ToolCall {
                id,
                name,
                arguments,
            } => {
                let item = json!({"type": "function_call", "id": format!("fc_{index}"), "call_id": id, "name": name, "arguments": ""});
                out.push(event(
                    "response.output_item.added",
                    json!({"output_index": index, "item": item}),
                ));
                out.extend(thirds(arguments).iter().map(|f| {
                    event(
                        "response.function_call_arguments.delta",
                        json!({"output_index": index, "delta": f}),
                    )
                }));
                let mut done = item.clone();
                done["arguments"] = json!(arguments);
                out.push(event(
                    "response.output_item.done",
                    json!({"output_index": index, "item": done}),
                ));
            }
        }
    }
    let [input, output, cache_read, _] = reply.usage;
    let (kind, incomplete) = match reply.stop {
        Stop::MaxTokens => (
            "response.incomplete",
            json!({"reason": "max_output_tokens"}),
        ),
        Stop::Refusal => ("response.incomplete", json!({"reason": "content_filter"})),
        _ => ("response.completed", Value::Null),
    };
    out.push(event(kind, json!({"response": {"id": "resp_mock", "incomplete_details": incomplete,
        "usage": {"input_tokens": input + cache_read, "output_tokens": output, "input_tokens_details": {"cached_tokens": cache_read}}}})));
    out
}
