//! How to reach an MCP server: agentry's `[mcp_servers.NAME]` tables and the `.mcp.json`
//! `{"mcpServers": {…}}` file share one shape.

use crate::McpError;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The configuration section of the MCP servers: `[mcp_servers.NAME]`.
pub const SERVERS_SECTION: &str = "mcp_servers";

/// The configuration section of how agentry treats MCP servers: `[mcp]`.
pub const SECTION: &str = "mcp";

/// The servers of a `[mcp_servers.NAME]` section as written (TOML read as JSON), by name.
pub fn servers_from_section(
    section: Option<&serde_json::Value>,
) -> Result<BTreeMap<String, McpServerConfig>, String> {
    let Some(section) = section else {
        return Ok(BTreeMap::new());
    };
    let tables: BTreeMap<String, serde_json::Value> =
        serde_json::from_value(section.clone()).map_err(|e| format!("[{SERVERS_SECTION}]: {e}"))?;
    tables
        .into_iter()
        .map(|(name, table)| {
            serde_json::from_value(table)
                .map(|server| (name.clone(), server))
                .map_err(|e| format!("[{SERVERS_SECTION}.{name}]: {e}"))
        })
        .collect()
}

/// How agentry treats its MCP servers.
#[derive(Debug, Clone)]
pub struct McpOptions {
    /// How long a server gets to start and list what it offers.
    pub startup_timeout: Duration,
    /// How long a tool call may go without an answer or a progress notification before it is
    /// cancelled and fails; each progress notification starts the wait again.
    pub tool_timeout: Duration,
    /// How long to wait before starting a server that died; each further attempt in a row
    /// waits twice as long.
    pub restart_delay: Duration,
    /// How many attempts in a row before giving up on a server (a restart counts as one in a
    /// row when the server dies again within a minute).
    pub restart_attempts: u32,
    /// The most tokens the session's model's answer to a server's request for a message
    /// (sampling) may have (a server asking for more gets this many).
    pub sampling_max_tokens: u32,
    /// The servers whose tool annotations are trusted (`readOnlyHint` lets a tool run unasked
    /// as a read); every other server's hints can only make agentry ask more.
    pub trusted_hints: Vec<String>,
    /// Where the servers' login tokens are kept (`mcp-auth` in the host's data folder); `None`:
    /// nowhere, so a server that needs a login cannot be logged in to.
    pub token_folder: Option<PathBuf>,
    /// Where what lazy servers listed is kept (`mcp-tools` in the host's data folder); `None`:
    /// nowhere, so a lazy server starts at once, as the others do.
    pub tool_cache_folder: Option<PathBuf>,
}

impl Default for McpOptions {
    fn default() -> Self {
        Self {
            startup_timeout: Duration::from_secs(30),
            tool_timeout: Duration::from_secs(120),
            restart_delay: Duration::from_millis(500),
            restart_attempts: 5,
            sampling_max_tokens: 4096,
            trusted_hints: Vec::new(),
            token_folder: None,
            tool_cache_folder: None,
        }
    }
}

impl McpOptions {
    /// The defaults with an `[mcp]` section over them: `startup_timeout_secs` (30 by default),
    /// `tool_timeout_secs` (120), `sampling_max_tokens` (4096) and `trusted_hints` (the servers
    /// whose `readOnlyHint` lets a tool run unasked; none by default). Which servers may use
    /// the model unasked is the permission rules' to say (`Sampling(SERVER)`).
    pub fn from_section(section: Option<&serde_json::Value>) -> Result<Self, String> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Section {
            startup_timeout_secs: Option<u64>,
            tool_timeout_secs: Option<u64>,
            sampling_max_tokens: Option<u32>,
            #[serde(default)]
            trusted_hints: Vec<String>,
        }
        let defaults = Self::default();
        let Some(section) = section else {
            return Ok(defaults);
        };
        let section: Section =
            serde_json::from_value(section.clone()).map_err(|e| format!("[{SECTION}]: {e}"))?;
        Ok(Self {
            startup_timeout: section
                .startup_timeout_secs
                .map_or(defaults.startup_timeout, Duration::from_secs),
            tool_timeout: section
                .tool_timeout_secs
                .map_or(defaults.tool_timeout, Duration::from_secs),
            sampling_max_tokens: section
                .sampling_max_tokens
                .unwrap_or(defaults.sampling_max_tokens),
            trusted_hints: section.trusted_hints,
            ..defaults
        })
    }
}

/// One MCP server: a command speaking stdio, or a streamable HTTP endpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "RawServer", untagged)]
pub enum McpServerConfig {
    /// A child process speaking MCP on stdin/stdout.
    Stdio(StdioServer),
    /// A server reached over streamable HTTP.
    Http(HttpServer),
}

