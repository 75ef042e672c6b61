//! Command output kept within a fixed memory bound: the first and the last bytes, and a count of
//! what was in between; turned into what the model reads (no terminal escapes, `\n` line ends, at
//! most N characters as head + tail with an "N characters omitted" marker). Output that will not
//! fit is also written whole, cleaned, to a file the model can read back.

use agentry_plugin::terminal_text::{TerminalText, plain_text};
use agentry_plugin::tool::cut_for_model;
use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// Bytes kept from each end: comfortably more than half the model's share, in any encoding.
const KEEP_BYTES: usize = 128 * 1024;
/// The most a saved output file holds (a runaway command must not fill the disk).
const MAX_SAVED_BYTES: u64 = 64 * 1024 * 1024;

/// A bounded record of a stream of output.
#[derive(Debug, Default)]
pub(crate) struct Captured {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    total_bytes: u64,
    total_lines: u64,
    dropped_chars: u64,
    spill: Option<Spill>,
}

/// Where the whole output goes once it outgrows what the model is shown.
#[derive(Debug)]
struct Spill {
    /// The file's path.
    path: PathBuf,
    /// Output beyond this many bytes opens the file.
    after_bytes: u64,
    /// The open file (`None` before it is needed, or after writing it failed).
    file: Option<OutputFile>,
    /// Whether writing it failed (the model is then not pointed at it).
    failed: bool,
}

impl Captured {
    /// A record that also writes the whole output to `path` once there is more than
    /// `after_bytes` of it (at most [`KEEP_BYTES`], so nothing has been dropped by then).
    pub fn spilling_to(path: PathBuf, after_bytes: u64) -> Self {
        Self {
            spill: Some(Spill {
                path,
                after_bytes: after_bytes.min(KEEP_BYTES as u64),
                file: None,
                failed: false,
            }),
            ..Self::default()
        }
    }

    /// Takes more output.
    pub fn push(&mut self, bytes: &[u8]) {
        self.spill(bytes);
        self.keep(bytes);
    }

    fn spill(&mut self, bytes: &[u8]) {
        let Some(spill) = &mut self.spill else {
            return;
        };
        if spill.failed {
            return;
        }
        if spill.file.is_none() {
            if self.total_bytes + bytes.len() as u64 <= spill.after_bytes {
                return;
            }
            // Everything so far is still in `head`: the threshold is within it.
            match OutputFile::create(&spill.path) {
                Ok(mut file) => {
                    file.write(&self.head);
                    spill.file = Some(file);
                }
                Err(error) => {
                    tracing::warn!("cannot save output to {}: {error}", spill.path.display());
                    spill.failed = true;
                    return;
                }
            }
        }
        if let Some(file) = &mut spill.file
            && !file.write(bytes)
        {
            spill.failed = true;
        }
    }

    fn keep(&mut self, mut bytes: &[u8]) {
        self.total_bytes += bytes.len() as u64;
        self.total_lines += bytes.iter().filter(|&&b| b == b'\n').count() as u64;
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

    /// Lines received so far (newlines counted).
    pub fn total_lines(&self) -> u64 {
        self.total_lines
    }

    /// The file holding the whole output, once it has been written there (flushed).
    pub fn saved_to(&mut self) -> Option<&Path> {
        let spill = self.spill.as_mut()?;
        let file = spill.file.as_mut()?;
        if !file.flush() {
            spill.failed = true;
        }
        (!spill.failed).then_some(spill.path.as_path())
    }

    /// The last `max_chars` characters, cleaned (for live display).
    pub fn tail_text(&self, max_chars: usize) -> String {
        let source: Vec<u8> = if self.tail.is_empty() {
            self.head.clone()
        } else {
            self.tail.iter().copied().collect()
        };
        let text = plain_text(&source);
        let skip = text.chars().count().saturating_sub(max_chars);
        text.chars().skip(skip).collect()
    }

    /// What the model reads: at most `max_chars` characters, head and tail, with a marker
    /// saying how many characters were left out (and where the whole output is, if saved).
    pub fn for_model(&mut self, max_chars: usize) -> String {
        let head = plain_text(&self.head);
        let tail_bytes: Vec<u8> = self.tail.iter().copied().collect();
        let tail = plain_text(&tail_bytes);
        let saved = self.saved_to().map(Path::to_path_buf);
        cut_for_model(
            &head,
            &tail,
            max_chars,
            self.dropped_chars,
            saved.as_deref(),
        )
    }
}

/// A command's whole output, cleaned as the model reads it, written to a file as it arrives (up
/// to [`MAX_SAVED_BYTES`], then a line saying the rest was not saved).
#[derive(Debug)]
pub(crate) struct OutputFile {
    writer: BufWriter<File>,
    cleaner: TerminalText,
    written: u64,
    /// Whether the bound was reached (and said so in the file).
    full: bool,
}

impl OutputFile {
    /// Creates (or empties) the file, readable by the user alone whatever the umask: a command's
    /// output may hold what only they may read.
    pub fn create(path: &Path) -> std::io::Result<Self> {
        let file = agentry_plugin::private::file_options()
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)?;
        agentry_plugin::private::file(path)?;
        Ok(Self {
            writer: BufWriter::new(file),
            cleaner: TerminalText::default(),
            written: 0,
            full: false,
        })
    }

