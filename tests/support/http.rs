//! REST calls to a server under test.

use serde_json::Value;

/// Sends `method url` (with a JSON body and a bearer token, when given) and returns the status
/// and the JSON body (`null` when empty, a string when not JSON).
pub fn call(method: &str, url: &str, body: Option<&Value>, token: Option<&str>) -> (u16, Value) {
    let client = reqwest::blocking::Client::new();
    let mut request = client.request(method.parse().unwrap(), url);
    if let Some(body) = body {
        request = request.json(body);
    }
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().unwrap();
    let status = response.status().as_u16();
    let text = response.text().unwrap();
    let body = if text.is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&text).unwrap_or(Value::String(text))
    };
    (status, body)
}
