//! The OpenAI Chat Completions stream decoder, over SSE framing, on arbitrary bodies.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    agentry_fuzz::decode_body(data, agentry_models::wire::openai_chat::Decoder::new());
});
