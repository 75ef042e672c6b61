//! Logging in to an MCP server behind OAuth through the binary: the server is one of the MCP
//! conformance suite's authorization scenarios, run on its own (its authorization server
//! approves at once), and `$BROWSER` is a headless stand-in that follows the redirects to
//! agentry's loopback callback, as the suite's reference clients are tested.

use crate::sandbox;
use agentry_tests::peers;
use agentry_tests::servers::SecretService;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

/// A scenario server of the conformance suite, stopped when dropped.
struct ScenarioServer {
    child: Child,
    url: String,
}

impl ScenarioServer {
    /// Starts `scenario`'s server and reads its address.
    fn start(scenario: &str) -> Self {
        let (node, suite, _) = peers::mcp_conformance();
        let mut child = Command::new(node)
            .args(suite)
            .args(["client", "--scenario", scenario])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = BufReader::new(child.stderr.take().unwrap());
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let (found, lines) = std::sync::mpsc::channel();
        for reader in [
            Box::new(stderr) as Box<dyn BufRead + Send>,
            Box::new(stdout),
        ] {
            let found = found.clone();
            std::thread::spawn(move || {
                for line in reader.lines().map_while(Result::ok) {
                    if let Some(url) = line.strip_prefix("Server URL: ") {
                        let _ = found.send(url.trim().to_owned());
                    }
                }
            });
        }
        let url = lines
            .recv_timeout(std::time::Duration::from_secs(30))
            .expect("the scenario server's address");
        Self { child, url }
    }
}

impl Drop for ScenarioServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `agentry mcp list --json ARGS`'s row for the server `docs` (with `env` added to the
/// sandbox's).
fn listed(sb: &agentry_tests::Sandbox, args: &[&str], env: &[(&str, &str)]) -> Value {
    let command: Vec<&str> = ["mcp", "list", "--json"]
        .into_iter()
        .chain(args.iter().copied())
        .collect();
    let out = sb.run_with_env(&command, env);
    assert_eq!(out.code, Some(0), "{out:?}");
    let rows: Value = serde_json::from_str(&out.stdout).unwrap();
    rows.as_array()
        .unwrap()
        .iter()
        .find(|row| row["name"] == "docs")
        .cloned()
        .unwrap()
}

/// Runs `agentry mcp login docs ARGS` with the headless browser (and `env`): it must log in,
/// saying so, the authorization address printed on standard error.
fn logs_in(sb: &agentry_tests::Sandbox, args: &[&str], env: &[(&str, &str)]) {
    let browser = peers::headless_browser();
    let command: Vec<&str> = ["mcp", "login", "docs"]
        .into_iter()
        .chain(args.iter().copied())
        .collect();
    let env: Vec<(&str, &str)> = env
        .iter()
        .copied()
        .chain([("BROWSER", browser.as_str())])
        .collect();
    let login = sb.run_with_env(&command, &env);
    assert_eq!(login.code, Some(0), "{login:?}");
    assert!(
        login.stdout.contains("Logged in to MCP server `docs`"),
        "{login:?}"
    );
    assert!(
        login.stderr.contains("Open this address to log in:"),
        "{login:?}"
    );
}

/// A sandbox whose project configures `docs`, a scenario server behind OAuth.
fn with_docs_behind_oauth() -> (agentry_tests::Sandbox, ScenarioServer) {
    docs_behind_oauth_in(sandbox(), "auth/metadata-default")
}

/// `sb`, its project configuring `docs`, the server of `scenario` (one behind OAuth).
fn docs_behind_oauth_in(
    sb: agentry_tests::Sandbox,
    scenario: &str,
) -> (agentry_tests::Sandbox, ScenarioServer) {
    let server = ScenarioServer::start(scenario);
    sb.write(
        "project/.mcp.json",
        &json!({"mcpServers": {"docs": {"type": "http", "url": server.url}}}).to_string(),
    );
    (sb, server)
}

/// Asks the terminal's `/mcp` (every half second, for at most 30 s) until its screen shows
/// what `wanted` looks for; the servers start and log in in the background.
fn mcp_shows(tmux: &agentry_tests::tmux::Tmux, wanted: &dyn Fn(&str) -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        tmux.type_text("/mcp");
        tmux.keys(&["Enter"]);
        std::thread::sleep(std::time::Duration::from_millis(500));
        let screen = tmux.screen();
        if wanted(&screen) {
            return;
        }
        assert!(std::time::Instant::now() < deadline, "{screen}");
    }
}

