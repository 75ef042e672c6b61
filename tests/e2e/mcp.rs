//! MCP servers in the real binary: configured in `.mcp.json` or `[mcp_servers.NAME]`, listed
//! beside the linked providers and the plugins, and their tools called by the model; with the
//! MCP client linked and loaded as a plugin.

use crate::both_ways;
use crate::loading::{Loading, as_strs};
use crate::run_openai;
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

both_ways!(mcp_servers_and_plugins_are_listed_side_by_side);
fn mcp_servers_and_plugins_are_listed_side_by_side(loading: Loading) {
    let sb = loading.sandbox();
    sb.write("project/.mcp.json", &mcp_json());
    let (command, args) = everything_server();
    sb.write(
        "config/agentry/config.toml",
        &format!("[mcp_servers.from-config]\ncommand = {command:?}\nargs = {args:?}\n"),
    );
    let plugin = crate::plugins::plugin_arg();
    let providers = loading.after(&["providers", "--plugin", &plugin]);
    let mut json_listing = providers.clone();
    json_listing.push("--json".to_owned());
    let out = sb.run(&as_strs(&json_listing));
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
        // The server's readOnlyHint is its own say: untrusted, the tool asks.
        assert_eq!(echo["kind"], "other");
        assert_eq!(mcp["status"], "ready");
    }
    let broken = provider(&listing, "broken");
    assert_eq!(broken["status"], "failed");
    assert!(
        broken["description"]
            .as_str()
            .unwrap()
            .contains("no token configured"),
        "{broken}"
    );
    let text = sb.run(&as_strs(&providers)).stdout;
    assert!(
        text.contains("everything (MCP server everything)")
            && text.contains("(plugin ")
            && text.contains("broken (MCP server broken, failed): "),
        "{text}"
    );
}

both_ways!(the_model_calls_an_mcp_tool_through_the_executor);
fn the_model_calls_an_mcp_tool_through_the_executor(loading: Loading) {
    let sb = loading.sandbox();
    sb.write("project/.mcp.json", &mcp_json());
    let server = MockModelServer::start_blocking([
        MockTurn::Reply(MockReply::tool_call(
            "call_1",
            "mcp__everything__get-sum",
            json!({"a": 20, "b": 22}),
        )),
        MockTurn::Reply(MockReply::text("The sum is 42.")),
    ]);
    let args = loading.args(&[
        "--allow",
        "mcp__everything__get-sum",
        "--output-format",
        "stream-json",
        "add",
    ]);
    let out = run_openai(&sb, &server, &as_strs(&args));
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

both_ways!(mcp_add_list_and_remove_edit_the_configuration_in_place);
fn mcp_add_list_and_remove_edit_the_configuration_in_place(loading: Loading) {
    let sb = loading.sandbox();
    let config = sb.write(
        "project/.agentry/config.toml",
        "# the team's settings\nmodel = \"openai/gpt-4.1\"\n",
    );
    let (command, args) = everything_server();
    let mut add = vec!["mcp", "add", "everything", "-e", "LEVEL=debug", "--"];
    add.push(&command);
    add.extend(args.iter().map(String::as_str));
    let out = sb.run(&add);
    assert_eq!(out.code, Some(0), "{out:?}");
    let written = std::fs::read_to_string(&config).unwrap();
    assert!(
        written.starts_with("# the team's settings\nmodel = \"openai/gpt-4.1\"\n"),
        "{written}"
    );
    assert!(
        written.contains("[mcp_servers.everything]") && written.contains("LEVEL = \"debug\""),
        "{written}"
    );
    let again = sb.run(&add);
    assert_eq!(again.code, Some(2));
    assert!(
        again.stderr.contains("configured already"),
        "{}",
        again.stderr
    );
    let url = sb.run(&[
        "mcp",
        "add",
        "docs",
        "--scope",
        "user",
        "--url",
        "http://127.0.0.1:9/mcp",
        "--header",
        "Authorization: Bearer t",
    ]);
    assert_eq!(url.code, Some(0), "{url:?}");
    let user = std::fs::read_to_string(sb.user_config()).unwrap();
    assert!(
        user.contains("url = \"http://127.0.0.1:9/mcp\"")
            && user.contains("Authorization = \"Bearer t\""),
        "{user}"
    );

    let listing = sb.run(&as_strs(&loading.after(&["mcp", "list", "--json"])));
    assert_eq!(listing.code, Some(0), "{listing:?}");
    let rows = listing.json();
    let row = |name: &str| {
        rows.as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == name)
            .unwrap()
            .clone()
    };
    let everything = row("everything");
    assert_eq!(everything["status"], "connected");
    assert!(everything["tools"].as_u64().unwrap() >= 10, "{everything}");
    assert!(
        everything["prompts"].as_array().unwrap().len() >= 2,
        "{everything}"
    );
    assert_eq!(row("docs")["status"], "failed");

    assert_eq!(sb.run(&["mcp", "remove", "everything"]).code, Some(0));
    let after = std::fs::read_to_string(&config).unwrap();
    assert_eq!(after, "# the team's settings\nmodel = \"openai/gpt-4.1\"\n");
    let missing = sb.run(&["mcp", "remove", "everything"]);
    assert_eq!(missing.code, Some(2));
    assert!(
        missing.stderr.contains("no MCP server named `everything`"),
        "{}",
        missing.stderr
    );
}

