//! `agentry serve` on a laptop, tried as a hostile page and another local account would: a name
//! rebound to 127.0.0.1, another site's page, a cross-site `text/plain` body, no token.

use super::Server;
use agentry_tests::mock_model::{MockModelServer, MockReply, MockTurn};
use agentry_tests::peers::{run_chat_client, run_page_client};
use agentry_tests::{Sandbox, http};
use serde_json::{Value, json};
use std::time::Duration;

fn sandbox() -> Sandbox {
    crate::sandbox()
}

/// The port of a server's URL.
fn port(server: &Server) -> String {
    server.url.rsplit(':').next().unwrap().to_owned()
}

/// A WebSocket upgrade (or Socket.IO handshake) with these headers: `open` or the status it
/// was refused with.
fn socket(sb: &Sandbox, transport: &str, url: String, headers: Value) -> String {
    let out = run_chat_client(
        &json!({"transport": transport, "url": url, "headers": headers}),
        sb.project().parent().unwrap(),
        Duration::from_secs(30),
    );
    // socket.io-client reports a refused handshake without its status.
    match out.of_kind("refused").first() {
        Some(refused) if refused["status"].is_null() => "refused".to_owned(),
        Some(refused) => refused["status"].to_string(),
        None if !out.of_kind("open").is_empty() => "open".to_owned(),
        None => format!("{:?}", out.records),
    }
}

#[test]
fn a_rebound_name_reaches_nothing_not_even_with_the_token() {
    let sb = sandbox();
    let model = MockModelServer::start_blocking([]);
    let server = Server::start(&sb, &model, &[]);
    let token = format!("Bearer {}", server.token.as_deref().unwrap());
    let rebound = format!("rebind.example:{}", port(&server));
    let origin = format!("http://{rebound}");
    let as_rebound = [
        ("Host", rebound.as_str()),
        ("Origin", origin.as_str()),
        ("Authorization", token.as_str()),
    ];
    for (method, path) in [
        ("GET", "/"),
        ("GET", "/app.js"),
        ("GET", "/api/sessions"),
        ("GET", "/socket.io/?EIO=4&transport=polling"),
    ] {
        let (status, _) =
            http::request(method, &format!("{}{path}", server.url), &as_rebound, None);
        assert_eq!(status, 403, "{method} {path}");
    }
    let (status, body) = http::request(
        "POST",
        &format!("{}/api/sessions", server.url),
        &as_rebound,
        Some(("application/json", "{}".to_owned())),
    );
    assert_eq!(status, 403);
    assert!(
        body["message"].as_str().unwrap().contains("rebind.example"),
        "{body}"
    );
    let headers = json!({"Host": rebound, "Origin": origin, "Authorization": token});
    assert_eq!(socket(&sb, "ws", server.ws(), headers.clone()), "403");
    assert_eq!(
        socket(&sb, "socket.io", server.url.clone(), headers),
        "refused"
    );
    // The same requests under the server's own name go through.
    assert_eq!(
        socket(&sb, "ws", server.ws(), json!({"Authorization": token})),
        "open"
    );
}

#[test]
fn another_local_account_without_the_token_gets_nothing() {
    let sb = sandbox();
    let model = MockModelServer::start_blocking([]);
    let server = Server::start(&sb, &model, &[]);
    for (method, path) in [("GET", "/api/sessions"), ("GET", "/api/openapi.json")] {
        let (status, _) = http::call(method, &format!("{}{path}", server.url), None, None);
        assert_eq!(status, 401, "{method} {path}");
    }
    let (status, _) = http::call(
        "POST",
        &format!("{}/api/sessions", server.url),
        Some(&json!({})),
        Some("not-the-token"),
    );
    assert_eq!(status, 401);
    assert_eq!(socket(&sb, "ws", server.ws(), json!({})), "401");
    assert_eq!(
        socket(&sb, "socket.io", server.url.clone(), json!({})),
        "refused"
    );
    // The page itself holds no data: it is served, and says what to open.
    let (status, _) = http::call("GET", &format!("{}/", server.url), None, None);
    assert_eq!(status, 200);
}

