//! What talking to Google Cloud takes, beside the HTTP: finding Application Default
//! Credentials ([`adc`]) and fetching access tokens from them ([`tokens`]).

pub mod adc;
pub mod tokens;

use crate::auth::BearerTokens;
pub use adc::GoogleSource;

/// Google access tokens, kept until shortly before they expire.
pub type GoogleTokens = BearerTokens<GoogleSource>;
