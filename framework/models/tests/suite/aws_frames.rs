//! Frames of AWS's event stream built by hand, checksums right, for the faults and service
//! errors no capture holds.

/// The headers block of string headers.
pub fn string_headers(headers: &[(&str, &str)]) -> Vec<u8> {
    let mut block = Vec::new();
    for (name, value) in headers {
        block.push(u8::try_from(name.len()).unwrap());
        block.extend_from_slice(name.as_bytes());
        block.push(7);
        block.extend_from_slice(&u16::try_from(value.len()).unwrap().to_be_bytes());
        block.extend_from_slice(value.as_bytes());
    }
    block
}

/// A frame of these header bytes and this payload.
pub fn frame(headers: &[u8], payload: &[u8]) -> Vec<u8> {
    let total = u32::try_from(16 + headers.len() + payload.len()).unwrap();
    let mut frame = total.to_be_bytes().to_vec();
    frame.extend_from_slice(&u32::try_from(headers.len()).unwrap().to_be_bytes());
    let prelude_crc = crc32fast::hash(&frame);
    frame.extend_from_slice(&prelude_crc.to_be_bytes());
    frame.extend_from_slice(headers);
    frame.extend_from_slice(payload);
    let message_crc = crc32fast::hash(&frame);
    frame.extend_from_slice(&message_crc.to_be_bytes());
    frame
}