/// A server run as a child process.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StdioServer {
    /// The program.
    pub command: String,
    /// Its arguments.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// Environment variables added to agentry's own.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// Its working directory (relative paths are taken from the project's); the project's
    /// when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<PathBuf>,
    /// Started on first use, its tools listed meanwhile as it listed them last (see
    /// [`McpServerConfig::lazy`]).
    #[serde(default, skip_serializing_if = "is_false")]
    pub lazy: bool,
}

/// A server reached over streamable HTTP.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HttpServer {
    /// The endpoint.
    pub url: String,
    /// Headers sent with every request (`Authorization`, …).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// How agentry logs in to it when it sits behind OAuth (`agentry mcp login NAME`); it
    /// registers itself with the authorization server when this is absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oauth: Option<OAuthClient>,
    /// Reached on first use, its tools listed meanwhile as it listed them last (see
    /// [`McpServerConfig::lazy`]).
    #[serde(default, skip_serializing_if = "is_false")]
    pub lazy: bool,
}

fn is_false(value: &bool) -> bool {
    !value
}

impl McpServerConfig {
    /// Whether the server starts only when one of its tools or prompts is first used: its
    /// tools are listed meanwhile from what it listed when it last ran (kept in the data
    /// folder, and kept up to date when it says its lists changed); a server never listed
    /// before starts at once, to be listed.
    pub fn lazy(&self) -> bool {
        match self {
            McpServerConfig::Stdio(server) => server.lazy,
            McpServerConfig::Http(server) => server.lazy,
        }
    }
}

/// A client registered with a server's authorization server ahead of time, as `.mcp.json`
/// (`"oauth": {"clientId": …}`) or the TOML (`oauth = { client_id = … }`) names it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OAuthClient {
    /// The client's id.
    #[serde(default, alias = "clientId", skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
    /// Its secret, for a confidential client.
    #[serde(
        default,
        alias = "clientSecret",
        skip_serializing_if = "Option::is_none"
    )]
    pub client_secret: Option<String>,
    /// The scopes to ask for (else those the server's challenge or metadata name).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scopes: Vec<String>,
    /// The HTTPS address where the team hosts agentry's client metadata document: used as the
    /// client id with an authorization server that accepts such documents (instead of
    /// registering agentry with it).
    #[serde(
        default,
        alias = "clientMetadataUrl",
        skip_serializing_if = "Option::is_none"
    )]
    pub client_metadata_url: Option<String>,
}

/// Every field either shape may have, checked into one of them (for a clear error instead of
/// "did not match any variant").
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawServer {
    #[serde(rename = "type")]
    transport: Option<String>,
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    cwd: Option<PathBuf>,
    url: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    oauth: Option<OAuthClient>,
    #[serde(default)]
    lazy: bool,
}

impl TryFrom<RawServer> for McpServerConfig {
    type Error = String;

    fn try_from(raw: RawServer) -> Result<Self, String> {
        match raw.transport.as_deref() {
            None | Some("stdio" | "http" | "streamable-http" | "streamableHttp") => {}
            Some("sse") => {
                return Err("`type = \"sse\"` is the old HTTP+SSE transport, which agentry does not speak: use the server's streamable HTTP endpoint (`type = \"http\"`)".to_owned());
            }
            Some(other) => {
                return Err(format!(
                    "unknown server type `{other}` (use `stdio` or `http`)"
                ));
            }
        }
        match (raw.command, raw.url) {
            (Some(command), None) => Ok(McpServerConfig::Stdio(StdioServer {
                command,
                args: raw.args,
                env: raw.env,
                cwd: raw.cwd,
                lazy: raw.lazy,
            })),
            (None, Some(url)) => Ok(McpServerConfig::Http(HttpServer {
                url,
                headers: raw.headers,
                oauth: raw.oauth,
                lazy: raw.lazy,
            })),
            (Some(_), Some(_)) => Err(
                "a server has either `command` (stdio) or `url` (streamable HTTP), not both"
                    .to_owned(),
            ),
            (None, None) => {
                Err("a server needs `command` (stdio) or `url` (streamable HTTP)".to_owned())
            }
        }
    }
}

/// The servers configured for `project`: its `.mcp.json`, then the `[mcp_servers]` section,
/// which wins on a shared name.
pub fn configured_servers(
    project: &Path,
    section: Option<&serde_json::Value>,
) -> Result<BTreeMap<String, McpServerConfig>, String> {
    let mut servers = read_mcp_json(&project.join(".mcp.json")).map_err(|e| e.to_string())?;
    servers.extend(servers_from_section(section)?);
    Ok(servers)
}

/// The servers of a `.mcp.json` file (`{"mcpServers": {"NAME": {…}}}`); an absent file has
/// none.
pub fn read_mcp_json(path: &Path) -> Result<BTreeMap<String, McpServerConfig>, McpError> {
    let config_error = |message: String| McpError::Config {
        path: path.to_path_buf(),
        message,
    };
    match agentry_plugin::paths::read_regular_file(path, MAX_MCP_JSON_BYTES) {
        Ok(Some(text)) => parse_mcp_json(&text).map_err(config_error),
        Ok(None) => Ok(BTreeMap::new()),
        Err(error) => Err(config_error(error.to_string())),
    }
}

