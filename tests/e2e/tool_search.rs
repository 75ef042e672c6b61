//! Tool search through the binary: an MCP server's many tools held back from requests, found
//! with `ToolSearch`, sent and called; `[tool_search]` and its modes.

use crate::{mcp_test_server, sandbox};
use agentry_tests::Sandbox;
use agentry_tests::mock_model::{MockModelServer, MockReply, MockTurn};
use serde_json::{Value, json};

/// Configures the MCP test server as `records`, with 30 records-service tools besides its own,
/// and `[tool_search]` as given.
fn configure(sb: &Sandbox, tool_search: &str) {
    sb.write(
        "config/agentry/config.toml",
        &format!(
            "[mcp_servers.records]\ncommand = {:?}\nargs = [\"--catalogue\", \"30\"]\n\n[tool_search]\n{tool_search}\n",
            mcp_test_server().display().to_string()
        ),
    );
}

fn run(sb: &Sandbox, server: &MockModelServer) -> agentry_tests::Outcome {
    sb.run_with_env(
        &[
            "run",
            "--model",
            "anthropic/claude-sonnet-4-5",
            "--permission-mode",
            "bypass",
            "Archive invoice REC-1",
        ],
        &[
            ("ANTHROPIC_API_KEY", "sk-ant-e2e"),
            ("ANTHROPIC_BASE_URL", &server.url()),
        ],
    )
}

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap().to_owned())
        .collect()
}

fn system_text(body: &Value) -> String {
    body["system"].to_string()
}

#[test]
fn an_mcp_servers_tools_wait_to_be_found_then_are_sent_and_called() {
    let sb = sandbox();
    // A hundredth of Sonnet's 200,000-token window: the server's 39 tools are past it.
    configure(&sb, "threshold = 0.01");
    let server = MockModelServer::start_blocking([
        MockTurn::Reply(MockReply::tool_call(
            "toolu_1",
            "ToolSearch",
            json!({"query": "archive invoice", "max_results": 2}),
        )),
        MockTurn::Reply(MockReply::tool_call(
            "toolu_2",
            "mcp__records__op_20",
            json!({"target": "REC-1", "reason": "paid"}),
        )),
        MockTurn::Reply(MockReply::text("Archived.")),
    ]);
    let out = run(&sb, &server);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(out.stdout, "Archived.\n");
    let requests = server.requests();
    let first = tool_names(&requests[0].body);
    assert!(first.contains(&"ToolSearch".to_owned()), "{first:?}");
    assert!(
        first.contains(&"Read".to_owned()),
        "the stock tools stay: {first:?}"
    );
    assert!(
        !first.iter().any(|name| name.starts_with("mcp__records__")),
        "{first:?}"
    );
    let system = system_text(&requests[0].body);
    assert!(system.contains("- records: 39 tools"), "{system}");
    // The search's answer names what it found; the next request sends exactly those too.
    let found: Vec<String> = tool_names(&requests[1].body)
        .into_iter()
        .filter(|name| name.starts_with("mcp__records__"))
        .collect();
    // Operation 20 archives invoices; operation 0 creates them (a tie with others, by name).
    assert_eq!(
        found,
        ["mcp__records__op_20", "mcp__records__op_0"],
        "best first"
    );
    let search_result = requests[1].body["messages"].to_string();
    assert!(search_result.contains("2 tools found"), "{search_result}");
    let called = requests[2].body["messages"].to_string();
    assert!(called.contains("op_20 done: REC-1"), "{called}");
    assert_eq!(
        system_text(&requests[2].body),
        system,
        "the system prompt holds still"
    );
}

