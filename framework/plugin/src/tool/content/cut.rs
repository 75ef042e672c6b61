//! Long text as the model reads it: its head and tail, with a marker saying how much was left
//! out and where the whole is kept, so a tool's result never floods the model's window.

use std::path::Path;

/// `head` and `tail` (what was kept of a text's start and end; `dropped` characters between
/// them were not kept at all) as the model reads them: whole when they fit in `max_chars` and
/// nothing was dropped, else at most `max_chars` of them, half from each end, with a marker
/// saying how many characters were left out and, when `saved` names the file holding the whole,
/// where to read it.
pub fn cut_for_model(
    head: &str,
    tail: &str,
    max_chars: usize,
    dropped: u64,
    saved: Option<&Path>,
) -> String {
    let half = max_chars / 2;
    let head_chars = head.chars().count();
    let tail_chars = tail.chars().count();
    let (start, omitted, end) = if head_chars + tail_chars <= max_chars {
        if dropped == 0 {
            return format!("{head}{tail}");
        }
        (head.to_owned(), dropped, tail.to_owned())
    } else {
        let whole = format!("{head}{tail}");
        let whole_chars = head_chars + tail_chars;
        let start: String = whole.chars().take(half).collect();
        let end: String = whole.chars().skip(whole_chars - half).collect();
        let omitted = (whole_chars - 2 * half) as u64 + dropped;
        (start, omitted, end)
    };
    let marker = match saved {
        Some(path) => format!(
            "[… {omitted} characters omitted; the whole output is in {} (Read it in parts with \
             offset and limit, or Grep it) …]",
            path.display()
        ),
        None => format!("[… {omitted} characters omitted …]"),
    };
    format!("{start}\n{marker}\n{end}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_text_keeps_its_ends_and_says_what_is_left_out_and_where() {
        assert_eq!(cut_for_model("short", "", 100, 0, None), "short");
        let text = "a".repeat(60) + &"b".repeat(60);
        let cut = cut_for_model(&text, "", 20, 0, Some(Path::new("/tmp/whole.txt")));
        assert!(cut.starts_with(&"a".repeat(10)));
        assert!(cut.ends_with(&"b".repeat(10)));
        assert!(cut.contains("[… 100 characters omitted; the whole output is in /tmp/whole.txt"));
        assert_eq!(
            cut_for_model("head", "tail", 100, 7, None),
            "head\n[… 7 characters omitted …]\ntail"
        );
    }
}
