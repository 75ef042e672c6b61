//! Cutting text for messages: a payload in an error, a line in a report.

/// At most `chars` characters of `text`, ending with `…` when it was longer.
pub fn clip(text: &str, chars: usize) -> String {
    let mut clipped: String = text.chars().take(chars).collect();
    if clipped.len() < text.len() {
        clipped.push('…');
    }
    clipped
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_text_is_cut_by_characters_and_marked() {
        assert_eq!(clip("héllo", 2), "hé…");
        assert_eq!(clip("héllo", 5), "héllo");
        assert_eq!(clip("", 3), "");
    }
}
