//! The agent on standard input and output. Outgoing messages are written in batches: whatever
//! is queued goes out in one write, so a fast stream of updates costs a few system calls, not
//! one (and a thread wake-up) per message; a lone message still goes out at once.

use crate::server::{AcpSettings, serve};
use agent_client_protocol::{Error, Lines};
use agentry::agent::Agent;
use futures::{SinkExt, StreamExt};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};

/// The most bytes gathered into one write.
const BATCH_BYTES: usize = 1 << 20;

/// Serves `agent` on stdin/stdout until stdin closes, then writes what is left and returns.
pub async fn serve_stdio(agent: Agent, settings: AcpSettings) -> Result<(), Error> {
    let (outgoing, queued) = futures::channel::mpsc::unbounded::<String>();
    let writer = tokio::spawn(write_batches(queued));
    let incoming = futures::stream::unfold(
        tokio::io::BufReader::new(tokio::io::stdin()).lines(),
        async |mut lines| match lines.next_line().await {
            Ok(Some(line)) => Some((Ok(line), lines)),
            Ok(None) => None,
            Err(error) => Some((Err(error), lines)),
        },
    );
    let outgoing = outgoing.sink_map_err(|_| std::io::Error::other("stdout is closed"));
    let result = serve(agent, settings, Lines::new(outgoing, Box::pin(incoming))).await;
    // The connection is gone, so is every sender: the writer ends once the queue is written.
    if let Err(problem) = writer.await {
        tracing::warn!("the stdout writer failed: {problem}");
    }
    result
}

async fn write_batches(mut queued: futures::channel::mpsc::UnboundedReceiver<String>) {
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
        if stdout.write_all(&batch).await.is_err() || stdout.flush().await.is_err() {
            return;
        }
        batch.clear();
    }
}

fn push_line(batch: &mut Vec<u8>, line: &str) {
    batch.extend_from_slice(line.as_bytes());
    batch.push(b'\n');
}
