//! The model stream path:
//! - `decode/*`: parsing throughput of large recorded streams (a Chat Completions, a Messages, a
//!   Gemini and a Bedrock ConverseStream capture, their content events repeated to about 2 MB),
//!   fed in 16 KiB pieces;
//! - `last_byte_to_turn_end/*`: a whole agent turn against the mock model server on 127.0.0.1
//!   (2,000 text chunks, the last event sent once the client has drained the rest), measured
//!   from the moment the server hands over its last byte to the moment the turn has ended
//!   (events emitted, session state updated);
//! - `burst_last_byte_to_turn_end/*`: the same with all 2,000 events sent at once, so it
//!   measures how fast the client drains a backlog.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use agentry::agent::{Agent, ChatIo, ChatOptions, SessionOptions};
use agentry::model::Model;
use agentry::tool::ContentBlock;
use agentry_models::anthropic::{AnthropicModel, AnthropicSettings};
use agentry_models::http::HttpOptions;
use agentry_models::openai::{OpenAiApi, OpenAiModel, OpenAiSettings};
use agentry_models::wire::bedrock::ConverseDecoder;
use agentry_models::wire::framing::{self, Framing};
use agentry_models::wire::{StreamDecoder, anthropic, gemini, openai_chat};
use agentry_tests::mock_model::{MockModelServer, MockReply, MockTurn};
use bytes::Bytes;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use futures::StreamExt;
use std::sync::Arc;
use std::time::Duration;

fn fixture(name: &str) -> String {
    String::from_utf8(capture(&format!("model-streams/{name}"))).unwrap()
}

fn capture(path: &str) -> Vec<u8> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/");
    std::fs::read(format!("{dir}{path}")).unwrap()
}

/// An event-stream body's frames, with those whose bytes hold `repeat` repeated until the body
/// is about 2 MB.
fn enlarge_frames(body: &[u8], repeat: &[u8]) -> Vec<u8> {
    let mut frames: Vec<&[u8]> = Vec::new();
    let mut rest = body;
    while rest.len() >= 4 {
        let total = u32::from_be_bytes([rest[0], rest[1], rest[2], rest[3]]) as usize;
        frames.push(&rest[..total]);
        rest = &rest[total..];
    }
    let holds = |frame: &[u8]| frame.windows(repeat.len()).any(|w| w == repeat);
    let first = frames.iter().position(|f| holds(f)).unwrap();
    let last = frames.iter().rposition(|f| holds(f)).unwrap();
    let mut out = frames[..first].concat();
    let middle = frames[first..=last].concat();
    while out.len() < 2_000_000 {
        out.extend_from_slice(&middle);
    }
    out.extend(frames[last + 1..].concat());
    out
}

/// The fixture's events, with those matching `repeat` repeated until the body is about 2 MB.
fn enlarge(body: &str, repeat: impl Fn(&str) -> bool) -> Vec<u8> {
    let events: Vec<&str> = body
        .split("\n\n")
        .filter(|e| !e.trim().is_empty())
        .collect();
    let first = events.iter().position(|e| repeat(e)).unwrap();
    let last = events.iter().rposition(|e| repeat(e)).unwrap();
    let middle = events[first..=last].join("\n\n") + "\n\n";
    let mut out = events[..first].join("\n\n") + "\n\n";
    while out.len() < 2_000_000 {
        out.push_str(&middle);
    }
    out.push_str(&(events[last + 1..].join("\n\n") + "\n\n"));
    out.into_bytes()
}

fn decode_all<I: Framing, D: StreamDecoder<I> + 'static>(
    runtime: &tokio::runtime::Runtime,
    body: &[u8],
    decoder: D,
) -> usize {
    let pieces: Vec<Result<Bytes, std::io::Error>> = body
        .chunks(16 * 1024)
        .map(|c| Ok(Bytes::copy_from_slice(c)))
        .collect();
    runtime.block_on(async {
        let stream = framing::decode::<I, _, _, _>(
            futures::stream::iter(pieces),
            decoder,
            Duration::from_secs(5),
        );
        stream.map(|e| e.unwrap()).count().await
    })
}

