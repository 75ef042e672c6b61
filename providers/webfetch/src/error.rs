//! Why a fetch failed.

/// Why a fetch failed; the message is what the model reads.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// The URL does not parse or names no host.
    #[error("invalid URL: {0}")]
    InvalidUrl(String),
    /// Not `http` or `https`.
    #[error("WebFetch fetches http and https URLs only, not {0}:")]
    Scheme(String),
    /// The address is not one WebFetch may connect to.
    #[error("refused: {0}")]
    Refused(String),
    /// The domain is blocked, or not allowed.
    #[error("refused: {0}")]
    Domain(String),
    /// More redirects than allowed.
    #[error("stopped after {0} redirects")]
    TooManyRedirects(usize),
    /// The server answered with an error status.
    #[error("{url} answered {status}: {body}")]
    Status {
        /// The URL that answered.
        url: String,
        /// The status.
        status: u16,
        /// The start of the answer's body.
        body: String,
    },
    /// The fetch took longer than allowed.
    #[error("{0} did not answer within {1} s")]
    Timeout(String, u64),
    /// Connecting or reading failed.
    #[error("{0}")]
    Transport(String),
}
