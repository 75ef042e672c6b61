//! `agentry acp`'s standard input: any bytes are split into lines, each one JSON message or a
//! JSON-RPC parse error (-32700) that quotes at most the line's start.
#![no_main]

use serde_json::Value;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    agentry_fuzz::block_on(async {
        let mut input = tokio::io::BufReader::new(data);
        while let Ok(Some(message)) = agentry_acp::stdio::read_message(&mut input).await {
            match message {
                Ok(line) => assert!(serde_json::from_str::<Value>(&line).is_ok(), "{line}"),
                Err(malformed) => {
                    let answer = agentry_acp::stdio::parse_error(&malformed);
                    assert!(answer.len() < 1024, "a parse error of {} bytes", answer.len());
                    let answer: Value = serde_json::from_str(&answer).expect("the answer is JSON");
                    assert_eq!(answer["error"]["code"], -32700);
                }
            }
        }
    });
});
