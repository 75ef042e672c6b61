//! WebFetch and WebSearch in the real binary: a page on 127.0.0.1 (allowed by `[webfetch]`), the
//! permission rule `WebFetch(domain:…)`, the prompt answered by a side question to the model
//! `[webfetch]` names (on the mock model server), a search through a SearXNG-format back-end on 127.0.0.1, and a
//! tool registered by `[[http_tools]]`; each with the providers linked and as plugins of the thin
//! CLI, configured by the same sections.

use crate::both_ways;
use crate::loading::{Loading, as_strs};
use crate::{run_openai, tool_result_in};
use agentry_tests::mock_model::{MockModelServer, MockReply, MockTurn};
use serde_json::json;
use std::io::{BufRead, BufReader, Write};

/// Serves `body` as HTML to every request on a loopback port, from a thread.
fn page_server(body: &'static str) -> u16 {
    server("text/html", body)
}

/// Serves `body` as `content_type` to every request on a loopback port, from a thread.
fn server(content_type: &'static str, body: &'static str) -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                line.clear();
            }
            let mut stream = stream;
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    port
}

both_ways!(webfetch_reads_a_page_and_answers_its_prompt_with_the_model_its_section_names);
fn webfetch_reads_a_page_and_answers_its_prompt_with_the_model_its_section_names(loading: Loading) {
    let sb = loading.sandbox();
    let port = page_server(
        "<html><body><nav>Menu</nav><h1>Release notes</h1><p>Version <b>2.1</b> adds streaming.</p><script>x()</script></body></html>",
    );
    sb.write(
        "project/.agentry/config.toml",
        "[webfetch]\nmodel = \"openai/gpt-4.1-mini\"\nallow_http = true\nallow_addresses = [\"127.0.0.1\"]\n\n[permissions]\nallow = [\"WebFetch(domain:127.0.0.1)\"]\n",
    );
    let url = format!("http://127.0.0.1:{port}/notes");
    let server = MockModelServer::start_blocking([
        MockTurn::Reply(MockReply::tool_call(
            "fetch_1",
            "WebFetch",
            json!({"url": url, "prompt": "Which version adds streaming?"}),
        )),
        // The side question WebFetch asks about the page.
        MockTurn::Reply(MockReply::text("Version 2.1 adds streaming.")),
        MockTurn::Reply(MockReply::text("It is 2.1.")),
    ]);
    let out = run_openai(
        &sb,
        &server,
        &as_strs(&loading.args(&["which version adds streaming?"])),
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    // The chat asks the session's model; the side question goes to the one `[webfetch]` names.
    assert_eq!(requests[0].body["model"], "gpt-4.1");
    assert_eq!(requests[1].body["model"], "gpt-4.1-mini");
    assert_eq!(requests[2].body["model"], "gpt-4.1");
    let side = requests[1].body["messages"].to_string();
    assert!(side.contains("# Release notes"), "{side}");
    assert!(side.contains("Which version adds streaming?"), "{side}");
    assert!(!side.contains("Menu") && !side.contains("x()"), "{side}");
    let result = tool_result_in(&server, 2);
    assert!(result.contains("Version 2.1 adds streaming."), "{result}");
}

both_ways!(webfetch_refuses_a_private_address_that_no_configuration_allows);
fn webfetch_refuses_a_private_address_that_no_configuration_allows(loading: Loading) {
    let sb = loading.sandbox();
    let port = page_server("<p>internal</p>");
    sb.write(
        "project/.agentry/config.toml",
        "[webfetch]\nallow_http = true\n\n[permissions]\nallow = [\"WebFetch\"]\n",
    );
    let server = MockModelServer::start_blocking([
        MockTurn::Reply(MockReply::tool_call(
            "fetch_1",
            "WebFetch",
            json!({"url": format!("http://127.0.0.1:{port}/"), "prompt": "?"}),
        )),
        MockTurn::Reply(MockReply::text("Refused.")),
    ]);
    let out = run_openai(&sb, &server, &as_strs(&loading.args(&["fetch it"])));
    assert_eq!(out.code, Some(0), "{out:?}");
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "no side question for a refused page");
    let result = tool_result_in(&server, 1);
    assert!(
        result.contains("not a public address") && result.contains("loopback"),
        "{result}"
    );
}

both_ways!(websearch_asks_the_configured_searxng_and_gives_a_numbered_list);
fn websearch_asks_the_configured_searxng_and_gives_a_numbered_list(loading: Loading) {
    let sb = loading.sandbox();
    let port = server(
        "application/json",
        r#"{"query": "tokio", "results": [{"url": "https://tokio.rs/", "title": "Tokio", "content": "An async runtime.", "engine": "brave"}], "answers": [], "suggestions": []}"#,
    );
    sb.write(
        "project/.agentry/config.toml",
        &format!("[web_search]\nbackend = \"searxng\"\nurl = \"http://127.0.0.1:{port}\"\n\n[permissions]\nallow = [\"WebSearch\"]\n"),
    );
    let server = MockModelServer::start_blocking([
        MockTurn::Reply(MockReply::tool_call(
            "search_1",
            "WebSearch",
            json!({"query": "tokio"}),
        )),
        MockTurn::Reply(MockReply::text("Tokio is an async runtime.")),
    ]);
    let out = run_openai(&sb, &server, &as_strs(&loading.args(&["what is tokio?"])));
    assert_eq!(out.code, Some(0), "{out:?}");
    let result = tool_result_in(&server, 1);
    assert!(
        result.contains("1. Tokio") && result.contains("https://tokio.rs/"),
        "{result}"
    );
}

both_ways!(a_configured_http_tool_is_offered_and_called_with_the_models_input);
fn a_configured_http_tool_is_offered_and_called_with_the_models_input(loading: Loading) {
    let sb = loading.sandbox();
    let port = server("application/json", r#"{"answer": 42}"#);
    sb.write(
        "project/.agentry/config.toml",
        &format!(
            "[[http_tools]]\nname = \"lookup\"\ndescription = \"Looks things up.\"\nurl = \"http://127.0.0.1:{port}/lookup\"\ninput_schema = {{ type = \"object\", properties = {{ q = {{ type = \"string\" }} }}, required = [\"q\"] }}\n\n[permissions]\nallow = [\"lookup\"]\n"
        ),
    );
    let listing = loading.after(&["tools"]);
    let listed = sb.run(&as_strs(&listing));
    assert!(listed.stdout.contains("lookup"), "{listed:?}");
    let model = MockModelServer::start_blocking([
        MockTurn::Reply(MockReply::tool_call(
            "call_1",
            "lookup",
            json!({"q": "meaning"}),
        )),
        MockTurn::Reply(MockReply::text("It is 42.")),
    ]);
    let out = run_openai(&sb, &model, &as_strs(&loading.args(&["look it up"])));
    assert_eq!(out.code, Some(0), "{out:?}");
    let requests = model.requests();
    let tools = requests[0].body["tools"].to_string();
    assert!(tools.contains("Looks things up."), "{tools}");
    let result = tool_result_in(&model, 1);
    assert!(result.contains("\\\"answer\\\": 42"), "{result}");
}
