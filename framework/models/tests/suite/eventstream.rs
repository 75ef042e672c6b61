//! AWS's binary event stream read frame by frame: the format's own test vectors (every header
//! type; each way a frame can be broken), and every Bedrock capture in
//! `tests/fixtures/cloud-streams/bedrock/` whole, a byte at a time, in 7-byte pieces and as the
//! network split it when it was recorded.

use agentry_models::wire::eventstream::{Frame, FrameReader, HeaderValue};
use agentry_tests::aws::frame;
use std::collections::BTreeMap;
use std::path::PathBuf;

fn bedrock(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/cloud-streams/bedrock")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every frame of `body`, handed to the reader in pieces of the given sizes (the last piece
/// repeated to the end).
fn frames_in_pieces(
    body: &[u8],
    sizes: &[usize],
) -> Result<Vec<Frame>, agentry::model::ModelError> {
    let mut reader = FrameReader::new();
    let mut frames = Vec::new();
    let mut rest = body;
    let mut sizes = sizes.iter().copied();
    let mut size = sizes.next().unwrap_or(rest.len());
    while !rest.is_empty() {
        let (piece, after) = rest.split_at(size.min(rest.len()));
        rest = after;
        reader.push(piece);
        while let Some(frame) = reader.next_frame()? {
            frames.push(frame);
        }
        size = sizes.next().unwrap_or(size);
    }
    reader.finish()?;
    Ok(frames)
}

fn frames(body: &[u8]) -> Vec<Frame> {
    frames_in_pieces(body, &[]).unwrap()
}

#[test]
fn the_spec_vectors_read_with_every_header_type() {
    let [all] = frames(&bedrock(
        "eventstream-vectors/valid_with_all_headers_and_payload.bin",
    ))
    .try_into()
    .unwrap();
    let uuid = [
        0xb7, 0x9b, 0xc9, 0x14, 0xde, 0x21, 0x4e, 0x13, 0xb8, 0xb2, 0xbc, 0x47, 0xe8, 0x5b, 0x7f,
        0x0b,
    ];
    let expected = [
        ("true", HeaderValue::Bool(true)),
        ("false", HeaderValue::Bool(false)),
        ("byte", HeaderValue::Byte(50)),
        ("short", HeaderValue::Short(20_000)),
        ("int", HeaderValue::Integer(500_000)),
        ("long", HeaderValue::Long(50_000_000_000)),
        ("bytes", HeaderValue::Bytes(b"some bytes".to_vec())),
        ("str", HeaderValue::String("some str".into())),
        ("time", HeaderValue::Timestamp(5_000_000_000)),
        ("uuid", HeaderValue::Uuid(uuid)),
    ]
    .map(|(name, value)| (name.to_owned(), value));
    assert_eq!(all.headers, expected);
    assert_eq!(&all.payload[..], b"some payload");
    assert_eq!(all.text_header("str"), Some("some str"));
    assert_eq!(all.text_header("int"), None, "not a string header");

    let [empty] = frames(&bedrock("eventstream-vectors/valid_empty_payload.bin"))
        .try_into()
        .unwrap();
    assert_eq!(
        empty.headers,
        [("some-header".to_owned(), HeaderValue::Short(500))]
    );
    assert!(empty.payload.is_empty());

    let [bare] = frames(&bedrock("eventstream-vectors/valid_no_headers.bin"))
        .try_into()
        .unwrap();
    assert!(bare.headers.is_empty());
    assert_eq!(&bare.payload[..], b"another test payload");
}

#[test]
fn a_broken_frame_is_an_error_that_says_what_is_wrong() {
    for (vector, says) in [
        (
            "invalid_prelude_checksum.bin",
            "prelude's checksum does not match",
        ),
        (
            "invalid_message_checksum.bin",
            "its checksum does not match",
        ),
        ("invalid_headers_length.bin", "lengths do not add up"),
        // These two had a header changed after their checksums were made: the checksum
        // catches it before the header is read.
        (
            "invalid_header_value_type.bin",
            "its checksum does not match",
        ),
        (
            "invalid_header_string_length_cut_off.bin",
            "its checksum does not match",
        ),
    ] {
        let body = bedrock(&format!("eventstream-vectors/{vector}"));
        let error = frames_in_pieces(&body, &[]).expect_err(vector).to_string();
        assert!(error.contains(says), "{vector}: {error}");
    }
    // The same faults in frames whose checksums are right: a header type the format does not
    // have, a string longer than the headers left.
    for (headers, says) in [
        (
            &b"\x04name\x0a"[..],
            "header `name` has a value of unknown type 10",
        ),
        (
            &b"\x04name\x07\x00\x10ab"[..],
            "a header runs past the end of the headers",
        ),
    ] {
        let error = frames_in_pieces(&frame(headers, b""), &[])
            .unwrap_err()
            .to_string();
        assert!(error.contains(says), "{error}");
    }
}

#[test]
fn a_body_cut_inside_a_frame_is_an_error_and_a_whole_one_is_not_waited_for() {
    let body = bedrock("converse-nova-micro-text.bin");
    let mut reader = FrameReader::new();
    reader.push(&body[..body.len() - 3]);
    while reader.next_frame().unwrap().is_some() {}
    let error = reader.finish().unwrap_err().to_string();
    assert!(error.contains("ended inside a frame"), "{error}");

    // A prelude that claims a gigabyte (its own checksum right) is refused at once.
    let mut huge = (1u32 << 30).to_be_bytes().to_vec();
    huge.extend_from_slice(&0u32.to_be_bytes());
    let crc = crc32fast::hash(&huge);
    huge.extend_from_slice(&crc.to_be_bytes());
    let mut reader = FrameReader::new();
    reader.push(&huge);
    let error = reader.next_frame().unwrap_err().to_string();
    assert!(error.contains("lengths do not add up"), "{error}");
}

/// How many frames of each `:event-type` a capture holds (read with an independent parser
/// when the fixtures were collected).
fn expected_events(name: &str) -> BTreeMap<&'static str, usize> {
    let counts: &[(&str, usize)] = match name {
        "converse-claude-3-sonnet-text-then-tool-use.bin" => &[
            ("messageStart", 1),
            ("contentBlockStart", 1),
            ("contentBlockDelta", 26),
            ("contentBlockStop", 2),
            ("messageStop", 1),
            ("metadata", 1),
        ],
        "converse-claude-3-sonnet-tool-use-streamed-input.bin" => &[
            ("messageStart", 1),
            ("contentBlockStart", 1),
            ("contentBlockDelta", 19),
            ("contentBlockStop", 1),
            ("messageStop", 1),
            ("metadata", 1),
        ],
        "converse-claude-3.7-prompt-cache-read.bin" => &[
            ("messageStart", 1),
            ("contentBlockDelta", 51),
            ("contentBlockStop", 1),
            ("messageStop", 1),
            ("metadata", 1),
        ],
        "converse-claude-3.7-prompt-cache-write.bin" => &[
            ("messageStart", 1),
            ("contentBlockDelta", 99),
            ("contentBlockStop", 1),
            ("messageStop", 1),
            ("metadata", 1),
        ],
        "converse-claude-3.7-redacted-reasoning.bin" => &[
            ("messageStart", 1),
            ("contentBlockDelta", 12),
            ("contentBlockStop", 3),
            ("messageStop", 1),
            ("metadata", 1),
        ],
        "converse-claude-sonnet-4-reasoning-signature.bin" => &[
            ("messageStart", 1),
            ("contentBlockDelta", 20),
            ("contentBlockStop", 2),
            ("messageStop", 1),
            ("metadata", 1),
        ],
        "converse-gpt-oss-120b-reasoning-empty-delta.bin" => &[
            ("messageStart", 1),
            ("contentBlockDelta", 4),
            ("contentBlockStop", 3),
            ("messageStop", 1),
            ("metadata", 1),
        ],
        "converse-nova-2-lite-server-tool-code-interpreter.bin" => &[
            ("messageStart", 1),
            ("contentBlockStart", 3),
            ("contentBlockDelta", 3),
            ("contentBlockStop", 3),
            ("messageStop", 1),
            ("metadata", 1),
        ],
        "converse-nova-micro-parallel-tool-use.bin" => &[
            ("messageStart", 1),
            ("contentBlockStart", 2),
            ("contentBlockDelta", 59),
            ("contentBlockStop", 3),
            ("messageStop", 1),
            ("metadata", 1),
        ],
        "converse-nova-micro-text.bin" => &[
            ("messageStart", 1),
            ("contentBlockDelta", 29),
            ("contentBlockStop", 1),
            ("messageStop", 1),
            ("metadata", 1),
        ],
        "invoke-claude-3-sonnet-2024-no-padding.bin" => &[("chunk", 23)],
        "invoke-claude-3-sonnet-tcp-chunked.bin" => &[("chunk", 10)],
        "invoke-claude-3.5-sonnet-parallel-tool-use.bin" => &[("chunk", 27)],
        "invoke-claude-sonnet-4-thinking-signature.bin" => &[("chunk", 239)],
        other => panic!("{other}: a capture the test does not know; add its counts"),
    };
    counts.iter().copied().collect()
}