#[test]
fn a_cross_site_body_is_refused_for_its_type_and_its_origin() {
    let sb = sandbox();
    let model = MockModelServer::start_blocking([]);
    let server = Server::start(&sb, &model, &[]);
    let token = format!("Bearer {}", server.token.as_deref().unwrap());
    let sessions = format!("{}/api/sessions", server.url);
    for content_type in [
        "text/plain",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
    ] {
        let (status, _) = http::request(
            "POST",
            &sessions,
            &[("Authorization", token.as_str())],
            Some((content_type, "{}".to_owned())),
        );
        assert_eq!(status, 415, "{content_type}");
    }
    let (status, _) = http::request(
        "POST",
        &sessions,
        &[
            ("Authorization", token.as_str()),
            ("Origin", "http://evil.example"),
        ],
        Some(("application/json", "{}".to_owned())),
    );
    assert_eq!(status, 403);
    let (status, _) = http::request(
        "POST",
        &sessions,
        &[
            ("Authorization", token.as_str()),
            ("Content-Type", "application/json; charset=utf-8"),
        ],
        Some(("application/json; charset=utf-8", "{}".to_owned())),
    );
    assert_eq!(status, 201);
}

#[test]
fn the_token_is_made_once_kept_for_the_user_alone_and_traded_for_a_strict_cookie() {
    use std::os::unix::fs::PermissionsExt;
    let sb = sandbox();
    let model = MockModelServer::start_blocking([]);
    let data = sb.project().parent().unwrap().join("data");
    let data_env = data.display().to_string();
    let first = Server::start_with_env(&sb, &model, &[], &[("AGENTRY_DATA_DIR", &data_env)]);
    let token = first.token.clone().unwrap();
    let file = data.join("server-token");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), token);
    assert_eq!(
        std::fs::metadata(&file).unwrap().permissions().mode() & 0o777,
        0o600
    );
    assert_eq!(
        std::fs::metadata(&data).unwrap().permissions().mode() & 0o777,
        0o700
    );
    drop(first);
    let again = Server::start_with_env(&sb, &model, &[], &[("AGENTRY_DATA_DIR", &data_env)]);
    assert_eq!(again.token.as_deref(), Some(token.as_str()));
    let (status, cookie) = http::get_unfollowed(&again.page_link());
    assert_eq!(status, 303);
    let cookie = cookie.unwrap();
    assert!(
        cookie.starts_with(&format!("agentry_token={token}")),
        "{cookie}"
    );
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"),
        "{cookie}"
    );
    let (status, _) = http::request(
        "GET",
        &format!("{}/api/sessions", again.url),
        &[("Cookie", &format!("agentry_token={token}"))],
        None,
    );
    assert_eq!(status, 200);
    let (status, _) = http::get_unfollowed(&format!("{}/?token=guess", again.url));
    assert_eq!(status, 401);
}

#[test]
fn no_auth_is_refused_beyond_loopback_and_warned_about_on_it() {
    let sb = sandbox();
    let out = sb.run(&[
        "serve",
        "--no-auth",
        "--listen",
        "0.0.0.0:0",
        "--model",
        "scripted:x",
    ]);
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(
        out.stderr.contains("--no-auth is refused"),
        "{}",
        out.stderr
    );
    let model = MockModelServer::start_blocking([]);
    let open = Server::start(&sb, &model, &["--no-auth"]);
    assert_eq!(open.token, None);
    let (status, _) = http::call("GET", &format!("{}/api/sessions", open.url), None, None);
    assert_eq!(status, 200);
    // Even without a token, a rebound name is refused.
    let (status, _) = http::request(
        "GET",
        &format!("{}/api/sessions", open.url),
        &[("Host", "rebind.example")],
        None,
    );
    assert_eq!(status, 403);
}

