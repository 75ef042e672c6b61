//! REST calls to a server under test, and small HTTP services of a test's own.

use serde_json::Value;

/// Sends `method url` (with a JSON body and a bearer token, when given) and returns the status
/// and the JSON body (`null` when empty, a string when not JSON).
pub fn call(method: &str, url: &str, body: Option<&Value>, token: Option<&str>) -> (u16, Value) {
    let authorization = token.map(|token| format!("Bearer {token}"));
    let headers: Vec<(&str, &str)> = authorization
        .iter()
        .map(|value| ("Authorization", value.as_str()))
        .collect();
    let body = body.map(|body| ("application/json", body.to_string()));
    request(method, url, &headers, body)
}

/// Sends `method url` with these headers and a body of a content type, as a hostile page or
/// client would shape it, and returns the status and the body as [`call`] does.
pub fn request(
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    body: Option<(&str, String)>,
) -> (u16, Value) {
    let client = reqwest::blocking::Client::new();
    let mut request = client.request(method.parse().unwrap(), url);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    if let Some((content_type, body)) = body {
        request = request.header("Content-Type", content_type).body(body);
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

/// A GET whose redirect is not followed: its status and its `Set-Cookie` header, if any.
pub fn get_unfollowed(url: &str) -> (u16, Option<String>) {
    let client = reqwest::blocking::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let response = client.get(url).send().unwrap();
    let cookie = response
        .headers()
        .get("set-cookie")
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned);
    (response.status().as_u16(), cookie)
}

/// A GET: its status and headers.
pub fn head_of(url: &str) -> (u16, reqwest::header::HeaderMap) {
    let response = reqwest::blocking::get(url).unwrap();
    (response.status().as_u16(), response.headers().clone())
}

/// Serves `app` on a port of 127.0.0.1 from a runtime thread of its own (for tests that are not
/// async as for those that are), until the process ends.
pub fn serve_on_own_thread(app: axum::Router) -> std::net::SocketAddr {
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            sender.send(listener.local_addr().unwrap()).unwrap();
            axum::serve(listener, app).await.unwrap();
        });
    });
    receiver.recv().unwrap()
}
