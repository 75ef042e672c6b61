//! The agent on standard input and output. Outgoing messages are written in batches: whatever
//! is queued goes out in one write, so a fast stream of updates costs a few system calls, not
//! one (and a thread wake-up) per message; a lone message still goes out at once.

use crate::server::{AcpSettings, serve};
use agent_client_protocol::{Error, Lines};
use agentry::agent::Agent;
use futures::{SinkExt, Stream, StreamExt};
use std::pin::Pin;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt, AsyncWriteExt};

/// The most bytes gathered into one write.
const BATCH_BYTES: usize = 1 << 20;

/// The longest line read: a prompt with embedded files and images fits; a longer line is
/// skipped, answered with a parse error.
const MAX_LINE_BYTES: usize = 64 << 20;

/// How much of a malformed line its parse error quotes.
const EXCERPT_CHARS: usize = 80;

/// Messages to stdout: queued, then written in batches.
pub type Outgoing = futures::sink::SinkMapErr<
    futures::channel::mpsc::UnboundedSender<String>,
    fn(futures::channel::mpsc::SendError) -> std::io::Error,
>;

/// Messages from stdin, one JSON value per line (a malformed line is answered, not passed on).
pub type Incoming = Pin<Box<dyn Stream<Item = std::io::Result<String>> + Send>>;

/// Standard input and output as a connection's transport.
pub type StdioLines = Lines<Outgoing, Incoming>;

/// Serves `agent` on stdin/stdout until stdin closes or stdout breaks (the client stopped
/// reading), then writes what is left and returns; either way the connection's turns end as when
/// a client hangs up. A line that is not UTF-8 JSON (or is too long) gets its parse error
/// (`-32700`) here, quoting at most its start, and the connection goes on.
pub async fn serve_stdio(agent: Agent, settings: AcpSettings) -> Result<(), Error> {
    over_stdio(async |lines| serve(agent, settings, lines).await).await
}

/// Runs `connect` with stdin and stdout as its transport ([`serve_stdio`]'s, for any peer built
/// on `agent-client-protocol`), then writes what is left of its output and returns its result.
/// The transport ends when stdin closes or stdout breaks.
pub async fn over_stdio<R>(connect: impl AsyncFnOnce(StdioLines) -> R) -> R {
    let (outgoing, queued) = futures::channel::mpsc::unbounded::<String>();
    let (stdout_broke, broken) = tokio::sync::watch::channel(false);
    let writer = tokio::spawn(write_batches(queued, stdout_broke));
    let replies = outgoing.clone();
    let stdin = tokio::io::BufReader::new(tokio::io::stdin());
    let incoming = futures::stream::unfold((stdin, broken), move |(mut stdin, mut broken)| {
        let replies = replies.clone();
        async move {
            loop {
                let read = tokio::select! {
                    read = read_message(&mut stdin) => read,
                    _ = broken.wait_for(|broke| *broke) => return None,
                };
                match read {
                    Ok(Some(Ok(line))) => return Some((Ok(line), (stdin, broken))),
                    Ok(Some(Err(problem))) => {
                        let _ = replies.unbounded_send(parse_error(&problem));
                    }
                    Ok(None) => return None,
                    Err(error) => return Some((Err(error), (stdin, broken))),
                }
            }
        }
    });
    let closed: fn(futures::channel::mpsc::SendError) -> std::io::Error =
        |_| std::io::Error::other("stdout is closed");
    let result = connect(Lines::new(
        outgoing.sink_map_err(closed),
        Box::pin(incoming),
    ))
    .await;
    // The connection is gone, so is every sender: the writer ends once the queue is written.
    if let Err(problem) = writer.await {
        tracing::warn!("the stdout writer failed: {problem}");
    }
    result
}

/// Why a line is not a message, for its parse error.
#[derive(Debug, PartialEq, Eq)]
pub struct Malformed {
    /// What is wrong with it.
    pub reason: String,
    /// Its start (never the whole line, however long).
    pub excerpt: String,
}