#[test]
fn a_server_behind_oauth_needs_login_then_logs_in_and_out() {
    let (sb, server) = with_docs_behind_oauth();
    let before = listed(&sb, &[], &[]);
    assert_eq!(before["status"], "needs login", "{before}");
    assert_eq!(before["how"], "run `agentry mcp login docs`");

    logs_in(&sb, &[], &[]);
    let tokens = sb.project().join("../data/mcp-auth/docs.json");
    let kept: Value = serde_json::from_str(&std::fs::read_to_string(&tokens).unwrap()).unwrap();
    assert_eq!(kept["url"], server.url.as_str());
    assert!(
        kept["credentials"]["token_response"]["access_token"].is_string(),
        "{kept}"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&tokens).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "the tokens are the user's alone");
    }

    let after = listed(&sb, &[], &[]);
    assert_eq!(after["status"], "connected", "{after}");
    assert!(after["tools"].as_u64().unwrap() > 0, "{after}");

    let logout = sb.run(&["mcp", "logout", "docs"]);
    assert_eq!(logout.code, Some(0), "{logout:?}");
    assert!(!tokens.exists());
    assert_eq!(listed(&sb, &[], &[])["status"], "needs login");
    let again = sb.run(&["mcp", "logout", "docs"]);
    assert!(again.stdout.contains("was not logged in to"), "{again:?}");
}

#[test]
fn a_server_whose_authorization_server_moved_needs_login_and_a_new_login_registers_there() {
    // The server takes the first authorization server's token once, then names a second
    // authorization server and takes only its tokens (the suite's server-migration scenario).
    let (sb, _server) = docs_behind_oauth_in(sandbox(), "auth/authorization-server-migration");
    logs_in(&sb, &[], &[]);
    let tokens = sb.project().join("../data/mcp-auth/docs.json");
    let first = std::fs::read_to_string(&tokens).unwrap();
    let moved = listed(&sb, &[], &[]);
    assert_eq!(moved["status"], "needs login", "{moved}");
    assert_eq!(moved["how"], "run `agentry mcp login docs`");

    logs_in(&sb, &[], &[]);
    let second: Value = serde_json::from_str(&std::fs::read_to_string(&tokens).unwrap()).unwrap();
    let token = second["credentials"]["token_response"]["access_token"].as_str();
    assert!(
        token.is_some_and(|t| t.starts_with("test-token-as2-")),
        "a token of the new authorization server: {second}"
    );
    assert_eq!(
        second["credentials"]["client_id"], "as2-client-id",
        "{second}"
    );
    assert!(first.contains("as1-client-id"), "{first}");
    let after = listed(&sb, &[], &[]);
    assert_eq!(after["status"], "connected", "{after}");
    assert!(after["tools"].as_u64().unwrap() > 0, "{after}");
}

#[test]
fn with_a_system_keyring_the_tokens_are_kept_there_and_the_file_holds_none() {
    let keyring = SecretService::start();
    let (sb, server) = with_docs_behind_oauth();
    let env = [("DBUS_SESSION_BUS_ADDRESS", keyring.address())];
    logs_in(&sb, &[], &env);

    let record = sb.project().join("../data/mcp-auth/docs.json");
    let text = std::fs::read_to_string(&record).unwrap();
    let kept: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(kept["url"], server.url.as_str());
    assert_eq!(kept["in_keyring"], true, "{kept}");
    assert!(
        !text.contains("token"),
        "no token is written to the file: {text}"
    );
    let entry = [("service", "agentry-mcp"), ("username", "docs")];
    let secret = keyring.lookup(&entry).expect("the tokens in the keyring");
    let secret: Value = serde_json::from_str(&secret).unwrap();
    assert!(
        secret["token_response"]["access_token"].is_string(),
        "{secret}"
    );

    // A connection reads them from the keyring.
    let connected = listed(&sb, &[], &env);
    assert_eq!(connected["status"], "connected", "{connected}");
    assert!(connected["tools"].as_u64().unwrap() > 0, "{connected}");

    let logout = sb.run_with_env(&["mcp", "logout", "docs"], &env);
    assert_eq!(logout.code, Some(0), "{logout:?}");
    assert!(!record.exists());
    assert_eq!(keyring.lookup(&entry), None, "removed from the keyring too");
    assert_eq!(listed(&sb, &[], &env)["status"], "needs login");
}