    /// Writes more output; `false` if writing failed.
    pub fn write(&mut self, bytes: &[u8]) -> bool {
        if self.full {
            return true;
        }
        let text = self.cleaner.clean(bytes);
        let room = usize::try_from(MAX_SAVED_BYTES - self.written).unwrap_or(usize::MAX);
        let kept = if text.len() <= room {
            text.as_str()
        } else {
            let mut cut = room;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            &text[..cut]
        };
        self.written += kept.len() as u64;
        let mut written = self.writer.write_all(kept.as_bytes()).is_ok();
        if kept.len() < text.len() {
            self.full = true;
            written &= writeln!(
                self.writer,
                "\n[… the output went on; only its first {} MiB were saved …]",
                MAX_SAVED_BYTES / (1024 * 1024)
            )
            .is_ok();
        }
        written
    }

    /// Makes what was written readable; `false` if that failed.
    pub fn flush(&mut self) -> bool {
        self.writer.flush().is_ok()
    }
}

/// UTF-8 characters in a byte run (continuation bytes do not start one).
fn chars_in(bytes: &[u8]) -> u64 {
    bytes.iter().filter(|&&b| b & 0xC0 != 0x80).count() as u64
}

/// What a background command has produced since it was last read.
#[derive(Default)]
pub(crate) struct ShellOutput {
    /// What it printed that was not read yet.
    pub(crate) unread: Captured,
    /// Its whole output, cleaned (`None` without a temporary folder, or once writing failed).
    pub(crate) log: Option<OutputFile>,
    /// `Some(code)` once it has ended (`Some(None)`: killed by a signal).
    pub(crate) exit: Option<Option<i32>>,
}

impl ShellOutput {
    /// Takes `bytes` it printed: unread, and into its log.
    pub(crate) fn take(&mut self, bytes: &[u8]) {
        self.unread.push(bytes);
        if let Some(log) = &mut self.log
            && !log.write(bytes)
        {
            self.log = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_output_comes_back_whole_and_clean() {
        let mut captured = Captured::default();
        captured.push(b"\x1b[31mred\x1b[0m line\r\nnext\tcolumn\r\n");
        assert_eq!(captured.for_model(100), "red line\nnext\tcolumn\n");
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
    fn output_beyond_the_threshold_is_saved_whole_and_clean_and_the_marker_says_where() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.txt");
        let mut captured = Captured::spilling_to(path.clone(), 1000);
        let lines: String = (0..100_000)
            .map(|i| format!("\x1b[1m{i:06}\x1b[0m\r\n"))
            .collect();
        for chunk in lines.as_bytes().chunks(4093) {
            captured.push(chunk);
        }
        let shown = captured.for_model(1000);
        let saved = std::fs::read_to_string(&path).unwrap();
        let expected: String = (0..100_000).map(|i| format!("{i:06}\n")).collect();
        assert_eq!(saved.len(), expected.len());
        assert!(saved == expected, "the saved output differs");
        assert!(
            shown.contains(&format!("the whole output is in {}", path.display())),
            "{shown}"
        );
    }

    #[test]
    fn a_saved_output_stops_at_its_bound_and_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.txt");
        let mut file = OutputFile::create(&path).unwrap();
        let block = vec![b'y'; 1 << 20];
        for _ in 0..70 {
            assert!(file.write(&block));
        }
        assert!(file.flush());
        let saved = std::fs::read(&path).unwrap();
        let note =
            b"\n[\xe2\x80\xa6 the output went on; only its first 64 MiB were saved \xe2\x80\xa6]\n";
        assert_eq!(saved.len() as u64, MAX_SAVED_BYTES + note.len() as u64);
        assert!(saved.ends_with(note));
    }

    #[test]
    fn output_within_the_threshold_is_not_saved() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.txt");
        let mut captured = Captured::spilling_to(path.clone(), 1000);
        captured.push(&[b'x'; 1000]);
        assert_eq!(captured.for_model(1000).len(), 1000);
        assert!(!path.exists());
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
