//! AWS's binary event stream (`application/vnd.amazon.eventstream`), the framing of Amazon
//! Bedrock's streamed responses: each frame is a prelude (total length, headers length and the
//! prelude's CRC-32), typed headers, a payload and the whole frame's CRC-32. [`FrameReader`]
//! takes the body's bytes as the network hands them over (a frame split across reads, or several
//! in one) and gives back whole frames, each checked by both of its checksums; as a
//! [`Framing`], it cuts a response body into [`Frame`]s.

use super::framing::{Body, Events, Framing};
use agentry::model::ModelError;
use bytes::{Buf, Bytes, BytesMut};
use futures::StreamExt;

/// The prelude: total length, headers length, prelude CRC (4 bytes each).
const PRELUDE: usize = 12;
/// The prelude and the trailing message CRC.
const OVERHEAD: usize = PRELUDE + 4;
/// The longest frame the format allows (16 MiB), so a corrupt length cannot make the reader
/// wait for (and buffer) gigabytes.
const MAX_FRAME: usize = 16 * 1024 * 1024;

/// A header's value, one of the format's ten types.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeaderValue {
    /// A boolean (types 0 and 1: the value is in the type).
    Bool(bool),
    /// A signed byte.
    Byte(i8),
    /// A 16-bit integer.
    Short(i16),
    /// A 32-bit integer.
    Integer(i32),
    /// A 64-bit integer.
    Long(i64),
    /// Bytes.
    Bytes(Vec<u8>),
    /// A UTF-8 string.
    String(String),
    /// Milliseconds since the Unix epoch.
    Timestamp(i64),
    /// A UUID's 16 bytes.
    Uuid([u8; 16]),
}

/// One frame: its headers in order, and its payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// The headers, as sent.
    pub headers: Vec<(String, HeaderValue)>,
    /// The payload (JSON, for Bedrock).
    pub payload: Bytes,
}

impl Frame {
    /// The string value of header `name` (`:event-type`, `:message-type`, …), if it has one.
    pub fn text_header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find_map(|(key, value)| match value {
            HeaderValue::String(text) if key == name => Some(text.as_str()),
            _ => None,
        })
    }
}

/// Reads frames out of a body as its bytes arrive.
#[derive(Debug, Default)]
pub struct FrameReader {
    buffer: BytesMut,
}

impl FrameReader {
    /// A reader that has read nothing yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes the next bytes of the body.
    pub fn push(&mut self, bytes: &[u8]) {
        self.buffer.extend_from_slice(bytes);
    }

    /// The next whole frame, `None` until its last byte has arrived, or an error when the bytes
    /// are not a valid frame (a checksum that does not match, lengths that do not add up, a
    /// header of an unknown type): the stream cannot be read past it.
    pub fn next_frame(&mut self) -> Result<Option<Frame>, ModelError> {
        if self.buffer.len() < PRELUDE {
            return Ok(None);
        }
        let total = be_u32(&self.buffer[0..4]) as usize;
        let headers_len = be_u32(&self.buffer[4..8]) as usize;
        let prelude_crc = be_u32(&self.buffer[8..12]);
        if crc32fast::hash(&self.buffer[..8]) != prelude_crc {
            return Err(broken("its prelude's checksum does not match"));
        }
        if !(OVERHEAD..=MAX_FRAME).contains(&total) || headers_len > total - OVERHEAD {
            return Err(broken(&format!(
                "its lengths do not add up (frame {total} bytes, headers {headers_len})"
            )));
        }
        if self.buffer.len() < total {
            return Ok(None);
        }
        let frame = self.buffer.split_to(total).freeze();
        let message_crc = be_u32(&frame[total - 4..]);
        if crc32fast::hash(&frame[..total - 4]) != message_crc {
            return Err(broken("its checksum does not match"));
        }
        let headers = read_headers(frame.slice(PRELUDE..PRELUDE + headers_len))?;
        let payload = frame.slice(PRELUDE + headers_len..total - 4);
        Ok(Some(Frame { headers, payload }))
    }