fn decoding(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let chat = enlarge(&fixture("deepseek-reasoning.sse"), |e| {
        e.contains("\"finish_reason\":null")
    });
    let messages = enlarge(&fixture("anthropic-thinking.sse"), |e| {
        e.contains("content_block_delta")
    });
    // Recorded with CRLF line ends, which `enlarge` splits on as LF.
    let gemini_body = String::from_utf8(capture(
        "cloud-streams/gemini/thought-summaries-gemini-3.5-flash.sse",
    ))
    .unwrap()
    .replace("\r\n", "\n");
    let gemini_stream = enlarge(&gemini_body, |e| !e.contains("finishReason"));
    let converse = enlarge_frames(
        &capture("cloud-streams/bedrock/converse-claude-sonnet-4-reasoning-signature.bin"),
        b"contentBlockDelta",
    );
    let mut group = c.benchmark_group("decode");
    group.throughput(Throughput::Bytes(chat.len() as u64));
    group.bench_function("chat_completions_2MB", |b| {
        b.iter(|| decode_all(&runtime, &chat, openai_chat::Decoder::new()))
    });
    group.throughput(Throughput::Bytes(messages.len() as u64));
    group.bench_function("anthropic_messages_2MB", |b| {
        b.iter(|| decode_all(&runtime, &messages, anthropic::Decoder::new()))
    });
    group.throughput(Throughput::Bytes(gemini_stream.len() as u64));
    group.bench_function("gemini_2MB", |b| {
        b.iter(|| decode_all(&runtime, &gemini_stream, gemini::Decoder::new()))
    });
    group.throughput(Throughput::Bytes(converse.len() as u64));
    group.bench_function("bedrock_converse_2MB", |b| {
        b.iter(|| decode_all(&runtime, &converse, ConverseDecoder::new()))
    });
    group.finish();
}

/// 2,000 text chunks; with `paced`, the last event waits until the client has drained the rest.
fn reply(paced: bool) -> MockTurn {
    let mut reply = MockReply::text(&"word ".repeat(2_000));
    reply.piece = 5;
    if paced {
        reply.pause_before_last = Some(Duration::from_millis(30));
    }
    MockTurn::Reply(reply)
}

fn models(server: &MockModelServer) -> Vec<(&'static str, Arc<dyn Model>)> {
    let http = HttpOptions::default();
    vec![
        (
            "chat_completions",
            Arc::new(
                OpenAiModel::new(OpenAiSettings {
                    display_name: "openai/mock".into(),
                    model: "mock".into(),
                    base_url: format!("{}/v1", server.url()),
                    api_key: Some("k".into()),
                    api: OpenAiApi::ChatCompletions,
                    context_window: None,
                    images: true,
                    max_output_tokens: None,
                    reasoning: None,
                    http: http.clone(),
                })
                .unwrap(),
            ),
        ),
        (
            "anthropic_messages",
            Arc::new(
                AnthropicModel::new(AnthropicSettings {
                    display_name: "anthropic/mock".into(),
                    model: "mock".into(),
                    base_url: server.url(),
                    api_key: "k".into(),
                    context_window: None,
                    images: true,
                    max_output_tokens: 1024,
                    http,
                })
                .unwrap(),
            ),
        ),
    ]
}

fn last_byte_to_turn_end(c: &mut Criterion) {
    turns(c, "last_byte_to_turn_end", true);
}

/// The same turn with the whole answer sent at once: how long the client takes to drain a
/// burst of 2,000 events after the server has sent them.
fn burst(c: &mut Criterion) {
    turns(c, "burst_last_byte_to_turn_end", false);
}

fn turns(c: &mut Criterion, group_name: &str, paced: bool) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let server = runtime.block_on(MockModelServer::start([]));
    let dir = std::env::temp_dir();
    let mut group = c.benchmark_group(group_name);
    for (name, model) in models(&server) {
        let agent = Agent::builder(model).build().unwrap();
        group.bench_function(name, |b| {
            b.iter_custom(|iterations| {
                let mut total = Duration::ZERO;
                for _ in 0..iterations {
                    server.push(reply(paced));
                    let mut session = agent.new_session(SessionOptions::new(&dir)).unwrap();
                    let io = ChatIo::new(|_event| {});
                    runtime.block_on(async {
                        let prompt = vec![ContentBlock::text("go")];
                        session
                            .prompt_with(prompt, &ChatOptions::default(), &io)
                            .await
                            .unwrap();
                    });
                    let ended = std::time::Instant::now();
                    total += ended.duration_since(server.last_byte_at().unwrap());
                }
                total
            })
        });
    }
    group.finish();
}

criterion_group!(benches, decoding, last_byte_to_turn_end, burst);
criterion_main!(benches);