both_ways!(slash_commands_are_listed_and_run_headless);
fn slash_commands_are_listed_and_run_headless(loading: Loading) {
    let sb = loading.sandbox();
    sb.write("project/.mcp.json", &mcp_json());
    sb.write(
        "project/.agentry/prompts/review.md",
        "---\ndescription: Review a file\narguments:\n  - name: file\n    required: true\n---\nReview {{file}}.\n",
    );
    let listing = sb.run(&as_strs(&loading.after(&["commands", "--json"])));
    assert_eq!(listing.code, Some(0), "{listing:?}");
    let commands = listing.json();
    let command = |name: &str| {
        commands
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == name)
            .unwrap_or_else(|| panic!("no /{name} in {commands}"))
            .clone()
    };
    assert_eq!(command("review")["origin"], "prompt template");
    assert_eq!(command("review")["hint"], "<file>");
    assert_eq!(command("args-prompt")["origin"], "MCP server everything");
    assert_eq!(command("args-prompt")["hint"], "<city> [state]");
    let text = sb.run(&as_strs(&loading.after(&["commands"]))).stdout;
    assert!(text.contains("/review <file>"), "{text}");

    let server = MockModelServer::start_blocking([
        MockTurn::Reply(MockReply::text("sunny")),
        MockTurn::Reply(MockReply::text("reviewed")),
    ]);
    let out = run_openai(
        &sb,
        &server,
        &as_strs(&loading.args(&["/args-prompt Paris"])),
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    let out = run_openai(
        &sb,
        &server,
        &as_strs(&loading.args(&["/review src/lib.rs"])),
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    let sent = |request: usize| server.requests()[request].body["messages"].to_string();
    assert!(sent(0).contains("What's weather in Paris?"), "{}", sent(0));
    assert!(sent(1).contains("Review src/lib.rs."), "{}", sent(1));
    let missing = run_openai(&sb, &server, &as_strs(&loading.args(&["/review"])));
    assert_eq!(missing.code, Some(2), "{missing:?}");
    assert!(
        missing
            .stderr
            .contains("/review: `review` needs its `file` argument"),
        "{}",
        missing.stderr
    );
}

both_ways!(a_disabled_name_the_ready_server_does_not_offer_is_warned_of);
fn a_disabled_name_the_ready_server_does_not_offer_is_warned_of(loading: Loading) {
    let sb = loading.sandbox();
    sb.write("project/.mcp.json", &mcp_json());
    sb.write(
        "project/.agentry/config.toml",
        "[tools]\ndisabled = [\"mcp__everything__echo\", \"mcp__everything__ecko\"]\n",
    );
    let server = MockModelServer::start_blocking([MockTurn::Reply(MockReply::text("Hello."))]);
    let out = run_openai(&sb, &server, &as_strs(&loading.args(&["hi"])));
    assert_eq!(out.code, Some(0), "{out:?}");
    let offered = server.requests()[0].body["tools"].to_string();
    assert!(
        !offered.contains("\"mcp__everything__echo\"")
            && offered.contains("mcp__everything__get-sum"),
        "{offered}"
    );
    let warned: Vec<&str> = out
        .stderr
        .lines()
        .filter(|line| line.contains("offers no tool of that name"))
        .collect();
    assert_eq!(warned.len(), 1, "{}", out.stderr);
    assert!(
        warned[0].contains("`mcp__everything__ecko` is disabled, but `everything`"),
        "{}",
        warned[0]
    );
}

both_ways!(each_configured_server_is_started_once);
fn each_configured_server_is_started_once(loading: Loading) {
    let sb = loading.sandbox();
    let starts = sb.project().join("starts.log");
    let command = format!("echo started >> '{}'; exit 1", starts.display());
    sb.write(
        "project/.mcp.json",
        &json!({"mcpServers": {"counted": {"command": "sh", "args": ["-c", command]}}}).to_string(),
    );
    let out = sb.run(&as_strs(&loading.after(&["providers"])));
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(std::fs::read_to_string(&starts).unwrap(), "started\n");
}
