//! AWS Signature Version 4: the `Authorization` header (and the headers it signs) of a request
//! to an AWS service, as AWS's signing guide lays it down: a canonical request, a string to sign
//! under the day's credential scope, and an HMAC-SHA256 chain from the secret key.

use aws_lc_rs::{digest, hmac};
use chrono::{DateTime, Utc};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};

/// The algorithm's name, as the header and the string to sign say it.
const ALGORITHM: &str = "AWS4-HMAC-SHA256";

/// What SigV4 leaves unencoded: letters, digits and `-._~`.
pub(crate) const UNRESERVED: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// The keys a request is signed with (a session token comes with temporary credentials).
#[derive(Clone, PartialEq, Eq)]
pub struct Credentials {
    /// The access key id.
    pub access_key_id: String,
    /// The secret access key.
    pub secret_access_key: String,
    /// The session token, for temporary credentials.
    pub session_token: Option<String>,
}

/// Never shows the secret or the token.
impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("access_key_id", &self.access_key_id)
            .finish_non_exhaustive()
    }
}

/// Where and how a request is signed.
#[derive(Debug, Clone)]
pub struct Scope<'a> {
    /// The region (`us-east-1`).
    pub region: &'a str,
    /// The service's signing name (`bedrock`).
    pub service: &'a str,
    /// When the request is signed.
    pub time: DateTime<Utc>,
    /// Whether each path segment is encoded again (every service but S3 wants it: its path as
    /// sent is already encoded, and the canonical request encodes it a second time).
    pub double_encode_path: bool,
    /// Whether the body's hash is sent (and signed) as `x-amz-content-sha256`.
    pub content_sha256_header: bool,
}

/// A request to sign: its method, URL, the headers it will carry and its body.
#[derive(Debug, Clone)]
pub struct Unsigned<'a> {
    /// `GET`, `POST`, …
    pub method: &'a str,
    /// The URL as it will be sent (its path and query already percent-encoded).
    pub url: &'a url::Url,
    /// The headers it carries besides those signing adds (`host` is added from the URL).
    pub headers: &'a [(String, String)],
    /// The body.
    pub body: &'a [u8],
}

/// What signing gives: the headers to add to the request, and the steps, for checking.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signed {
    /// The headers to add (`x-amz-date`, `x-amz-security-token`, `x-amz-content-sha256`,
    /// `authorization`), in that order, those that apply.
    pub headers: Vec<(String, String)>,
    /// The canonical request that was signed.
    pub canonical_request: String,
    /// The string to sign.
    pub string_to_sign: String,
    /// The signature, in hex.
    pub signature: String,
}

/// Signs `request` with `credentials` in `scope`.
pub fn sign(request: &Unsigned<'_>, credentials: &Credentials, scope: &Scope<'_>) -> Signed {
    let amz_date = scope.time.format("%Y%m%dT%H%M%SZ").to_string();
    let day = scope.time.format("%Y%m%d").to_string();
    let payload_hash = hex::encode(digest::digest(&digest::SHA256, request.body));

    let mut added = vec![("x-amz-date".to_owned(), amz_date.clone())];
    if let Some(token) = &credentials.session_token {
        added.push(("x-amz-security-token".to_owned(), token.clone()));
    }
    if scope.content_sha256_header {
        added.push(("x-amz-content-sha256".to_owned(), payload_hash.clone()));
    }
    let (canonical_headers, signed_headers) = canonical_headers(request, &added);
    let canonical_request = [
        request.method.to_owned(),
        canonical_path(request.url.path(), scope.double_encode_path),
        canonical_query(request.url.query().unwrap_or_default()),
        canonical_headers,
        signed_headers.clone(),
        payload_hash,
    ]
    .join("\n");

    let credential_scope = format!("{day}/{}/{}/aws4_request", scope.region, scope.service);
    let string_to_sign = format!(
        "{ALGORITHM}\n{amz_date}\n{credential_scope}\n{}",
        hex::encode(digest::digest(
            &digest::SHA256,
            canonical_request.as_bytes()
        ))
    );
    let key = [day.as_str(), scope.region, scope.service, "aws4_request"]
        .iter()
        .fold(
            format!("AWS4{}", credentials.secret_access_key).into_bytes(),
            |key, part| mac(&key, part.as_bytes()),
        );
    let signature = hex::encode(mac(&key, string_to_sign.as_bytes()));
    added.push((
        "authorization".to_owned(),
        format!(
            "{ALGORITHM} Credential={}/{credential_scope}, SignedHeaders={signed_headers}, Signature={signature}",
            credentials.access_key_id
        ),
    ));
    Signed {
        headers: added,
        canonical_request,
        string_to_sign,
        signature,
    }
}

/// HMAC-SHA256 of `data` under `key`.
fn mac(key: &[u8], data: &[u8]) -> Vec<u8> {
    hmac::sign(&hmac::Key::new(hmac::HMAC_SHA256, key), data)
        .as_ref()
        .to_vec()
}

/// The path as the canonical request has it: `/` when empty, each segment encoded again when
/// the service wants it.
fn canonical_path(path: &str, double_encode: bool) -> String {
    if path.is_empty() {
        return "/".to_owned();
    }
    if !double_encode {
        return path.to_owned();
    }
    path.split('/')
        .map(|segment| utf8_percent_encode(segment, UNRESERVED).to_string())
        .collect::<Vec<_>>()
        .join("/")
}

/// The query's parameters, each name and value encoded as SigV4 encodes them, sorted.
fn canonical_query(query: &str) -> String {
    let encode = |part: &str| {
        let decoded = percent_decode_str(part).decode_utf8_lossy();
        utf8_percent_encode(&decoded, UNRESERVED).to_string()
    };
    let mut pairs: Vec<(String, String)> = query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            (encode(name), encode(value))
        })
        .collect();
    pairs.sort();
    pairs
        .iter()
        .map(|(name, value)| format!("{name}={value}"))
        .collect::<Vec<_>>()
        .join("&")
}

/// The canonical headers block (`name:value` lines, names lowercase and sorted, values trimmed
/// with inner runs of spaces made one, a repeated header's values joined by commas) and the
/// signed headers' list.
fn canonical_headers(request: &Unsigned<'_>, added: &[(String, String)]) -> (String, String) {
    let host = match request.url.port() {
        Some(port) => format!("{}:{port}", request.url.host_str().unwrap_or_default()),
        None => request.url.host_str().unwrap_or_default().to_owned(),
    };
    let host = ("host".to_owned(), host);
    let mut headers: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for (name, value) in std::iter::once(&host).chain(request.headers).chain(added) {
        let value = value.split_whitespace().collect::<Vec<_>>().join(" ");
        headers
            .entry(name.to_ascii_lowercase())
            .or_default()
            .push(value);
    }
    let block: String = headers
        .iter()
        .map(|(name, values)| format!("{name}:{}\n", values.join(",")))
        .collect();
    let names = headers.keys().cloned().collect::<Vec<_>>().join(";");
    (block, names)
}
