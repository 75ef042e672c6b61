//! What agentry's fuzz targets share: a runtime, and running a model stream decoder over bytes
//! cut into chunks.

use agentry_models::wire::StreamDecoder;
use agentry_models::wire::sse::decode;
use bytes::Bytes;
use futures::StreamExt;
use std::time::Duration;

thread_local! {
    /// One runtime per fuzzing thread (making one per input would dwarf the work).
    static RUNTIME: tokio::runtime::Runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a current-thread runtime");
}

/// Decodes `data` as a streamed response body: its first byte sets the chunk size (so chunk
/// boundaries fall everywhere), the rest is the body. Every event and error is read.
pub fn decode_body(data: &[u8], decoder: impl StreamDecoder + 'static) {
    let Some((size, body)) = data.split_first() else {
        return;
    };
    let chunks: Vec<Result<Bytes, std::io::Error>> = body
        .chunks(usize::from(*size).max(1))
        .map(|chunk| Ok(Bytes::copy_from_slice(chunk)))
        .collect();
    RUNTIME.with(|runtime| {
        runtime.block_on(async {
            let mut events = decode(
                futures::stream::iter(chunks),
                decoder,
                Duration::from_secs(60),
            );
            while events.next().await.is_some() {}
        });
    });
}

/// Runs `work` to its end on the fuzzing thread's runtime.
pub fn block_on<F: std::future::Future>(work: F) -> F::Output {
    RUNTIME.with(|runtime| runtime.block_on(work))
}