/// The next line that holds a JSON value (blank lines are skipped), or why the next line does
/// not; `None` at the end of input.
pub async fn read_message(
    input: &mut (impl AsyncBufRead + Unpin),
) -> std::io::Result<Option<Result<String, Malformed>>> {
    loop {
        let mut line = Vec::new();
        let read = (&mut *input)
            .take(MAX_LINE_BYTES as u64 + 1)
            .read_until(b'\n', &mut line)
            .await?;
        if read == 0 {
            return Ok(None);
        }
        if line.last() != Some(&b'\n') && line.len() > MAX_LINE_BYTES {
            let skipped = line.len() + skip_line(input).await?;
            return Ok(Some(Err(Malformed {
                reason: format!(
                    "the line is {skipped} bytes long; the most is {MAX_LINE_BYTES} bytes"
                ),
                excerpt: excerpt(&String::from_utf8_lossy(&line[..EXCERPT_CHARS * 4])),
            })));
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        return Ok(Some(message(line)));
    }
}

/// Reads and drops the rest of a line; how many bytes it had.
async fn skip_line(input: &mut (impl AsyncBufRead + Unpin)) -> std::io::Result<usize> {
    let mut skipped = 0;
    loop {
        let buffer = input.fill_buf().await?;
        if buffer.is_empty() {
            return Ok(skipped);
        }
        match buffer.iter().position(|&byte| byte == b'\n') {
            Some(end) => {
                input.consume(end + 1);
                return Ok(skipped + end + 1);
            }
            None => {
                let len = buffer.len();
                input.consume(len);
                skipped += len;
            }
        }
    }
}

/// The line as text if it is UTF-8 holding one JSON value.
fn message(line: Vec<u8>) -> Result<String, Malformed> {
    let text = String::from_utf8(line).map_err(|error| {
        let valid = error.utf8_error().valid_up_to();
        Malformed {
            reason: format!("the line is not UTF-8 (at byte {valid})"),
            excerpt: excerpt(&String::from_utf8_lossy(error.as_bytes())),
        }
    })?;
    // Read whole, as the protocol library will: a number out of range (`1e400`) is JSON's
    // syntax but no value, and the library's own parse error would quote the whole line.
    match serde_json::from_str::<serde_json::Value>(&text) {
        Ok(_) => Ok(text),
        Err(error) => Err(Malformed {
            reason: format!(
                "the line is not JSON ({} at column {})",
                match error.classify() {
                    serde_json::error::Category::Eof => "it ends too soon",
                    serde_json::error::Category::Syntax => "a syntax error",
                    _ => "unreadable",
                },
                error.column()
            ),
            excerpt: excerpt(&text),
        }),
    }
}

/// The start of a malformed line, for its error (never the whole line, however long).
fn excerpt(text: &str) -> String {
    agentry::text::clip(text.trim_end(), EXCERPT_CHARS)
}

/// The JSON-RPC parse error answering a malformed line (`id` null: it had none to read).
pub fn parse_error(problem: &Malformed) -> String {
    serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {
            "code": -32700,
            "message": format!("Parse error: {}", problem.reason),
            "data": {"excerpt": problem.excerpt},
        },
    })
    .to_string()
}

/// Writes the queued lines to stdout until the queue ends, or until a write fails: then it says
/// so on `broke` and stops.
async fn write_batches(
    mut queued: futures::channel::mpsc::UnboundedReceiver<String>,
    broke: tokio::sync::watch::Sender<bool>,
) {
    let mut stdout = tokio::io::stdout();
    let mut batch = Vec::new();
    while let Some(line) = queued.next().await {
        push_line(&mut batch, &line);
        while batch.len() < BATCH_BYTES {
            match queued.try_recv() {
                Ok(line) => push_line(&mut batch, &line),
                Err(_) => break,
            }
        }
        if let Err(problem) = write_out(&mut stdout, &batch).await {
            tracing::warn!("stdout broke ({problem}): ending the connection");
            broke.send_replace(true);
            return;
        }
        batch.clear();
    }
}

