//! What talking to AWS takes, beside the HTTP: signing requests with SigV4 ([`sigv4`]), finding
//! credentials where AWS's SDKs find them ([`chain`], reading the shared files with
//! [`profile`]) and fetching and keeping them ([`credentials`]).

pub mod chain;
pub mod credentials;
pub mod profile;
pub mod sigv4;
