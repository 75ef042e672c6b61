//! Command output kept within a fixed memory bound: the first and the last bytes, and a count of
//! what was in between; turned into what the model reads (no ANSI escapes, `\n` line ends, at
//! most N characters as head + tail with an "N characters omitted" marker).

use std::collections::VecDeque;

/// Bytes kept from each end: comfortably more than half the model's share, in any encoding.
const KEEP_BYTES: usize = 128 * 1024;

/// A bounded record of a stream of output.
#[derive(Debug, Default)]
pub(crate) struct Captured {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    total_bytes: u64,
    dropped_chars: u64,
}

impl Captured {
    /// Takes more output.
    pub fn push(&mut self, mut bytes: &[u8]) {
        self.total_bytes += bytes.len() as u64;
        let room = KEEP_BYTES.saturating_sub(self.head.len());
        if room > 0 && self.tail.is_empty() {
            let taken = room.min(bytes.len());
            self.head.extend_from_slice(&bytes[..taken]);
            bytes = &bytes[taken..];
        }
        if bytes.len() >= KEEP_BYTES {
            self.dropped_chars += chars_in(self.tail.make_contiguous());
            self.dropped_chars += chars_in(&bytes[..bytes.len() - KEEP_BYTES]);
            self.tail.clear();
            bytes = &bytes[bytes.len() - KEEP_BYTES..];
        }
        let overflow = (self.tail.len() + bytes.len()).saturating_sub(KEEP_BYTES);
        if overflow > 0 {
            let dropped: Vec<u8> = self.tail.drain(..overflow).collect();
            self.dropped_chars += chars_in(&dropped);
        }
        self.tail.extend(bytes);
    }

    /// Every byte seen.
    pub fn total_bytes(&self) -> u64 {
        self.total_bytes
    }

    /// The last `max_chars` characters, cleaned (for live display).
    pub fn tail_text(&self, max_chars: usize) -> String {
        let source: Vec<u8> = if self.tail.is_empty() {
            self.head.clone()
        } else {
            self.tail.iter().copied().collect()
        };
        let text = clean(&source);
        let skip = text.chars().count().saturating_sub(max_chars);
        text.chars().skip(skip).collect()
    }

    /// What the model reads: at most `max_chars` characters, head and tail, with a marker
    /// saying how many characters were left out.
    pub fn for_model(&self, max_chars: usize) -> String {
        let head = clean(&self.head);
        let tail_bytes: Vec<u8> = self.tail.iter().copied().collect();
        let tail = clean(&tail_bytes);
        let half = max_chars / 2;
        let head_chars = head.chars().count();
        let tail_chars = tail.chars().count();
        if head_chars + tail_chars <= max_chars {
            return if self.dropped_chars == 0 {
                head + &tail
            } else {
                format!(
                    "{head}\n[… {} characters omitted …]\n{tail}",
                    self.dropped_chars
                )
            };
        }
        let whole = head + &tail;
        let whole_chars = head_chars + tail_chars;
        let start: String = whole.chars().take(half).collect();
        let end: String = whole.chars().skip(whole_chars - half).collect();
        let omitted = (whole_chars - 2 * half) as u64 + self.dropped_chars;
        format!("{start}\n[… {omitted} characters omitted …]\n{end}")
    }
}

/// UTF-8 characters in a byte run (continuation bytes do not start one).
fn chars_in(bytes: &[u8]) -> u64 {
    bytes.iter().filter(|&&b| b & 0xC0 != 0x80).count() as u64
}

/// Terminal output as plain text: escapes removed, `\r\n` as `\n`.
pub(crate) fn clean(bytes: &[u8]) -> String {
    let stripped = strip_ansi_escapes::strip(bytes);
    String::from_utf8_lossy(&stripped).replace("\r\n", "\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_output_comes_back_whole_and_clean() {
        let mut captured = Captured::default();
        captured.push(b"\x1b[31mred\x1b[0m line\r\nnext\r\n");
        assert_eq!(captured.for_model(100), "red line\nnext\n");
    }

    #[test]
    fn long_output_keeps_head_and_tail_with_an_exact_marker() {
        let mut captured = Captured::default();
        let text: String = (0..10_000).map(|i| format!("{i:05}\n")).collect();
        for chunk in text.as_bytes().chunks(777) {
            captured.push(chunk);
        }
        let shown = captured.for_model(1000);
        assert!(shown.starts_with("00000\n00001\n"));
        assert!(shown.ends_with("09998\n09999\n"));
        assert!(
            shown.contains(&format!("[… {} characters omitted …]", 60_000 - 1000)),
            "{shown:.80}"
        );
    }

    #[test]
    fn memory_stays_bounded_however_much_arrives() {
        let mut captured = Captured::default();
        let block = vec![b'x'; 1 << 20];
        for _ in 0..50 {
            captured.push(&block);
        }
        assert!(captured.head.len() + captured.tail.len() <= 2 * KEEP_BYTES);
        assert_eq!(captured.total_bytes(), 50 << 20);
        let shown = captured.for_model(30_000);
        assert!(shown.contains(&format!(
            "[… {} characters omitted …]",
            (50u64 << 20) - 30_000
        )));
    }
}