async fn write_out(stdout: &mut tokio::io::Stdout, batch: &[u8]) -> std::io::Result<()> {
    stdout.write_all(batch).await?;
    stdout.flush().await
}

fn push_line(batch: &mut Vec<u8>, line: &str) {
    batch.extend_from_slice(line.as_bytes());
    batch.push(b'\n');
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    async fn messages(input: &[u8]) -> Vec<Result<String, Malformed>> {
        let mut reader = tokio::io::BufReader::new(input);
        let mut read = Vec::new();
        while let Some(message) = read_message(&mut reader).await.unwrap() {
            read.push(message);
        }
        read
    }

    #[tokio::test]
    async fn bad_lines_are_malformed_with_a_short_excerpt_and_the_next_line_is_read() {
        let long_garbage = format!("{{{}", "x".repeat(100_000));
        let mut input = b"{\"a\":1}\n\n   \n\xff\xfe not utf-8\n".to_vec();
        input.extend_from_slice(long_garbage.as_bytes());
        input.extend_from_slice(b"\n[1,2]\n");
        let read = messages(&input).await;
        assert_eq!(read.len(), 4, "{read:?}");
        assert_eq!(read[0], Ok("{\"a\":1}\n".to_owned()));
        let not_utf8 = read[1].as_ref().unwrap_err();
        assert_eq!(not_utf8.reason, "the line is not UTF-8 (at byte 0)");
        let not_json = read[2].as_ref().unwrap_err();
        assert!(
            not_json.reason.starts_with("the line is not JSON"),
            "{not_json:?}"
        );
        assert_eq!(not_json.excerpt.chars().count(), EXCERPT_CHARS + 1);
        assert!(parse_error(not_json).len() < 400);
        assert_eq!(read[3], Ok("[1,2]\n".to_owned()));
    }

    /// Found by the `acp_line` fuzz target: numbers out of range passed as JSON here, and the
    /// protocol library's parse error then quoted the whole line.
    #[tokio::test]
    async fn numbers_out_of_range_are_parse_errors_here() {
        let padding = "x".repeat(10_000);
        let input = format!(" \t9999999949e749 \n{{\"a\":1e400,\"pad\":\"{padding}\"}}\n");
        let read = messages(input.as_bytes()).await;
        assert_eq!(read.len(), 2, "{read:?}");
        for message in read {
            let malformed = message.unwrap_err();
            assert!(malformed.reason.contains("not JSON"), "{malformed:?}");
            assert!(parse_error(&malformed).len() < 400);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// Any bytes are read as lines, each a JSON message or a short parse error (the fuzz
        /// target `acp_line` runs the same at length).
        #[test]
        fn any_bytes_are_messages_or_short_parse_errors(
            lines in prop::collection::vec(
                prop_oneof![
                    prop::collection::vec(any::<u8>(), 0..300),
                    "\\{\"jsonrpc\":\"2.0\",\"id\":[0-9]{1,3},\"method\":\"[a-z/]{0,20}\"\\}"
                        .prop_map(String::into_bytes),
                ],
                0..8,
            )
        ) {
            let input = lines.join(&b'\n');
            let read = tokio::runtime::Builder::new_current_thread()
                .build()
                .unwrap()
                .block_on(messages(&input));
            for message in read {
                match message {
                    Ok(line) => prop_assert!(serde_json::from_str::<serde_json::Value>(&line).is_ok()),
                    Err(malformed) => {
                        let answer = parse_error(&malformed);
                        prop_assert!(answer.len() < 1024);
                        let answer: serde_json::Value = serde_json::from_str(&answer).unwrap();
                        prop_assert_eq!(&answer["error"]["code"], -32700);
                    }
                }
            }
        }
    }
}
