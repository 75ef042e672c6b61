//! SigV4 against AWS's signing test suite (`tests/fixtures/cloud-streams/sigv4/v4/`): for each
//! request, the canonical request, the string to sign, the signature and the `Authorization`
//! header are the suite's, step by step; and Bedrock's paths are encoded twice.

use agentry_models::aws::sigv4::{Credentials, Scope, Unsigned, sign};
use chrono::{DateTime, Utc};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn suite() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cloud-streams/sigv4/v4")
}

fn read(dir: &Path, file: &str) -> String {
    std::fs::read_to_string(dir.join(file))
        .unwrap_or_else(|e| panic!("{}/{file}: {e}", dir.display()))
}

/// A request of the suite (`request.txt`: the request line, `Name:value` headers, a blank line,
/// the body) as the method, the URL, the headers but `Host` (signing takes it from the URL) and
/// the body.
fn parse_request(text: &str) -> (String, url::Url, Vec<(String, String)>, Vec<u8>) {
    let (head, body) = text.split_once("\n\n").unwrap_or((text, ""));
    let mut lines = head.lines();
    let request_line = lines.next().unwrap();
    let (method, rest) = request_line.split_once(' ').unwrap();
    let target = rest.strip_suffix(" HTTP/1.1").unwrap();
    let mut host = String::new();
    let mut headers = Vec::new();
    for line in lines {
        let (name, value) = line.split_once(':').unwrap();
        if name.eq_ignore_ascii_case("host") {
            host = value.trim().to_owned();
        } else {
            headers.push((name.to_owned(), value.to_owned()));
        }
    }
    let url = url::Url::parse(&format!("https://{host}{target}")).unwrap();
    (method.to_owned(), url, headers, body.as_bytes().to_vec())
}

#[test]
fn every_request_of_the_aws_suite_is_signed_as_the_suite_says() {
    let mut signed = 0;
    for entry in std::fs::read_dir(suite()).unwrap() {
        let dir = entry.unwrap().path();
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let context: Value = serde_json::from_str(&read(&dir, "context.json")).unwrap();
        let credentials = Credentials {
            access_key_id: context["credentials"]["access_key_id"]
                .as_str()
                .unwrap()
                .into(),
            secret_access_key: context["credentials"]["secret_access_key"]
                .as_str()
                .unwrap()
                .into(),
            session_token: context["credentials"]["token"].as_str().map(Into::into),
        };
        let time: DateTime<Utc> = context["timestamp"].as_str().unwrap().parse().unwrap();
        let scope = Scope {
            region: context["region"].as_str().unwrap(),
            service: context["service"].as_str().unwrap(),
            time,
            double_encode_path: false,
            content_sha256_header: context["sign_body"] == true,
        };
        let (method, url, headers, body) = parse_request(&read(&dir, "request.txt"));
        let result = sign(
            &Unsigned {
                method: &method,
                url: &url,
                headers: &headers,
                body: &body,
            },
            &credentials,
            &scope,
        );
        assert_eq!(
            result.canonical_request,
            read(&dir, "header-canonical-request.txt"),
            "{name}: canonical request"
        );
        assert_eq!(
            result.string_to_sign,
            read(&dir, "header-string-to-sign.txt"),
            "{name}: string to sign"
        );
        assert_eq!(
            result.signature,
            read(&dir, "header-signature.txt").trim(),
            "{name}: signature"
        );
        let expected_authorization = read(&dir, "header-signed-request.txt")
            .lines()
            .find_map(|line| line.strip_prefix("Authorization:").map(str::to_owned))
            .unwrap();
        let authorization = result
            .headers
            .iter()
            .find(|(header, _)| header == "authorization")
            .map(|(_, value)| value.clone());
        assert_eq!(
            authorization,
            Some(expected_authorization),
            "{name}: header"
        );
        signed += 1;
    }
    assert_eq!(signed, 10, "every request of the suite was signed");
}

#[test]
fn bedrock_paths_are_encoded_twice_and_the_session_token_is_signed() {
    // A model id with a `:` is sent as `%3A`, and signed as `%253A`.
    let url = url::Url::parse(
        "https://bedrock-runtime.us-east-1.amazonaws.com/model/us.amazon.nova-micro-v1%3A0/converse-stream",
    )
    .unwrap();
    let credentials = Credentials {
        access_key_id: "AKIDEXAMPLE".into(),
        secret_access_key: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY".into(),
        session_token: Some("session-token".into()),
    };
    let scope = Scope {
        region: "us-east-1",
        service: "bedrock",
        time: "2026-11-28T07:00:00Z".parse().unwrap(),
        double_encode_path: true,
        content_sha256_header: false,
    };
    let headers = [("Content-Type".to_owned(), "application/json".to_owned())];
    let signed = sign(
        &Unsigned {
            method: "POST",
            url: &url,
            headers: &headers,
            body: b"{}",
        },
        &credentials,
        &scope,
    );
    let lines: Vec<&str> = signed.canonical_request.lines().collect();
    assert_eq!(
        lines[1],
        "/model/us.amazon.nova-micro-v1%253A0/converse-stream"
    );
    assert!(
        lines.contains(&"x-amz-security-token:session-token"),
        "{lines:?}"
    );
    assert!(
        signed
            .string_to_sign
            .contains("20261128/us-east-1/bedrock/aws4_request"),
        "{}",
        signed.string_to_sign
    );
    let names: Vec<&str> = signed
        .headers
        .iter()
        .map(|(name, _)| name.as_str())
        .collect();
    assert_eq!(
        names,
        ["x-amz-date", "x-amz-security-token", "authorization"]
    );
    assert!(
        signed.headers[2]
            .1
            .contains("SignedHeaders=content-type;host;x-amz-date;x-amz-security-token,"),
        "{}",
        signed.headers[2].1
    );
    // The secret never shows, not even in a debug print of the credentials.
    assert!(!format!("{credentials:?}").contains("EXAMPLEKEY"));
    assert!(!format!("{signed:?}").contains("EXAMPLEKEY"));
}
