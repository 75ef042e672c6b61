//! The stock providers built as plugins (`scripts/build-plugins`, from the same source as the
//! linked ones) in the thin CLI (`cargo build -p agentry-cli --no-default-features`, kept as
//! `agentry-thin`): the same tools as the full binary, and calls that run the same way.

use crate::loading::{STOCK_PLUGINS, built, plugin_flags, thin};
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

#[test]
fn the_thin_cli_with_the_stock_plugins_offers_the_full_binarys_tools() {
    let bare = providers(&thin(), &[]);
    assert!(bare.is_empty(), "the thin CLI links no provider: {bare:?}");
    let loaded = providers(&thin(), &plugin_flags());
    let linked = providers(&sandbox(), &[]);
    for name in STOCK_PLUGINS {
        let (plugin, built_in) = (&loaded[name], &linked[name]);
        assert_eq!(plugin["origin"]["kind"], "plugin", "{plugin}");
        assert!(
            plugin["origin"]["path"]
                .as_str()
                .unwrap()
                .ends_with(&format!("libagentry_{name}.so"))
        );
        assert_eq!(built_in["origin"]["kind"], "built_in");
        // Names, kinds, descriptions and input schemas alike.
        assert_eq!(plugin["tools"], built_in["tools"], "{name}");
        assert_eq!(plugin["description"], built_in["description"], "{name}");
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
fn read_and_bash_run_the_same_from_plugins_in_the_thin_cli_as_linked() {
    let script = json!({"responses": [
        {"events": [
            {"tool_call": {"name": "Read", "arguments": {"file_path": "notes.txt"}}},
            {"tool_call": {"name": "Bash", "arguments": {"command": "true && echo ran", "description": "Run"}}}
        ]},
        {"events": [{"text": "done"}]}
    ]});
    let run = |sb: &Sandbox, flags: &[String]| {
        sb.write("project/notes.txt", "first line\nsecond line\n");
        let script = sb.script("read-and-bash", &script);
        let mut args = vec![
            "--output-format",
            "stream-json",
            "--allow",
            "Read",
            "--allow",
            "Bash",
        ];
        args.extend(flags.iter().map(String::as_str));
        args.push("Read the notes, then run true.");
        let out = sb.run_scripted(&script, &args);
        assert_eq!(out.code, Some(0), "{out:?}");
        calls(&out.json_lines())
    };
    let from_plugins = run(&thin(), &plugin_flags());
    let linked = run(&sandbox(), &[]);
    assert_eq!(from_plugins.len(), 2, "{from_plugins:#?}");
    assert_eq!(from_plugins[0]["status"], "completed");
    assert!(from_plugins[0].to_string().contains("second line"));
    assert!(from_plugins[1].to_string().contains("ran"));
    assert_eq!(from_plugins, linked);
}

#[test]
fn a_stock_plugin_given_to_the_full_binary_replaces_the_linked_provider_with_a_notice() {
    let sb = sandbox();
    let file = built(
        "../plugins/libagentry_file_ops.so",
        "run scripts/build-plugins",
    );
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
