//! An error as one line of text, with its causes.

/// `error` and each of its causes, joined by `: ` (what `{:#}` gives for `anyhow` errors, for
/// any error: a network error says why, not only that it failed).
pub fn with_causes(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    #[test]
    fn each_cause_follows_the_error() {
        let inner = std::io::Error::other("connection refused");
        let outer = std::io::Error::other(inner);
        assert_eq!(super::with_causes(&outer), "connection refused");
        #[derive(Debug, thiserror::Error)]
        #[error("cannot reach the model")]
        struct Outer(#[source] std::io::Error);
        let error = Outer(std::io::Error::other("connection refused"));
        assert_eq!(
            super::with_causes(&error),
            "cannot reach the model: connection refused"
        );
    }
}