#[test]
fn every_bedrock_capture_reads_alike_however_its_bytes_arrive() {
    let dir =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cloud-streams/bedrock");
    let mut read = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if !name.ends_with(".bin") {
            continue;
        }
        let body = bedrock(&name);
        let whole = frames(&body);
        let mut events: BTreeMap<&str, usize> = BTreeMap::new();
        for frame in &whole {
            assert_eq!(frame.text_header(":message-type"), Some("event"), "{name}");
            let event = frame.text_header(":event-type").expect("an event type");
            *events.entry(event).or_default() += 1;
            let payload: serde_json::Value = serde_json::from_slice(&frame.payload)
                .unwrap_or_else(|e| panic!("{name}: a payload that is not JSON: {e}"));
            assert!(payload.is_object(), "{name}: {payload}");
        }
        assert_eq!(events, expected_events(&name), "{name}");
        assert_eq!(
            frames_in_pieces(&body, &[1]).unwrap(),
            whole,
            "{name}, bytewise"
        );
        assert_eq!(
            frames_in_pieces(&body, &[7]).unwrap(),
            whole,
            "{name}, 7 bytes"
        );
        read += 1;
    }
    assert_eq!(read, 14, "every capture was read");

    // As the network handed the recorded body over: reads that end mid-frame and span frames.
    let body = bedrock("invoke-claude-3-sonnet-tcp-chunked.bin");
    let sizes: Vec<usize> = serde_json::from_slice(&bedrock(
        "invoke-claude-3-sonnet-tcp-chunked.bin.chunks.json",
    ))
    .unwrap();
    assert_eq!(sizes.iter().sum::<usize>(), body.len());
    assert_eq!(frames_in_pieces(&body, &sizes).unwrap(), frames(&body));
}