/// The most bytes a `.mcp.json` may hold.
const MAX_MCP_JSON_BYTES: u64 = 1024 * 1024;

/// The servers of a `.mcp.json` file's text, or why it is not one.
pub fn parse_mcp_json(text: &str) -> Result<BTreeMap<String, McpServerConfig>, String> {
    #[derive(Deserialize)]
    struct File {
        #[serde(rename = "mcpServers", default)]
        servers: BTreeMap<String, McpServerConfig>,
    }
    serde_json::from_str::<File>(text)
        .map(|file| file.servers)
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mcp_section_sets_timeouts_and_refuses_unknown_keys() {
        let options =
            McpOptions::from_section(Some(&serde_json::json!({"tool_timeout_secs": 30}))).unwrap();
        assert_eq!(options.tool_timeout, Duration::from_secs(30));
        assert_eq!(
            options.startup_timeout,
            McpOptions::default().startup_timeout
        );
        let error = McpOptions::from_section(Some(&serde_json::json!({"startup": 1}))).unwrap_err();
        assert!(
            error.starts_with("[mcp]: unknown field `startup`"),
            "{error}"
        );
    }

    #[test]
    fn a_server_table_that_is_neither_shape_names_the_server() {
        let section = serde_json::json!({"ok": {"command": "srv"}, "bad": {"command": "x", "url": "http://127.0.0.1"}});
        let error = servers_from_section(Some(&section)).unwrap_err();
        assert!(error.starts_with("[mcp_servers.bad]:"), "{error}");
        let one = serde_json::json!({"ok": {"command": "srv"}});
        assert_eq!(servers_from_section(Some(&one)).unwrap().len(), 1);
    }
    use serde_json::json;

    fn parse(value: serde_json::Value) -> Result<McpServerConfig, String> {
        serde_json::from_value(value).map_err(|e| e.to_string())
    }

    #[test]
    fn both_shapes_parse_with_or_without_a_type() {
        let stdio = parse(json!({"command": "node", "args": ["server.js"], "env": {"A": "1"}}));
        assert_eq!(
            stdio,
            Ok(McpServerConfig::Stdio(StdioServer {
                command: "node".into(),
                args: vec!["server.js".into()],
                env: BTreeMap::from([("A".into(), "1".into())]),
                cwd: None,
                lazy: false,
            }))
        );
        assert_eq!(
            parse(json!({"type": "stdio", "command": "node"})),
            parse(json!({"command": "node"}))
        );
        let http = parse(
            json!({"type": "http", "url": "http://127.0.0.1:1/mcp", "headers": {"Authorization": "Bearer x"}}),
        );
        assert!(
            matches!(http, Ok(McpServerConfig::Http(HttpServer { ref url, ref headers, .. })) if url.ends_with("/mcp") && headers.len() == 1)
        );
    }

    #[test]
    fn bad_entries_say_what_is_wrong() {
        let error = |value| parse(value).unwrap_err();
        assert!(error(json!({"args": []})).contains("needs `command`"));
        assert!(error(json!({"command": "a", "url": "b"})).contains("not both"));
        assert!(error(json!({"type": "sse", "url": "b"})).contains("streamable HTTP"));
        assert!(error(json!({"type": "ws", "url": "b"})).contains("unknown server type `ws`"));
        assert!(error(json!({"command": "a", "argz": []})).contains("argz"));
    }

    #[test]
    fn mcp_json_files_are_read_and_a_missing_one_is_empty() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".mcp.json");
        assert!(read_mcp_json(&path).unwrap().is_empty());
        std::fs::write(
            &path,
            r#"{"mcpServers": {"docs": {"url": "http://127.0.0.1:9/mcp"}, "fs": {"command": "fs-server"}}}"#,
        )
        .unwrap();
        let servers = read_mcp_json(&path).unwrap();
        assert_eq!(servers.keys().collect::<Vec<_>>(), ["docs", "fs"]);
        std::fs::write(&path, "{").unwrap();
        let error = read_mcp_json(&path).unwrap_err().to_string();
        assert!(error.contains(".mcp.json"), "{error}");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

        /// Any text is a set of servers or an error (the fuzz target `mcp_json` runs the same
        /// at length); the servers read are written back as they came.
        #[test]
        fn any_mcp_json_is_servers_or_an_error(
            text in proptest::prelude::prop_oneof![
                ".*",
                r#"\{"mcpServers": \{"[a-z]{1,5}": \{"(command|url|args|env|headers|cwd|type)": "[a-z:/.]{0,12}"\}\}\}"#,
            ]
        ) {
            if let Ok(servers) = parse_mcp_json(&text) {
                let written = serde_json::json!({"mcpServers": servers}).to_string();
                proptest::prop_assert_eq!(parse_mcp_json(&written), Ok(servers));
            }
        }
    }
}
