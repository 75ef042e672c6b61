//! A mock of the hosted model APIs on 127.0.0.1. It plays scripted turns, rendering each in the
//! wire format of the endpoint that was called — OpenAI Chat Completions (`…/chat/completions`),
//! OpenAI Responses (`…/responses`), Anthropic Messages (`…/v1/messages`), Gemini's
//! `…:streamGenerateContent` (the Gemini API's and Vertex AI's), Claude on Vertex AI's
//! `…:streamRawPredict`, Bedrock's
//! ConverseStream (`…/converse-stream`) and InvokeModelWithResponseStream
//! (`…/invoke-with-response-stream`) — as the real services stream them. A turn can also be an
//! error answer (with headers such as `retry-after`), a recorded body played as it is, a stream
//! cut off after some bytes, or one that stalls. Bytes can be delivered in awkward pieces. Every
//! request is recorded; with [`MockModelServer::require`], each is checked as the service checks
//! it (a SigV4 signature, a key) and refused as it refuses.

mod bedrock;
mod sse;

pub use bedrock::{converse_frames, invoke_frames};
pub use sse::{
    anthropic_events, chat_events, gemini_call_signature, gemini_events, responses_events,
};

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

/// What the mock requires of each request, as the service it plays does.
#[derive(Debug, Clone)]
pub enum Required {
    /// A SigV4 signature of these keys (refused as AWS refuses: 403,
    /// `x-amzn-ErrorType: InvalidSignatureException` or `UnrecognizedClientException`).
    SigV4(crate::aws::SigV4Check),
    /// Header `name` with exactly `value` (`authorization: Bearer …`, `api-key`,
    /// `x-goog-api-key`); refused with 401.
    Header {
        /// The header's name, lowercase.
        name: String,
        /// Its value.
        value: String,
    },
}

/// A request the mock received.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// The path.
    pub path: String,
    /// The query, when the URL has one.
    pub query: Option<String>,
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
    required: Mutex<Option<Required>>,
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

    /// Checks every later request as the service does: one that fails is refused as the service
    /// refuses it, and uses no turn.
    pub fn require(&self, required: Required) {
        *self.shared.required.lock().unwrap() = Some(required);
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

/// The refusal of a request that fails the check, as the service words it.
fn refusal(
    required: &Required,
    method: &str,
    uri: &Uri,
    headers: &HeaderMap,
    body: &[u8],
) -> Option<Response> {
    match required {
        Required::SigV4(check) => {
            let target = uri.path_and_query().map_or("/", |p| p.as_str());
            let why = check.verify(method, target, headers, body).err()?;
            let kind = if why.contains("security token") {
                "UnrecognizedClientException"
            } else {
                "InvalidSignatureException"
            };
            let error_type = (
                "x-amzn-ErrorType".to_owned(),
                format!("{kind}:http://internal.amazon.com/coral/com.amazon.coral.service/"),
            );
            Some(status(
                403,
                &[error_type],
                &json!({"message": why}).to_string(),
            ))
        }
        Required::Header { name, value } => {
            let given = headers.get(name.as_str()).and_then(|v| v.to_str().ok());
            (given != Some(value.as_str())).then(|| {
                status(
                    401,
                    &[],
                    &json!({"error": {"message": format!("invalid or missing {name}")}})
                        .to_string(),
                )
            })
        }
    }
}

async fn answer(
    State(shared): State<Arc<Shared>>,
    method: axum::http::Method,
    uri: Uri,
    headers: HeaderMap,
    raw: Bytes,
) -> Response {
    let path = uri.path().to_owned();
    let body: Value = serde_json::from_slice(&raw).unwrap_or(Value::Null);
    let required = shared.required.lock().unwrap().clone();
    if let Some(refused) = required
        .as_ref()
        .and_then(|required| refusal(required, method.as_str(), &uri, &headers, &raw))
    {
        shared.requests.lock().unwrap().push(Recorded {
            path,
            query: uri.query().map(str::to_owned),
            headers,
            body,
        });
        return refused;
    }
    let turn = match &shared.responder {
        Some(responder) => Some(responder(&body)),
        None => {
            shared.requests.lock().unwrap().push(Recorded {
                path: path.clone(),
                query: uri.query().map(str::to_owned),
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
            let events: Vec<Vec<u8>> = if path.ends_with("/converse-stream") {
                converse_frames(&reply)
            } else if path.ends_with("/invoke-with-response-stream") {
                invoke_frames(&reply)
            } else {
                let events = if path.ends_with(":streamGenerateContent") {
                    gemini_events(&reply)
                } else if path.ends_with("/messages") || path.ends_with(":streamRawPredict") {
                    anthropic_events(&reply)
                } else if path.ends_with("/responses") {
                    responses_events(&reply)
                } else {
                    chat_events(&reply)
                };
                events.into_iter().map(String::into_bytes).collect()
            };
            let pieces = match reply.split_bytes {
                Some(size) => events
                    .concat()
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
