//! Claude Code plugins through the binary: marketplaces made by the tests in Claude Code's
//! published layout (a folder, and a git repository reached by its URL), plugins installed,
//! listed, turned off and on and uninstalled; an installed plugin's hook runs with
//! `$CLAUDE_PLUGIN_ROOT` and its MCP server starts.

use crate::{mcp_test_server, run_openai, sandbox, tool_result_in};
use agentry_tests::Sandbox;
use agentry_tests::mock_model::{MockModelServer, MockReply, MockTurn};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// Writes `text` to `path`, making its folders.
pub(crate) fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A marketplace `team` in the sandbox's `market/` offering `guard`: a plugin with a
/// `PreToolUse` hook (a script of its own, recording its input and `$CLAUDE_PLUGIN_ROOT`,
/// denying `rm`), an MCP server (the repository's test server) and a command.
pub(crate) fn marketplace(sb: &Sandbox) -> PathBuf {
    let market = sb.project().parent().unwrap().join("market");
    write(
        &market.join(".claude-plugin/marketplace.json"),
        &json!({"name": "team", "owner": {"name": "The team"},
            "plugins": [{"name": "guard", "source": "./plugins/guard", "description": "Guards the shell"}]})
        .to_string(),
    );
    let plugin = market.join("plugins/guard");
    write(
        &plugin.join(".claude-plugin/plugin.json"),
        &json!({"name": "guard", "version": "1.0.0", "description": "Guards the shell",
            "author": {"name": "The team"}})
        .to_string(),
    );
    write(
        &plugin.join("hooks/hooks.json"),
        &json!({"description": "No deleting", "hooks": {"PreToolUse": [{"matcher": "Bash",
            "hooks": [{"type": "command", "command": "\"${CLAUDE_PLUGIN_ROOT}\"/scripts/check.sh"}]}]}})
        .to_string(),
    );
    write(
        &plugin.join("scripts/check.sh"),
        "#!/bin/sh\ncat > \"$CLAUDE_PROJECT_DIR/plugin-hook.json\"\necho \"$CLAUDE_PLUGIN_ROOT\" > \"$CLAUDE_PROJECT_DIR/plugin-root.txt\"\ngrep -q 'rm -rf' \"$CLAUDE_PROJECT_DIR/plugin-hook.json\" && { echo 'the guard plugin forbids rm -rf' >&2; exit 2; }\nexit 0\n",
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let script = plugin.join("scripts/check.sh");
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    write(
        &plugin.join(".mcp.json"),
        &json!({"mcpServers": {"tools": {"command": mcp_test_server().display().to_string(), "args": []}}})
            .to_string(),
    );
    write(
        &plugin.join("commands/deploy.md"),
        "---\ndescription: Deploy\n---\nDeploy $ARGUMENTS\n",
    );
    market
}

/// Makes `folder` a git repository with one commit; returns the commit.
pub(crate) fn commit_all(folder: &Path) -> String {
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .args(args)
            .current_dir(folder)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.com")
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    };
    git(&["init", "-q", "-b", "main"]);
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", "plugins"]);
    git(&["rev-parse", "HEAD"])
}

/// The installed plugins, as `agentry plugin list --json` gives them.
fn installed(sb: &Sandbox) -> Vec<Value> {
    let out = sb.run(&["plugin", "list", "--json"]);
    assert_eq!(out.code, Some(0), "{out:?}");
    out.json()["plugins"].as_array().unwrap().clone()
}