#[test]
fn below_the_threshold_or_when_never_every_tool_is_sent_and_always_holds_them_back() {
    for (setting, held_back) in [
        ("", false),
        ("enabled = \"never\"\nthreshold = 0.01", false),
        ("enabled = \"always\"", true),
    ] {
        let sb = sandbox();
        configure(&sb, setting);
        let server = MockModelServer::start_blocking([MockTurn::Reply(MockReply::text("ok"))]);
        let out = run(&sb, &server);
        assert_eq!(out.code, Some(0), "{setting}: {out:?}");
        let names = tool_names(&server.requests()[0].body);
        let records = names
            .iter()
            .filter(|name| name.starts_with("mcp__records__"))
            .count();
        assert_eq!(
            records,
            if held_back { 0 } else { 39 },
            "{setting}: {names:?}"
        );
        assert_eq!(
            names.contains(&"ToolSearch".to_owned()),
            held_back,
            "{setting}"
        );
    }
}

#[test]
fn a_threshold_that_is_not_a_share_of_the_window_is_refused() {
    let sb = sandbox();
    configure(&sb, "threshold = 2");
    let server = MockModelServer::start_blocking([]);
    let out = run(&sb, &server);
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(
        out.stderr.contains("[tool_search] threshold = 2"),
        "{}",
        out.stderr
    );
    configure(&sb, "enabled = \"sometimes\"");
    let out = run(&sb, &server);
    assert_eq!(out.code, Some(2), "{out:?}");
}

#[test]
fn a_lazy_server_starts_on_first_use_its_tools_listed_from_its_last_start() {
    let sb = sandbox();
    let starts = sb.write("starts.log", "");
    sb.write(
        "config/agentry/config.toml",
        &format!(
            "[mcp_servers.records]\ncommand = {:?}\nargs = [\"--catalogue\", \"3\"]\nlazy = true\nenv = {{ MCP_TEST_START_LOG = {:?} }}\n",
            mcp_test_server().display().to_string(),
            starts.display().to_string()
        ),
    );
    let started = || std::fs::read_to_string(&starts).unwrap().lines().count();
    let answer = |text: &str| MockTurn::Reply(MockReply::text(text));
    // Never listed: it starts at once, to be listed (and the listing kept).
    let server = MockModelServer::start_blocking([answer("one")]);
    assert_eq!(run(&sb, &server).code, Some(0));
    assert_eq!(started(), 1);
    assert!(tool_names(&server.requests()[0].body).contains(&"mcp__records__op_2".to_owned()));
    // Listed before: its tools are offered, and it does not start while nothing uses them.
    let server = MockModelServer::start_blocking([answer("two")]);
    assert_eq!(run(&sb, &server).code, Some(0));
    assert_eq!(started(), 1, "not started for a chat that does not use it");
    assert!(tool_names(&server.requests()[0].body).contains(&"mcp__records__op_2".to_owned()));
    // The first call starts it, and is answered.
    let server = MockModelServer::start_blocking([
        MockTurn::Reply(MockReply::tool_call(
            "toolu_1",
            "mcp__records__op_1",
            json!({"target": "REC-9"}),
        )),
        answer("three"),
    ]);
    let out = run(&sb, &server);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(started(), 2);
    let result = server.requests()[1].body["messages"].to_string();
    assert!(result.contains("op_1 done: REC-9"), "{result}");
    // A list the server says changed is kept for the next start (the answer after the change
    // takes a second, time for the list to be fetched again).
    let server = MockModelServer::start_blocking([
        MockTurn::Reply(MockReply::tool_call(
            "toolu_2",
            "mcp__records__add_tool",
            json!({"name": "fresh"}),
        )),
        MockTurn::Reply(MockReply {
            pause_before_last: Some(std::time::Duration::from_secs(1)),
            ..MockReply::text("four")
        }),
    ]);
    assert_eq!(run(&sb, &server).code, Some(0));
    assert_eq!(started(), 3);
    let server = MockModelServer::start_blocking([answer("five")]);
    assert_eq!(run(&sb, &server).code, Some(0));
    assert_eq!(started(), 3);
    assert!(
        tool_names(&server.requests()[0].body).contains(&"mcp__records__fresh".to_owned()),
        "the changed list, from the cache"
    );
}
