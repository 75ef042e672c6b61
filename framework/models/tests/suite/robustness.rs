//! The stream decoders read what agentry does not control: any input, whole or damaged, gives
//! events or one error without panicking. The same inputs are fuzzed at length with
//! `./scripts/fuzz`; these property tests run a few hundred cases each in the normal test run,
//! seeded with the recorded model streams.

use agentry_models::wire::sse::decode;
use agentry_models::wire::{StreamDecoder, anthropic, openai_chat, openai_responses};
use bytes::Bytes;
use futures::StreamExt;
use proptest::prelude::*;
use std::time::Duration;

/// Decodes `body` cut into `chunk`-byte pieces; returns how many items the stream gave.
fn decode_body(body: &[u8], chunk: usize, decoder: impl StreamDecoder + 'static) -> usize {
    let chunks: Vec<Result<Bytes, std::io::Error>> = body
        .chunks(chunk.max(1))
        .map(|piece| Ok(Bytes::copy_from_slice(piece)))
        .collect();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    runtime.block_on(async {
        decode(
            futures::stream::iter(chunks),
            decoder,
            Duration::from_secs(60),
        )
        .count()
        .await
    })
}

/// A recorded stream, damaged: bytes replaced at some positions, cut at another.
fn damaged_fixture(name: &'static str) -> impl Strategy<Value = Vec<u8>> {
    let path = format!(
        "{}/tests/fixtures/model-streams/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    let original = std::fs::read(path).unwrap();
    let len = original.len();
    (prop::collection::vec((0..len, any::<u8>()), 0..8), 0..=len).prop_map(move |(edits, cut)| {
        let mut bytes = original.clone();
        for (at, byte) in edits {
            bytes[at] = byte;
        }
        bytes.truncate(cut);
        bytes
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn damaged_openai_streams_decode_to_events_or_one_error(
        body in damaged_fixture("openai-chat-parallel-tools.sse"),
        chunk in 1usize..64,
    ) {
        prop_assert!(decode_body(&body, chunk, openai_chat::Decoder::new()) <= body.len() + 1);
    }

    #[test]
    fn damaged_anthropic_streams_decode_to_events_or_one_error(
        body in damaged_fixture("anthropic-tool-use.sse"),
        chunk in 1usize..64,
    ) {
        prop_assert!(decode_body(&body, chunk, anthropic::Decoder::new()) <= body.len() + 1);
    }

    #[test]
    fn arbitrary_bodies_decode_without_panicking(body in prop::collection::vec(any::<u8>(), 0..512)) {
        decode_body(&body, 7, openai_chat::Decoder::new());
        decode_body(&body, 7, anthropic::Decoder::new());
        decode_body(&body, 7, openai_responses::Decoder::new());
    }
}
