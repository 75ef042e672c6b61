//! AWS on the service's side, for mocks: frames of AWS's binary event stream built by hand
//! (checksums right), and a SigV4 check that recomputes a request's signature as AWS does, from
//! the request as received, refusing it when anything differs.

use aws_lc_rs::{digest, hmac};
use axum::http::HeaderMap;

/// The headers block of string headers.
pub fn string_headers(headers: &[(&str, &str)]) -> Vec<u8> {
    let mut block = Vec::new();
    for (name, value) in headers {
        block.push(u8::try_from(name.len()).unwrap());
        block.extend_from_slice(name.as_bytes());
        block.push(7);
        block.extend_from_slice(&u16::try_from(value.len()).unwrap().to_be_bytes());
        block.extend_from_slice(value.as_bytes());
    }
    block
}

/// A frame of these header bytes and this payload.
pub fn frame(headers: &[u8], payload: &[u8]) -> Vec<u8> {
    let total = u32::try_from(16 + headers.len() + payload.len()).unwrap();
    let mut frame = total.to_be_bytes().to_vec();
    frame.extend_from_slice(&u32::try_from(headers.len()).unwrap().to_be_bytes());
    let prelude_crc = crc32fast::hash(&frame);
    frame.extend_from_slice(&prelude_crc.to_be_bytes());
    frame.extend_from_slice(headers);
    frame.extend_from_slice(payload);
    let message_crc = crc32fast::hash(&frame);
    frame.extend_from_slice(&message_crc.to_be_bytes());
    frame
}

/// An event frame as Bedrock sends one: `:event-type`, `:content-type` and `:message-type`.
pub fn event_frame(event_type: &str, payload: &serde_json::Value) -> Vec<u8> {
    let headers = string_headers(&[
        (":event-type", event_type),
        (":content-type", "application/json"),
        (":message-type", "event"),
    ]);
    frame(&headers, payload.to_string().as_bytes())
}

/// The keys a mock AWS service holds, and what it checks a signature against.
#[derive(Debug, Clone)]
pub struct SigV4Check {
    /// The access key id requests must be signed with.
    pub access_key_id: String,
    /// Its secret.
    pub secret_access_key: String,
    /// The session token requests must carry, for temporary credentials.
    pub session_token: Option<String>,
    /// The region signed for.
    pub region: String,
    /// The service's signing name.
    pub service: String,
}

impl SigV4Check {
    /// Whether a request (its method, path and query as received, headers and body) carries a
    /// valid signature of these keys; the reason when not, as AWS words it.
    pub fn verify(
        &self,
        method: &str,
        path_and_query: &str,
        headers: &HeaderMap,
        body: &[u8],
    ) -> Result<(), String> {
        let header = |name: &str| {
            headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        };
        let authorization = header("authorization").ok_or("Missing Authentication Token")?;
        let fields = authorization
            .strip_prefix("AWS4-HMAC-SHA256 ")
            .ok_or("the authorization header is not AWS4-HMAC-SHA256")?;
        let field = |name: &str| {
            fields
                .split(',')
                .map(str::trim)
                .find_map(|part| part.strip_prefix(&format!("{name}=")))
                .map(str::to_owned)
                .ok_or(format!("the authorization header has no {name}"))
        };
        let (credential, signed_names, signature) = (
            field("Credential")?,
            field("SignedHeaders")?,
            field("Signature")?,
        );
        let amz_date = header("x-amz-date").ok_or("the request has no x-amz-date")?;
        let day = amz_date.get(..8).ok_or("x-amz-date is malformed")?;
        let scope = format!("{day}/{}/{}/aws4_request", self.region, self.service);
        if credential != format!("{}/{scope}", self.access_key_id) {
            return Err(format!(
                "The security token included in the request is invalid (credential {credential})"
            ));
        }
        if header("x-amz-security-token") != self.session_token {
            return Err("The security token included in the request is invalid".to_owned());
        }
        let names: Vec<&str> = signed_names.split(';').collect();
        for required in ["host", "x-amz-date"] {
            if !names.contains(&required) {
                return Err(format!("{required} must be signed"));
            }
        }
        let canonical_headers: String = names
            .iter()
            .map(|name| {
                let values: Vec<String> = headers
                    .get_all(*name)
                    .iter()
                    .map(|v| {
                        let text = v.to_str().unwrap_or_default();
                        text.split_whitespace().collect::<Vec<_>>().join(" ")
                    })
                    .collect();
                format!("{name}:{}\n", values.join(","))
            })
            .collect();
        let (path, query) = path_and_query
            .split_once('?')
            .unwrap_or((path_and_query, ""));
        // Every service but S3 signs each path segment encoded once more.
        let canonical_path: String = path
            .split('/')
            .map(|segment| segment.replace('%', "%25"))
            .collect::<Vec<_>>()
            .join("/");
        let mut query: Vec<&str> = query.split('&').filter(|p| !p.is_empty()).collect();
        query.sort_unstable();
        let canonical_request = format!(
            "{method}\n{canonical_path}\n{}\n{canonical_headers}\n{signed_names}\n{}",
            query.join("&"),
            hex(digest::digest(&digest::SHA256, body).as_ref())
        );
        let string_to_sign = format!(
            "AWS4-HMAC-SHA256\n{amz_date}\n{scope}\n{}",
            hex(digest::digest(&digest::SHA256, canonical_request.as_bytes()).as_ref())
        );
        let mut key = format!("AWS4{}", self.secret_access_key).into_bytes();
        for part in [day, &self.region, &self.service, "aws4_request"] {
            key = mac(&key, part.as_bytes());
        }
        let expected = hex(&mac(&key, string_to_sign.as_bytes()));
        if expected == signature {
            Ok(())
        } else {
            Err(format!(
                "The request signature we calculated does not match the signature you provided. \
                 The Canonical String for this request should have been\n'{canonical_request}'"
            ))
        }
    }
}

fn mac(key: &[u8], data: &[u8]) -> Vec<u8> {
    hmac::sign(&hmac::Key::new(hmac::HMAC_SHA256, key), data)
        .as_ref()
        .to_vec()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
