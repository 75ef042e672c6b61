//! The stock providers built as plugins (their `providers/plugins/` crates, from the same source
//! as the linked ones) in the thin CLI (`agentry-thin`, agentry-cli's sources with no provider
//! linked): the same tools as the full binary, and calls that run the same way.

use crate::loading::{STOCK_PLUGINS, plugin_flags, stock_plugin, thin};
use crate::sandbox;
use agentry_tests::Sandbox;
use serde_json::{Value, json};

/// `agentry providers --json` as a map from each provider's name to it.
fn providers(sb: &Sandbox, flags: &[String]) -> serde_json::Map<String, Value> {
    let mut args = vec!["providers".to_owned(), "--json".to_owned()];
    args.extend_from_slice(flags);
    let out = sb.run(&args);
    assert_eq!(out.code, Some(0), "{out:?}");
    out.json()
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["name"].as_str().unwrap().to_owned(), p.clone()))
        .collect()
}

/// A configuration every stock provider reads a section of (HTTP tools offer none without one,
/// the MCP client none without a server).
fn configured() -> String {
    let (command, args) = agentry_tests::peers::everything_server();
    format!(
        "[builtin]\ntask_list = \"tasks\"\n\n[[http_tools]]\nname = \"lookup\"\ndescription = \"Looks things up.\"\nurl = \"http://127.0.0.1:9/lookup\"\ninput_schema = {{ type = \"object\" }}\n\n[mcp_servers.everything]\ncommand = {command:?}\nargs = {args:?}\n"
    )
}

#[test]
fn the_thin_cli_with_the_stock_plugins_offers_the_full_binarys_tools() {
    let bare = providers(&thin(), &[]);
    assert!(bare.is_empty(), "the thin CLI links no provider: {bare:?}");
    let (thin, full) = (thin(), sandbox());
    for sb in [&thin, &full] {
        sb.write("project/.agentry/config.toml", &configured());
    }
    let loaded = providers(&thin, &plugin_flags());
    let linked = providers(&full, &[]);
    // Found in the project's plugins folder instead of named with --plugin: the same listing.
    let foldered = crate::loading::thin();
    foldered.write("project/.agentry/config.toml", &configured());
    let folder = foldered.project().join(".agentry/plugins");
    std::fs::create_dir_all(&folder).unwrap();
    for name in STOCK_PLUGINS {
        let file = format!("libagentry_{name}.so");
        std::os::unix::fs::symlink(stock_plugin(name), folder.join(file)).unwrap();
    }
    let found = providers(&foldered, &[]);
    let without_paths = |listed: &serde_json::Map<String, Value>| {
        let mut listed = listed.clone();
        for provider in listed.values_mut() {
            provider["origin"].as_object_mut().unwrap().remove("path");
            provider.as_object_mut().unwrap().remove("origin_text");
        }
        listed
    };
    assert_eq!(without_paths(&found), without_paths(&loaded));
    // The MCP client offers its servers, each a provider of its own.
    for name in STOCK_PLUGINS.iter().filter(|name| **name != "mcp") {
        let (plugin, built_in) = (&loaded[*name], &linked[*name]);
        assert_eq!(plugin["origin"]["kind"], "plugin", "{plugin}");
        assert!(
            plugin["origin"]["path"]
                .as_str()
                .unwrap()
                .ends_with(&format!("libagentry_{name}_plugin.so"))
        );
        assert_eq!(built_in["origin"]["kind"], "built_in");
        // Names, kinds, descriptions and input schemas alike.
        assert_eq!(plugin["tools"], built_in["tools"], "{name}");
        assert_eq!(plugin["description"], built_in["description"], "{name}");
    }
    let (plugin, built_in) = (&loaded["everything"], &linked["everything"]);
    let server = json!({"kind": "mcp_server", "server": "everything"});
    assert_eq!((&plugin["origin"], &built_in["origin"]), (&server, &server));
    assert_eq!(plugin["tools"], built_in["tools"]);
    assert_eq!(plugin["status"], "ready");
    // Configured alike: `[builtin] task_list` chose the Task tools, `[[http_tools]]` added one.
    let tools = loaded["builtin"]["tools"].to_string() + &loaded["http_tools"]["tools"].to_string();
    assert!(
        tools.contains("TaskCreate") && !tools.contains("TodoWrite"),
        "{tools}"
    );
    assert!(tools.contains("lookup"), "{tools}");
}