#[test]
fn in_chromium_a_page_on_a_rebound_name_can_do_nothing_and_the_real_page_works() {
    let sb = sandbox();
    let model = MockModelServer::start_blocking([MockTurn::Reply(MockReply::text(
        "Hello from the agent.",
    ))]);
    let server = Server::start(&sb, &model, &[]);
    let port = port(&server);
    // What a page served from the rebound name tries: the API on its own origin, then the
    // server's loopback address from across sites, and a socket.
    let attack = format!(
        r#"(async () => {{
            const tries = [];
            const create = async (url, type) => {{
                try {{
                    const r = await fetch(url, {{method: "POST", headers: {{"Content-Type": type}}, body: "{{}}"}});
                    return String(r.status);
                }} catch (e) {{ return "blocked"; }}
            }};
            tries.push(await create("/api/sessions", "application/json"));
            tries.push(await create("/api/sessions", "text/plain"));
            tries.push(await create("http://127.0.0.1:{port}/api/sessions", "text/plain"));
            tries.push(await new Promise((done) => {{
                const socket = new WebSocket("ws://rebind.test:{port}/ws");
                socket.onopen = () => done("open");
                socket.onerror = () => done("refused");
            }}));
            return tries.join(" ");
        }})()"#
    );
    let out = run_page_client(
        &json!({
            "url": format!("http://rebind.test:{port}/"),
            "hostResolverRules": "MAP rebind.test 127.0.0.1",
            "steps": [{"op": "eval", "script": attack}],
        }),
        sb.project().parent().unwrap(),
        Duration::from_secs(60),
    );
    assert!(out.of_kind("failed").is_empty(), "{:#?}", out.records);
    assert_eq!(out.of_kind("loaded")[0]["status"], 403);
    let tries = out.of_kind("step")[0]["text"].as_str().unwrap().to_owned();
    let tries: Vec<&str> = tries.split(' ').collect();
    assert_eq!(tries[0], "403");
    assert_eq!(tries[1], "403");
    // Across sites the browser hides the answer; the server refused it all the same.
    assert!(matches!(tries[2], "403" | "blocked"), "{tries:?}");
    assert_eq!(tries[3], "refused");
    let (_, sessions) = server.call("GET", "/api/sessions", None);
    assert_eq!(
        sessions["sessions"].as_array().map(Vec::len),
        Some(0),
        "{sessions}"
    );
    // The real page, opened with the link the server printed, works end to end.
    let out = run_page_client(
        &json!({"url": server.page_link(), "steps": [
            {"op": "click", "selector": "#new-session"},
            {"op": "fill", "selector": "#message", "text": "Say hello"},
            {"op": "press", "selector": "#message", "key": "Enter"},
            {"op": "wait_text", "selector": "#conversation", "text": "Hello from the agent."},
            {"op": "eval", "script": "location.search + '|' + document.cookie"},
        ]}),
        sb.project().parent().unwrap(),
        Duration::from_secs(60),
    );
    assert!(
        out.of_kind("failed").is_empty(),
        "{:#?}\n{}",
        out.records,
        out.stderr
    );
    // The token left the address bar, and scripts cannot read the cookie that holds it.
    let last = out.of_kind("step").last().unwrap()["text"].clone();
    assert_eq!(last, "|");
}

#[test]
fn the_token_in_a_url_counts_only_where_a_client_cannot_send_a_header_and_the_port_must_be_its_own()
{
    let sb = sandbox();
    let model = MockModelServer::start_blocking([]);
    let server = Server::start(&sb, &model, &[]);
    let token = server.token.clone().unwrap();
    let (status, _) = http::request(
        "GET",
        &format!("{}/api/sessions?token={token}", server.url),
        &[],
        None,
    );
    assert_eq!(status, 401, "a REST call takes the token in a header");
    assert_eq!(
        socket(
            &sb,
            "ws",
            format!("{}?token={token}", server.ws()),
            json!({})
        ),
        "open",
        "a WebSocket's URL may carry it"
    );
    let bearer = format!("Bearer {token}");
    let other_port = format!("127.0.0.1:{}", port(&server).parse::<u32>().unwrap() + 1);
    let (status, body) = http::request(
        "GET",
        &format!("{}/api/sessions", server.url),
        &[
            ("Host", other_port.as_str()),
            ("Authorization", bearer.as_str()),
        ],
        None,
    );
    assert_eq!(status, 403, "{body}");
}

#[test]
fn a_connection_that_never_speaks_is_closed_and_renders_stay_bounded() {
    use std::io::Read;
    let sb = sandbox();
    let model = MockModelServer::start_blocking([]);
    let server = Server::start(&sb, &model, &["--header-timeout", "1"]);
    let address = server.url.trim_start_matches("http://").to_owned();
    let mut silent = std::net::TcpStream::connect(&address).unwrap();
    silent
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let mut buffer = [0u8; 16];
    let read = silent.read(&mut buffer);
    assert!(
        matches!(read, Ok(0)) || read.is_err(),
        "the silent connection was kept: {read:?}"
    );
    let bearer = format!("Bearer {}", server.token.as_deref().unwrap());
    let render = |markdown: String| {
        http::request(
            "POST",
            &format!("{}/api/render", server.url),
            &[("Authorization", bearer.as_str())],
            Some((
                "application/json",
                json!({"markdown": markdown}).to_string(),
            )),
        )
    };
    let (status, body) = render("<div>".repeat(100_000) + "deep");
    assert_eq!(status, 200, "{body}");
    let html = body["html"].as_str().unwrap();
    assert!(
        html.contains("deep") && html.matches("<div>").count() <= 64,
        "{}",
        html.len()
    );
    let (status, body) = render("x".repeat(600 * 1024));
    assert_eq!(status, 413, "{body}");
    assert_eq!(body["code"], "too_large");
}
