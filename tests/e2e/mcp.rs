//! MCP servers in the real binary: configured in `.mcp.json` or `[mcp_servers.NAME]`, listed
//! beside the linked providers and the plugins, and their tools called by the model.

use crate::{run_openai, sandbox};
use agentry_tests::mock_model::{MockModelServer, MockReply, MockTurn};
use agentry_tests::peers::everything_server;
use serde_json::{Value, json};

/// `.mcp.json` naming the reference server `everything`, and a server that cannot start.
fn mcp_json() -> String {
    let (command, args) = everything_server();
    json!({"mcpServers": {
        "everything": {"command": command, "args": args},
        "broken": {"command": "sh", "args": ["-c", "echo 'no token configured' >&2; exit 1"]},
    }})
    .to_string()
}

fn provider<'a>(listing: &'a Value, name: &str) -> &'a Value {
    listing
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("no provider `{name}` in {listing}"))
}

#[test]
fn mcp_servers_and_plugins_are_listed_side_by_side() {
    let sb = sandbox();
    sb.write("project/.mcp.json", &mcp_json());
    let (command, args) = everything_server();
    sb.write(
        "config/agentry/config.toml",
        &format!("[mcp_servers.from-config]\ncommand = {command:?}\nargs = {args:?}\n"),
    );
    let plugin = crate::plugins::plugin_arg();
    let out = sb.run(&["providers", "--json", "--plugin", &plugin]);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(
        out.stderr.contains("MCP server `broken` did not start")
            && out.stderr.contains("no token configured"),
        "the failing server is reported with its stderr: {}",
        out.stderr
    );
    let listing = out.json();
    assert_eq!(
        provider(&listing, "hello")["origin"],
        json!({"kind": "plugin", "path": plugin})
    );
    for server in ["everything", "from-config"] {
        let mcp = provider(&listing, server);
        assert_eq!(
            mcp["origin"],
            json!({"kind": "mcp_server", "server": server})
        );
        let echo = mcp["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == format!("mcp__{server}__echo"))
            .unwrap_or_else(|| panic!("no echo tool in {mcp}"));
        assert_eq!(echo["kind"], "read");
    }
    let text = sb.run(&["providers", "--plugin", &plugin]).stdout;
    assert!(
        text.contains("everything (MCP server everything)") && text.contains("(plugin "),
        "{text}"
    );
}

#[test]
fn the_model_calls_an_mcp_tool_through_the_executor() {
    let sb = sandbox();
    sb.write("project/.mcp.json", &mcp_json());
    let server = MockModelServer::start_blocking([
        MockTurn::Reply(MockReply::tool_call(
            "call_1",
            "mcp__everything__get-sum",
            json!({"a": 20, "b": 22}),
        )),
        MockTurn::Reply(MockReply::text("The sum is 42.")),
    ]);
    let out = run_openai(&sb, &server, &["--output-format", "stream-json", "add"]);
    assert_eq!(out.code, Some(0), "{out:?}");
    let requests = server.requests();
    let offered: Vec<&str> = requests[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    assert!(offered.contains(&"mcp__everything__get-sum"), "{offered:?}");
    let tool_message = requests[1].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(tool_message["tool_call_id"], "call_1");
    assert!(
        tool_message["content"].as_str().unwrap().contains("42"),
        "{tool_message}"
    );
    let completed = out
        .json_lines()
        .into_iter()
        .any(|event| event["type"] == "tool_call_update" && event["status"] == "completed");
    assert!(completed, "{}", out.stdout);
}
