//! `agentry providers` / `agentry tools`, and choosing tools in configuration.

use crate::sandbox;
use serde_json::{Value, json};

fn tool<'a>(listing: &'a Value, provider: &str, tool: &str) -> &'a Value {
    let provider = listing
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == provider)
        .unwrap();
    provider["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == tool)
        .unwrap()
}

#[test]
fn providers_lists_every_linked_provider_with_origin_and_tools() {
    let sb = sandbox();
    let out = sb.run(&["providers", "--json"]);
    assert_eq!(out.code, Some(0), "{out:?}");
    let listing = out.json();
    let names: Vec<&str> = listing
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "file_ops", "bash", "builtin", "webfetch", "search", "fork", "skill"
        ]
    );
    assert_eq!(tool(&listing, "fork", "Agent")["kind"], "think");
    assert_eq!(tool(&listing, "webfetch", "WebFetch")["kind"], "fetch");
    assert_eq!(tool(&listing, "search", "WebSearch")["kind"], "fetch");
    assert_eq!(listing[0]["origin"], json!({"kind": "built_in"}));
    assert_eq!(tool(&listing, "file_ops", "Grep")["kind"], "search");
    assert_eq!(tool(&listing, "bash", "Bash")["kind"], "execute");
    assert_eq!(
        tool(&listing, "file_ops", "Read")["description"],
        "Reads a file from the filesystem."
    );
    let text = sb.run(&["tools"]);
    assert_eq!(text.code, Some(0));
    assert!(
        text.stdout.starts_with("file_ops (built in): "),
        "{}",
        text.stdout
    );
    // Names are padded to the longest (AskUserQuestion: 15 characters).
    assert!(
        text.stdout.contains("\n  Edit            edit     "),
        "{}",
        text.stdout
    );
}

#[test]
fn configuration_leaves_out_providers_and_tools_and_rejects_unknown_names() {
    let sb = sandbox();
    sb.write(
        "project/.agentry/config.toml",
        "[tools]\ndisabled_providers = [\"bash\"]\ndisabled = [\"Write\"]\n",
    );
    let listing = sb.run(&["providers", "--json"]).json();
    assert_eq!(listing[1]["enabled"], false);
    assert_eq!(tool(&listing, "bash", "Bash")["enabled"], false);
    assert_eq!(tool(&listing, "file_ops", "Write")["enabled"], false);
    assert_eq!(tool(&listing, "file_ops", "Edit")["enabled"], true);
    let script = sb.script("s", &json!({"responses": [
        {"events": [{"tool_call": {"id": "b", "name": "Bash", "arguments": {"command": "true"}}},
                    {"tool_call": {"id": "w", "name": "Write", "arguments": {"file_path": "x", "content": "x"}}}]},
        {"events": [{"text": "ok"}]}
    ]}));
    let out = sb.run_scripted(&script, &["--permission-mode", "bypass", "go"]);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(
        out.stderr.contains("✗ Bash: There is no tool named `Bash`"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("✗ Write: There is no tool named `Write`"),
        "{}",
        out.stderr
    );
    assert!(!sb.project().join("x").exists());

    sb.write(
        "project/.agentry/config.toml",
        "[tools]\ndisabled = [\"Wirte\"]\n",
    );
    let typo = sb.run(&["providers"]);
    assert_eq!(typo.code, Some(2));
    assert!(
        typo.stderr
            .contains("`Wirte`, which is not a tool of this build"),
        "{}",
        typo.stderr
    );
}
