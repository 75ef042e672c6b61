mod aws_credentials;
mod azure;
mod bedrock;
mod bedrock_client;
mod clients;
mod entra;
mod eventstream;
mod fixtures;
mod gemini;
mod gemini_client;
mod google_credentials;
mod odd_chunks;
mod robustness;
mod sigv4;
mod vertex;
mod vertex_client;

/// The model events `decoder` makes of an SSE `body` handed over in pieces of `piece` bytes.
fn decode_in_pieces<D>(body: &[u8], piece: usize, decoder: D) -> agentry::model::ModelStream
where
    D: agentry_models::wire::StreamDecoder + 'static,
{
    let pieces: Vec<Result<bytes::Bytes, std::io::Error>> = body
        .chunks(piece)
        .map(|c| Ok(bytes::Bytes::copy_from_slice(c)))
        .collect();
    agentry_models::wire::sse::decode(
        futures::stream::iter(pieces),
        decoder,
        std::time::Duration::from_secs(5),
    )
}