#[test]
fn settings_a_stock_provider_cannot_use_are_reported_alike_linked_and_as_a_plugin() {
    let config = "[webfetch]\nmax_redirects = \"many\"\n\n[web_search]\nbackend = \"nowhere\"\n";
    // The plugins come from the configuration: one that fails is reported, and the agent runs
    // without it (named with --plugin, it would fail the command).
    let files: Vec<String> = plugin_flags()
        .into_iter()
        .filter(|flag| flag != "--plugin")
        .map(|file| format!("{file:?}"))
        .collect();
    let (thin, full) = (thin(), sandbox());
    thin.write(
        "project/.agentry/config.toml",
        &format!("plugins = [{}]\n\n{config}", files.join(", ")),
    );
    full.write("project/.agentry/config.toml", config);
    let loaded = providers(&thin, &[]);
    let linked = providers(&full, &[]);
    // WebFetch's table leaves nothing usable: left out, with the reason.
    assert!(!linked.contains_key("webfetch"), "{linked:?}");
    let failed = loaded
        .values()
        .find(|p| p["status"] == "failed")
        .expect("the webfetch plugin is listed as failed");
    let reason = failed["description"].as_str().unwrap();
    assert!(
        reason.contains("libagentry_webfetch_plugin.so")
            && reason.contains("[webfetch]: invalid type"),
        "{reason}"
    );
    // WebSearch's back-end is unusable: offered all the same, the problem reported.
    for listed in [&loaded, &linked] {
        assert_eq!(listed["search"]["status"], "ready");
    }
    for out in [thin.run(&["tools"]), full.run(&["tools"])] {
        assert!(
            out.stderr
                .contains("[web_search]: unknown variant `nowhere`"),
            "{out:?}"
        );
        assert!(!out.stderr.contains("is ignored"), "{out:?}");
    }
}

/// The tool calls of a stream-json run: each call's title, kind, final status and text.
fn calls(events: &[Value]) -> Vec<Value> {
    events
        .iter()
        .filter(|e| e["type"] == "tool_call")
        .map(|call| {
            let id = &call["tool_call_id"];
            let end = events
                .iter()
                .rfind(|e| e["type"] == "tool_call_update" && &e["tool_call_id"] == id)
                .unwrap();
            json!({
                "title": call["title"],
                "kind": call["kind"],
                "status": end["status"],
                "content": end["content"],
            })
        })
        .collect()
}

#[test]
fn read_edit_write_and_bash_run_the_same_from_plugins_in_the_thin_cli_as_linked() {
    let script = json!({"responses": [
        {"events": [
            {"tool_call": {"name": "Read", "arguments": {"file_path": "notes.txt"}}},
            {"tool_call": {"name": "Bash", "arguments": {"command": "true && echo ran", "description": "Run"}}}
        ]},
        {"events": [
            {"tool_call": {"name": "Edit", "arguments": {"file_path": "notes.txt", "old_string": "second line", "new_string": "2nd line"}}},
            {"tool_call": {"name": "Write", "arguments": {"file_path": "new.txt", "content": "made\n"}}}
        ]},
        {"events": [{"text": "done"}]}
    ]});
    // The calls as the front-end sees them, the sandbox's folder written as `PROJECT`.
    let run = |sb: &Sandbox, flags: &[String]| {
        sb.write("project/notes.txt", "first line\nsecond line\n");
        let script = sb.script("read-edit-write-and-bash", &script);
        let mut args = vec!["--output-format", "stream-json"];
        for tool in ["Read", "Edit", "Write", "Bash"] {
            args.extend(["--allow", tool]);
        }
        args.extend(flags.iter().map(String::as_str));
        args.push("Read the notes, run true, then edit and write.");
        let out = sb.run_scripted(&script, &args);
        assert_eq!(out.code, Some(0), "{out:?}");
        let project = sb.project().canonicalize().unwrap();
        let calls = serde_json::to_string(&calls(&out.json_lines())).unwrap();
        let calls = calls.replace(project.to_str().unwrap(), "PROJECT");
        serde_json::from_str::<Vec<Value>>(&calls).unwrap()
    };
    let from_plugins = run(&thin(), &plugin_flags());
    let linked = run(&sandbox(), &[]);
    assert_eq!(from_plugins.len(), 4, "{from_plugins:#?}");
    for call in &from_plugins {
        assert_eq!(call["status"], "completed", "{call}");
    }
    assert!(from_plugins[0].to_string().contains("second line"));
    assert!(from_plugins[1].to_string().contains("ran"));
    let edit = from_plugins[2]["content"].to_string();
    assert!(
        edit.contains("PROJECT/notes.txt") && edit.contains("2nd line"),
        "{edit}"
    );
    assert!(
        from_plugins[3]["content"]
            .to_string()
            .contains("PROJECT/new.txt")
    );
    assert_eq!(from_plugins, linked);
}

#[test]
fn a_stock_plugin_given_to_the_full_binary_replaces_the_linked_provider_with_a_notice() {
    let sb = sandbox();
    let file = stock_plugin("file_ops");
    let flags = ["--plugin".to_owned(), file.display().to_string()];
    let listed = providers(&sb, &flags);
    assert_eq!(listed["file_ops"]["origin"]["kind"], "plugin");
    let script = sb.script(
        "read",
        &json!({"responses": [
            {"events": [{"tool_call": {"name": "Read", "arguments": {"file_path": "notes.txt"}}}]},
            {"events": [{"text": "read it"}]}
        ]}),
    );
    sb.write("project/notes.txt", "a note\n");
    let out = sb.run_scripted(
        &script,
        &["--allow", "Read", &flags[0], &flags[1], "Read it."],
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(out.stdout, "read it\n");
    let notice = format!(
        "provider `file_ops` from {} replaces the built-in one",
        file.display()
    );
    assert_eq!(out.stderr.matches(&notice).count(), 1, "{}", out.stderr);
}
