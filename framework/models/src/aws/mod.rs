//! What talking to AWS takes, beside the HTTP: signing requests with SigV4 ([`sigv4`]).

pub mod sigv4;