#[test]
fn the_thin_agentry_logs_in_through_the_mcp_clients_plugin() {
    let (sb, _server) = docs_behind_oauth_in(crate::loading::thin(), "auth/metadata-default");
    let flags = crate::loading::plugin_flags();
    let flags = crate::loading::as_strs(&flags);
    let with_flags = |command: &[&'static str]| -> Vec<&str> {
        command
            .iter()
            .copied()
            .chain(flags.iter().copied())
            .collect()
    };
    assert_eq!(listed(&sb, &flags, &[])["status"], "needs login");
    logs_in(&sb, &flags, &[]);
    let after = listed(&sb, &flags, &[]);
    assert_eq!(after["status"], "connected", "{after}");
    assert!(after["tools"].as_u64().unwrap() > 0, "{after}");
    let logout = sb.run(&with_flags(&["mcp", "logout", "docs"]));
    assert!(
        logout.stdout.contains("Logged out of MCP server `docs`"),
        "{logout:?}"
    );
    assert_eq!(listed(&sb, &flags, &[])["status"], "needs login");

    let without_plugin = sb.run(&["mcp", "login", "docs"]);
    assert_ne!(without_plugin.code, Some(0));
    assert!(
        without_plugin
            .stderr
            .contains("links no MCP client: load its plugin"),
        "{without_plugin:?}"
    );
}

#[test]
fn login_is_refused_for_a_server_that_is_not_configured_or_runs_as_a_command() {
    let sb = sandbox();
    sb.write(
        "project/.mcp.json",
        &json!({"mcpServers": {"local": {"command": "true"}}}).to_string(),
    );
    let missing = sb.run(&["mcp", "login", "docs"]);
    assert_ne!(missing.code, Some(0));
    assert!(
        missing.stderr.contains("there is no MCP server `docs`"),
        "{missing:?}"
    );
    let command = sb.run(&["mcp", "login", "local"]);
    assert_ne!(command.code, Some(0));
    assert!(
        command
            .stderr
            .contains("only a server reached over HTTP logs in"),
        "{command:?}"
    );
}

#[test]
fn the_terminals_mcp_command_shows_a_server_that_needs_login_which_connects_once_logged_in() {
    let sb = sandbox();
    let server = ScenarioServer::start("auth/metadata-default");
    let (command, args) = peers::everything_server();
    sb.write(
        "project/.mcp.json",
        &json!({"mcpServers": {
            "docs": {"type": "http", "url": server.url},
            "everything": {"command": command, "args": args},
        }})
        .to_string(),
    );
    let model = agentry_tests::mock_model::MockModelServer::start_blocking([]);
    let tmux = crate::tui::chat(&sb, &model, &[], &[]);
    // The last answer's row for `server`.
    let row = |screen: &str, server: &str| {
        let row = screen
            .lines()
            .rev()
            .find(|line| line.trim_start().starts_with(&format!("{server}  ")));
        row.map(str::to_owned).unwrap_or_default()
    };
    let has_tools = |row: String| row.trim_end().ends_with(" tools") && !row.contains("  0 tools");
    mcp_shows(&tmux, &|screen| {
        row(screen, "docs").contains("needs login: run `agentry mcp login docs`")
            && screen.contains("or here: /mcp login docs")
            && has_tools(row(screen, "everything"))
    });
    // Logged in from another terminal: the running chat's server connects by itself.
    let browser = peers::headless_browser();
    let login = sb.run_with_env(&["mcp", "login", "docs"], &[("BROWSER", &browser)]);
    assert_eq!(login.code, Some(0), "{login:?}");
    mcp_shows(&tmux, &|screen| {
        has_tools(row(screen, "docs")) && screen.contains("test-tool")
    });
}

#[test]
fn the_terminal_logs_in_to_a_server_that_needs_it() {
    let (sb, _server) = with_docs_behind_oauth();
    terminal_logs_in(&sb, &[]);
}

#[test]
fn the_thin_agentrys_terminal_logs_in_with_the_plugins_it_loaded() {
    let (sb, _server) = docs_behind_oauth_in(crate::loading::thin(), "auth/metadata-default");
    let flags = crate::loading::plugin_flags();
    terminal_logs_in(&sb, &crate::loading::as_strs(&flags));
}

/// `/mcp` offers the login of `docs`, and `/mcp login docs` logs in, in a chat of
/// `agentry ARGS`.
fn terminal_logs_in(sb: &agentry_tests::Sandbox, args: &[&str]) {
    let model = agentry_tests::mock_model::MockModelServer::start_blocking([]);
    let browser = peers::headless_browser();
    let tmux = crate::tui::chat(sb, &model, args, &[("BROWSER", &browser)]);
    mcp_shows(&tmux, &|screen| screen.contains("or here: /mcp login docs"));
    tmux.type_text("/mcp login docs");
    tmux.keys(&["Enter"]);
    tmux.wait_for_text("Logged in to MCP server `docs`");
    mcp_shows(&tmux, &|screen| screen.contains("test-tool"));
    let kept = sb.project().join("../data/mcp-auth/docs.json");
    assert!(
        kept.exists(),
        "the tokens are kept as `agentry mcp login` keeps them"
    );
}