#[test]
fn a_plugin_from_a_git_marketplace_is_shown_asked_about_installed_and_runs_its_hook_and_server() {
    let sb = sandbox();
    let market = marketplace(&sb);
    let commit = commit_all(&market);
    let url = format!("file://{}", market.display());
    let added = sb.run(&["plugin", "marketplace", "add", &url]);
    assert_eq!(added.code, Some(0), "{added:?}");
    assert!(
        added
            .stdout
            .contains("Added the marketplace team (1 plugins)"),
        "{}",
        added.stdout
    );
    let listed = sb.run(&["plugin", "marketplace", "list", "--json"]).json();
    assert_eq!(listed[0]["name"], "team");
    assert_eq!(listed[0]["plugins"][0]["name"], "guard");

    // It runs code: without a terminal to ask at, it needs --yes, and nothing is left behind.
    let refused = sb.run(&["plugin", "install", "guard@team"]);
    assert_eq!(refused.code, Some(2), "{refused:?}");
    assert!(refused.stderr.contains("--yes"), "{}", refused.stderr);
    for shown in [
        "commands: /deploy",
        "PreToolUse [command]",
        "MCP servers (run programs): tools: ",
    ] {
        assert!(
            refused.stdout.contains(shown),
            "{shown} in {}",
            refused.stdout
        );
    }
    assert!(installed(&sb).is_empty());
    let data = sb.project().parent().unwrap().join("data/claude-plugins");
    assert!(
        !data.join("cache").exists(),
        "a refused install leaves no copy"
    );

    let done = sb.run(&["plugin", "install", "guard@team", "--yes"]);
    assert_eq!(done.code, Some(0), "{done:?}");
    let plugins = installed(&sb);
    assert_eq!(plugins[0]["id"], "guard@team");
    assert_eq!(plugins[0]["version"], "1.0.0");
    assert_eq!(
        plugins[0]["commit"],
        commit.as_str(),
        "pinned to the commit installed"
    );
    assert_eq!(plugins[0]["enabled"], true);
    let copy = PathBuf::from(plugins[0]["path"].as_str().unwrap());
    assert!(
        copy.starts_with(data.join("cache/team/guard/1.0.0")),
        "{}",
        copy.display()
    );

    // The hook is listed with its plugin, and runs with $CLAUDE_PLUGIN_ROOT; the server starts.
    let hooks = sb.run(&["hooks", "--json"]).json();
    let hook = &hooks["hooks"][0];
    assert_eq!(hook["event"], "PreToolUse");
    assert_eq!(hook["plugin_root"], copy.display().to_string());
    let model = MockModelServer::start_blocking([
        MockTurn::Reply(MockReply::tool_call(
            "c1",
            "Bash",
            json!({"command": "rm -rf build", "description": "Clean"}),
        )),
        MockTurn::Reply(MockReply::tool_call(
            "c2",
            "mcp__plugin_guard_tools__echo",
            json!({"text": "from the plugin's server"}),
        )),
        MockTurn::Reply(MockReply::text("done")),
    ]);
    let out = run_openai(
        &sb,
        &model,
        &[
            "--allow",
            "Bash",
            "--allow",
            "mcp__plugin_guard_tools__echo",
            "clean up",
        ],
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(tool_result_in(&model, 1).contains("the guard plugin forbids rm -rf"));
    assert!(tool_result_in(&model, 2).contains("from the plugin's server"));
    let root = std::fs::read_to_string(sb.project().join("plugin-root.txt")).unwrap();
    assert_eq!(root.trim(), copy.display().to_string());

    // Off, it runs nothing; on again, it does; uninstalled, nothing of it is left.
    assert_eq!(sb.run(&["plugin", "disable", "guard@team"]).code, Some(0));
    assert_eq!(installed(&sb)[0]["enabled"], false);
    assert_eq!(sb.run(&["hooks", "--json"]).json()["hooks"], json!([]));
    assert_eq!(sb.run(&["plugin", "enable", "guard@team"]).code, Some(0));
    assert_eq!(installed(&sb)[0]["enabled"], true);
    assert_eq!(sb.run(&["plugin", "uninstall", "guard@team"]).code, Some(0));
    assert!(installed(&sb).is_empty());
    assert!(!copy.exists());
    assert_eq!(
        sb.run(&["plugin", "marketplace", "remove", "team"]).code,
        Some(0)
    );
    assert!(
        !data.join("marketplaces/team").exists(),
        "the clone goes with the marketplace"
    );
}

#[test]
fn a_folder_marketplace_installs_and_bad_catalogs_are_refused_naming_the_file() {
    let sb = sandbox();
    let market = marketplace(&sb);
    let added = sb.run(&["plugin", "marketplace", "add", market.to_str().unwrap()]);
    assert_eq!(added.code, Some(0), "{added:?}");
    let done = sb.run(&["plugin", "install", "guard@team", "-y"]);
    assert_eq!(done.code, Some(0), "{done:?}");
    assert_eq!(installed(&sb)[0]["version"], "1.0.0");
    let unknown = sb.run(&["plugin", "install", "nothing@team", "-y"]);
    assert_eq!(unknown.code, Some(2));
    assert!(
        unknown
            .stderr
            .contains("has no plugin `nothing` (it has: guard)"),
        "{}",
        unknown.stderr
    );

    let catalog = market.join(".claude-plugin/marketplace.json");
    for (written, wanted) in [
        (json!({"name": "bad", "plugins": [{"name": "x", "source": "../outside"}]}).to_string(), "stay inside it"),
        (json!({"name": "bad", "plugins": [{"name": "x", "source": "./a"}, {"name": "x", "source": "./b"}]}).to_string(), "given twice"),
        (json!({"name": "bad", "plugins": [{"name": "x", "source": {"source": "npm", "package": "x"}}]}).to_string(), "`npm` is not one agentry installs"),
        ("{ nope".to_owned(), "not valid JSON"),
    ] {
        std::fs::write(&catalog, &written).unwrap();
        let out = sb.run(&["plugin", "marketplace", "add", market.to_str().unwrap()]);
        assert_eq!(out.code, Some(2), "{written}: {out:?}");
        assert!(out.stderr.contains(wanted) && out.stderr.contains("marketplace.json"), "{written}: {}", out.stderr);
    }
    let listed = sb.run(&["plugin", "marketplace", "list", "--json"]).json();
    assert_eq!(
        listed.as_array().unwrap().len(),
        1,
        "nothing half-added: {listed}"
    );
}

#[test]
fn a_plugin_a_repository_asks_for_counts_only_in_a_trusted_folder() {
    let sb = sandbox();
    let market = marketplace(&sb);
    assert_eq!(
        sb.run(&["plugin", "marketplace", "add", market.to_str().unwrap()])
            .code,
        Some(0)
    );
    assert_eq!(
        sb.run(&["plugin", "install", "guard@team", "-y"]).code,
        Some(0)
    );
    assert_eq!(sb.run(&["plugin", "disable", "guard@team"]).code, Some(0));
    sb.write(
        "project/.claude/settings.json",
        &json!({"enabledPlugins": {"guard@team": true, "missing@team": true}}).to_string(),
    );
    // Trusted (as the sandbox's project is): the settings turn it on, and say what is missing.
    let hooks = sb.run(&["hooks", "--json"]).json();
    assert_eq!(hooks["hooks"][0]["event"], "PreToolUse", "{hooks}");
    let listed = sb.run(&["plugin", "list", "--json"]).json();
    assert_eq!(listed["plugins"][0]["enabled"], true);
    assert!(
        listed["notices"]
            .to_string()
            .contains("`missing@team`, which is not installed"),
        "{listed}"
    );
    // Not trusted: the repository's wish is withheld.
    let untrusted = sb
        .agentry(&["hooks", "--json"])
        .env("AGENTRY_TRUST", "0")
        .output()
        .unwrap();
    let hooks: Value = serde_json::from_slice(&untrusted.stdout).unwrap();
    assert_eq!(hooks["hooks"], json!([]), "{hooks}");
}

#[test]
fn a_plugins_command_sub_agent_and_skill_are_the_agents_own() {
    let sb = sandbox();
    let market = marketplace(&sb);
    let plugin = market.join("plugins/guard");
    write(
        &plugin.join("commands/deploy.md"),
        "---\ndescription: Deploy a service\nargument-hint: SERVICE ENV\n---\nDeploy $0 to $1, carefully.\n",
    );
    write(
        &plugin.join("agents/reviewer.md"),
        "---\nname: reviewer\ndescription: Reviews changes.\n---\nYou review changes for the guard team.\n",
    );
    write(
        &plugin.join("skills/lint/SKILL.md"),
        "---\nname: lint\ndescription: Lints the code.\n---\nRun the team's linter before committing.\n",
    );
    assert_eq!(
        sb.run(&["plugin", "marketplace", "add", market.to_str().unwrap()])
            .code,
        Some(0)
    );
    let done = sb.run(&["plugin", "install", "guard@team", "--yes"]);
    assert_eq!(done.code, Some(0), "{done:?}");
    for shown in ["agents: guard:reviewer", "skills: lint"] {
        assert!(done.stdout.contains(shown), "{shown} in {}", done.stdout);
    }
    let commands = sb.run(&["commands", "--json"]).json();
    let deploy = commands
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "deploy")
        .unwrap_or_else(|| panic!("{commands}"));
    assert_eq!(deploy["origin"], "plugin command");
    assert_eq!(deploy["description"], "Deploy a service");

    let model = MockModelServer::start_blocking([
        MockTurn::Reply(MockReply::tool_call(
            "c1",
            "Skill",
            json!({"skill": "guard:lint"}),
        )),
        MockTurn::Reply(MockReply::tool_call(
            "c2",
            "Agent",
            json!({"description": "Review", "prompt": "Review the diff", "subagent_type": "guard:reviewer"}),
        )),
        MockTurn::Reply(MockReply::text("Looks fine.")),
        MockTurn::Reply(MockReply::text("Deployed.")),
    ]);
    let out = run_openai(
        &sb,
        &model,
        &[
            "--allow",
            "Skill",
            "--allow",
            "Agent",
            "/deploy api staging",
        ],
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    let requests = model.requests();
    let first = requests[0].body["messages"].to_string();
    assert!(
        first.contains("Deploy api to staging, carefully."),
        "{first}"
    );
    assert!(
        tool_result_in(&model, 1).contains("Run the team's linter before committing."),
        "the plugin's skill loads"
    );
    let sub_agent = requests[2].body["messages"].to_string();
    assert!(
        sub_agent.contains("You review changes for the guard team."),
        "the plugin's sub-agent runs with its own prompt: {sub_agent}"
    );
}

#[test]
fn the_terminals_plugin_command_adds_a_marketplace_shows_a_plugin_and_installs_it_when_told() {
    let sb = sandbox();
    let market = marketplace(&sb);
    let server = MockModelServer::start_blocking([]);
    let tmux = crate::tui::chat(&sb, &server, &[], &[]);
    let say = |line: &str| {
        tmux.type_text(line);
        tmux.keys(&["Enter"]);
    };
    say(&format!("/plugin marketplace add {}", market.display()));
    tmux.wait_for_text("Added the marketplace team (1 plugins)");
    say("/plugin install guard@team");
    let shown = tmux.wait_for_text("/plugin install guard@team --yes installs it.");
    assert!(shown.contains("PreToolUse [command]"), "{shown}");
    assert!(installed(&sb).is_empty(), "shown, not installed");
    say("/plugin install guard@team --yes");
    tmux.wait_for_text("Installed guard@team 1.0.0");
    say("/plugin");
    tmux.wait_for_text("guard@team 1.0.0 · on");
    assert_eq!(installed(&sb)[0]["id"], "guard@team");
}