    /// The body ended: an error when it ended inside a frame.
    pub fn finish(&self) -> Result<(), ModelError> {
        if self.buffer.is_empty() {
            Ok(())
        } else {
            Err(ModelError::Protocol(format!(
                "the event stream ended inside a frame ({} bytes left over)",
                self.buffer.len()
            )))
        }
    }
}

/// Where a body's framing stands: the body, the bytes read of its next frame, and whether it
/// ended (or broke).
struct Reading {
    body: Body,
    reader: FrameReader,
    ended: bool,
}

impl Framing for Frame {
    fn events(body: Body) -> Events<Self> {
        let reading = Reading {
            body,
            reader: FrameReader::new(),
            ended: false,
        };
        Box::pin(futures::stream::unfold(reading, |mut reading| async move {
            loop {
                match reading.reader.next_frame() {
                    Ok(Some(frame)) => return Some((Ok(frame), reading)),
                    Ok(None) if reading.ended => return None,
                    Ok(None) => {}
                    Err(error) => return Some((Err(error), reading.broken())),
                }
                match reading.body.next().await {
                    Some(Ok(bytes)) => reading.reader.push(&bytes),
                    Some(Err(error)) => return Some((Err(error), reading.broken())),
                    None => match reading.reader.finish() {
                        Ok(()) => return None,
                        Err(error) => return Some((Err(error), reading.broken())),
                    },
                }
            }
        }))
    }
}

impl Reading {
    /// Nothing more is read after an error.
    fn broken(mut self) -> Self {
        self.reader = FrameReader::new();
        self.ended = true;
        self
    }
}

fn be_u32(bytes: &[u8]) -> u32 {
    u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]])
}

fn broken(why: &str) -> ModelError {
    ModelError::Protocol(format!(
        "the event stream sent a frame that cannot be read: {why}"
    ))
}

/// Reads the headers block of a frame.
fn read_headers(mut block: Bytes) -> Result<Vec<(String, HeaderValue)>, ModelError> {
    let mut headers = Vec::new();
    while block.has_remaining() {
        let name_len = usize::from(take(&mut block, 1)?[0]);
        let name = utf8(take(&mut block, name_len)?, "header name")?;
        let kind = take(&mut block, 1)?[0];
        let value = match kind {
            0 => HeaderValue::Bool(true),
            1 => HeaderValue::Bool(false),
            2 => HeaderValue::Byte(i8::from_be_bytes(array(&mut block)?)),
            3 => HeaderValue::Short(i16::from_be_bytes(array(&mut block)?)),
            4 => HeaderValue::Integer(i32::from_be_bytes(array(&mut block)?)),
            5 => HeaderValue::Long(i64::from_be_bytes(array(&mut block)?)),
            6 => HeaderValue::Bytes(sized(&mut block)?.to_vec()),
            7 => HeaderValue::String(utf8(sized(&mut block)?, "header value")?),
            8 => HeaderValue::Timestamp(i64::from_be_bytes(array(&mut block)?)),
            9 => HeaderValue::Uuid(array(&mut block)?),
            other => {
                return Err(broken(&format!(
                    "header `{name}` has a value of unknown type {other}"
                )));
            }
        };
        headers.push((name, value));
    }
    Ok(headers)
}

/// The next `len` bytes of a headers block.
fn take(block: &mut Bytes, len: usize) -> Result<Bytes, ModelError> {
    if block.remaining() < len {
        return Err(broken("a header runs past the end of the headers"));
    }
    Ok(block.split_to(len))
}

/// The next `N` bytes of a headers block, as an array.
fn array<const N: usize>(block: &mut Bytes) -> Result<[u8; N], ModelError> {
    let bytes = take(block, N)?;
    let mut array = [0; N];
    array.copy_from_slice(&bytes);
    Ok(array)
}

/// A value preceded by its 16-bit length.
fn sized(block: &mut Bytes) -> Result<Bytes, ModelError> {
    let len = u16::from_be_bytes(array(block)?);
    take(block, usize::from(len))
}

fn utf8(bytes: Bytes, what: &str) -> Result<String, ModelError> {
    String::from_utf8(bytes.to_vec()).map_err(|_| broken(&format!("a {what} is not UTF-8")))
}
