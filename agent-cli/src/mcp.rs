//! `agentry mcp list | add | remove | login | logout | serve`: the MCP servers agentry uses,
//! and agentry as one. `add` and `remove` edit the TOML configuration in place (comments and
//! layout kept); `list` starts every server to show whether it works and what it offers;
//! `login` and `logout` keep and forget a server's OAuth tokens; `serve` offers agentry's
//! prompt templates and the agent itself over MCP.

use crate::cli::{ConfigScope, McpAddArgs, McpArgs, McpCommand, McpServeArgs};
use crate::exit::{CliError, Exit};
use crate::providers::ServerStart;
use agentry::provider::{ProviderOrigin, ProviderStatus};
use agentry_mcp_server::{RunSettings, ServeSettings};
use agentry_stock::config::Config;
use anyhow::{Context, anyhow};
use serde_json::json;
use std::path::{Path, PathBuf};
use toml_edit::{DocumentMut, InlineTable, Item, Table, value};

/// Runs an `agentry mcp` subcommand.
pub async fn mcp(args: McpArgs) -> Result<Exit, CliError> {
    let project = std::env::current_dir().map_err(CliError::internal)?;
    match args.command {
        McpCommand::List { json, plugin } => list(&project, json, &plugin).await,
        McpCommand::Add(add) => {
            let file = config_file(add.scope, &project)?;
            edit(&file, |document| add_server(document, &add))?;
            println!("Added MCP server `{}` to {}", add.name, file.display());
            Ok(Exit::EndTurn)
        }
        McpCommand::Remove { name, scope } => {
            let file = config_file(scope, &project)?;
            edit(&file, |document| remove_server(document, &name, &project))?;
            println!("Removed MCP server `{name}` from {}", file.display());
            Ok(Exit::EndTurn)
        }
        McpCommand::Login { name, plugin } => login(&project, &name, &plugin).await,
        McpCommand::Logout { name, plugin } => logout(&project, &name, &plugin).await,
        McpCommand::Serve(args) => serve(&project, args).await,
    }
}

/// `agentry mcp login NAME`: the login the server's provider offers (the MCP client's, linked
/// or from a plugin).
async fn login(project: &Path, name: &str, plugins: &[PathBuf]) -> Result<Exit, CliError> {
    server_login(project, name, plugins)
        .await?
        .log_in()
        .await
        .map_err(|e| CliError::usage(anyhow!(e)))?;
    println!("Logged in to MCP server `{name}`");
    Ok(Exit::EndTurn)
}

/// `agentry mcp logout NAME`.
async fn logout(project: &Path, name: &str, plugins: &[PathBuf]) -> Result<Exit, CliError> {
    let login = server_login(project, name, plugins).await?;
    match login
        .log_out()
        .await
        .map_err(|e| CliError::usage(anyhow!(e)))?
    {
        true => println!("Logged out of MCP server `{name}`"),
        false => println!("MCP server `{name}` was not logged in to"),
    }
    Ok(Exit::EndTurn)
}

/// The login of the configured server `name`, which must be reached over HTTP (only those
/// log in). The servers start in the background: one that needs the login cannot answer yet.
async fn server_login(
    project: &Path,
    name: &str,
    plugin_flags: &[PathBuf],
) -> Result<std::sync::Arc<dyn agentry::provider::Login>, CliError> {
    let config = crate::config::load_config(project)?;
    let plugins = crate::providers::plugin_paths(&config, plugin_flags, project);
    let available =
        crate::providers::available(&config, &plugins, project, ServerStart::Background).await;
    available.check_sections()?;
    available.check_named_plugins()?;
    let server = available.providers.iter().find(|provider| {
        matches!(provider.origin(), ProviderOrigin::McpServer { server } if server == name)
    });
    match server {
        Some(server) => server.login().ok_or_else(|| {
            CliError::usage(anyhow!(
                "MCP server `{name}` runs as a command: only a server reached over HTTP logs in"
            ))
        }),
        None => Err(CliError::usage(anyhow!(
            "there is no MCP server `{name}` (see `agentry mcp list`){}",
            if cfg!(feature = "mcp") {
                ""
            } else {
                "; this agentry links no MCP client: load its plugin (--plugin PATH, or a plugins folder)"
            }
        ))),
    }
}

/// `agentry mcp serve`: the prompt templates, and the agent as `agentry_run`. Without a usable
/// model the prompts are still served; `agentry_run` then says what is missing.
async fn serve(project: &Path, args: McpServeArgs) -> Result<Exit, CliError> {
    let config = crate::config::load_config(project)?;
    let policy = crate::assemble::policy(&config, &args.agent, project)?;
    let agent = match crate::assemble::model(&config, &args.agent) {
        Ok(model) => {
            let start = ServerStart::Background;
            Ok(crate::assemble::agent(&config, &args.agent, project, model, start, None).await?)
        }
        Err(problem) => Err(problem.to_string()),
    };
    let settings = ServeSettings {
        folders: crate::assemble::prompt_folders(project),
        page_size: usize::from(args.page_size),
        run: RunSettings {
            agent,
            policy,
            cwd: project.to_path_buf(),
        },
    };
    let served = match args.listen {
        None => agentry_mcp_server::serve_stdio(settings).await,
        Some(address) => {
            let listener = tokio::net::TcpListener::bind(&address)
                .await
                .with_context(|| format!("cannot listen on {address}"))
                .map_err(CliError::usage)?;
            let bound = listener.local_addr().map_err(CliError::internal)?;
            let admission =
                crate::access::admission(&args.access, bound, &[], &config.data_folder())?;
            // The endpoint, alone on stdout, for whoever started the server; the token on
            // standard error.
            println!("http://{bound}/mcp");
            if let Some(token) = admission.token() {
                eprintln!("agentry mcp serve: clients must send `Authorization: Bearer {token}`");
            }
            agentry_mcp_server::serve_http(listener, settings, admission).await
        }
    };
    served
        .context("the MCP connection failed")
        .map_err(CliError::internal)?;
    Ok(Exit::EndTurn)
}

/// The configuration file of a scope.
fn config_file(scope: ConfigScope, project: &Path) -> Result<PathBuf, CliError> {
    match scope {
        ConfigScope::Project => Ok(project.join(".agentry").join("config.toml")),
        ConfigScope::User => dirs::config_dir()
            .map(|dir| dir.join("agentry").join("config.toml"))
            .ok_or_else(|| CliError::usage(anyhow!("there is no user configuration folder"))),
    }
}

/// Applies `change` to a configuration file (created if missing), keeping everything else as
/// written, and checks the result is a valid configuration before writing it.
fn edit(
    file: &Path,
    change: impl FnOnce(&mut DocumentMut) -> anyhow::Result<()>,
) -> Result<(), CliError> {
    let text = match std::fs::read_to_string(file) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => {
            return Err(CliError::usage(
                anyhow!(e).context(format!("cannot read {}", file.display())),
            ));
        }
    };
    let mut document: DocumentMut = text
        .parse()
        .with_context(|| format!("{} is not valid TOML", file.display()))
        .map_err(CliError::usage)?;
    change(&mut document).map_err(CliError::usage)?;
    let edited = document.to_string();
    toml::from_str::<Config>(&edited)
        .with_context(|| format!("the change would make {} invalid", file.display()))
        .map_err(CliError::usage)?;
    if let Some(folder) = file.parent() {
        std::fs::create_dir_all(folder).map_err(CliError::internal)?;
    }
    std::fs::write(file, edited).map_err(CliError::internal)
}

/// `NAME=value` / `Name: value` pairs, for an inline table.
fn pairs(items: &[String], separator: char, what: &str) -> anyhow::Result<InlineTable> {
    let mut table = InlineTable::new();
    for item in items {
        let (key, val) = item
            .split_once(separator)
            .ok_or_else(|| anyhow!("{what} `{item}` is not `NAME{separator}value`"))?;
        table.insert(key.trim(), val.trim().into());
    }
    Ok(table)
}

fn add_server(document: &mut DocumentMut, add: &McpAddArgs) -> anyhow::Result<()> {
    let servers = document
        .entry("mcp_servers")
        .or_insert_with(|| {
            let mut table = Table::new();
            table.set_implicit(true);
            Item::Table(table)
        })
        .as_table_mut()
        .ok_or_else(|| anyhow!("`mcp_servers` is not a table"))?;
    if servers.contains_key(&add.name) {
        return Err(anyhow!(
            "an MCP server named `{}` is configured already: remove it first",
            add.name
        ));
    }
    let mut server = Table::new();
    match (&add.url, add.command.split_first()) {
        (Some(url), None) => {
            server.insert("url", value(url.as_str()));
            if !add.headers.is_empty() {
                server.insert("headers", value(pairs(&add.headers, ':', "header")?));
            }
        }
        (None, Some((command, args))) => {
            server.insert("command", value(command.as_str()));
            if !args.is_empty() {
                server.insert(
                    "args",
                    value(
                        args.iter()
                            .map(String::as_str)
                            .collect::<toml_edit::Array>(),
                    ),
                );
            }
            if !add.env.is_empty() {
                server.insert("env", value(pairs(&add.env, '=', "environment variable")?));
            }
        }
        (Some(_), Some(_)) => {
            return Err(anyhow!(
                "give either --url or a command after `--`, not both"
            ));
        }
        (None, None) => {
            return Err(anyhow!(
                "give the server's command after `--` (agentry mcp add NAME -- npx -y some-server) or its --url"
            ));
        }
    }
    servers.insert(&add.name, Item::Table(server));
    Ok(())
}

fn remove_server(document: &mut DocumentMut, name: &str, project: &Path) -> anyhow::Result<()> {
    let removed = document
        .get_mut("mcp_servers")
        .and_then(Item::as_table_mut)
        .and_then(|servers| servers.remove(name));
    if removed.is_some() {
        return Ok(());
    }
    Err(if in_mcp_json(&project.join(".mcp.json"), name) {
        anyhow!("`{name}` comes from the project's .mcp.json: edit that file to remove it")
    } else {
        anyhow!("there is no MCP server named `{name}` in this configuration file")
    })
}

/// Whether the `.mcp.json` file at `path` names a server `name` (the MCP client reads the file;
/// here only its names count).
fn in_mcp_json(path: &Path, name: &str) -> bool {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
        .is_some_and(|file| file["mcpServers"].get(name).is_some())
}

/// Starts every configured server (waiting for each to answer or fail) and lists how each is
/// doing and what it offers. The servers are the MCP client's, linked or from a plugin.
async fn list(project: &Path, as_json: bool, plugin_flags: &[PathBuf]) -> Result<Exit, CliError> {
    let config = crate::config::load_config(project)?;
    let plugins = crate::providers::plugin_paths(&config, plugin_flags, project);
    let available =
        crate::providers::available(&config, &plugins, project, ServerStart::Wait).await;
    available.check_sections()?;
    available.check_named_plugins()?;
    let rows: Vec<serde_json::Value> = available
        .providers
        .iter()
        .filter(|provider| matches!(provider.origin(), ProviderOrigin::McpServer { .. }))
        .map(|server| match server.status() {
            ProviderStatus::Ready => {
                let prompts: Vec<String> = server
                    .commands()
                    .map(|source| source.commands())
                    .into_iter()
                    .flatten()
                    .map(|prompt| prompt.name().to_owned())
                    .collect();
                json!({"name": server.name(), "status": "connected",
                       "tools": server.tools().len(), "prompts": prompts})
            }
            ProviderStatus::Failed { reason } => {
                json!({"name": server.name(), "status": "failed", "error": reason})
            }
            ProviderStatus::NeedsLogin { how } => {
                json!({"name": server.name(), "status": "needs login", "how": how})
            }
            other => json!({"name": server.name(), "status": other.to_string()}),
        })
        .collect();
    if as_json {
        println!("{}", serde_json::Value::Array(rows));
        return Ok(Exit::EndTurn);
    }
    if rows.is_empty() {
        println!("No MCP servers are configured (agentry mcp add NAME -- COMMAND ARGS…).");
    }
    for row in &rows {
        let name = row["name"].as_str().unwrap_or_default();
        match row["status"].as_str() {
            Some("connected") => {
                let prompts: Vec<String> = row["prompts"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|p| p.as_str())
                    .map(|p| format!("/{p}"))
                    .collect();
                println!(
                    "{name}: connected — {} tools, {} prompts{}{}",
                    row["tools"],
                    prompts.len(),
                    if prompts.is_empty() { "" } else { ": " },
                    prompts.join(" ")
                );
            }
            Some("failed") => println!(
                "{name}: failed — {}",
                row["error"].as_str().unwrap_or_default()
            ),
            Some("needs login") => println!(
                "{name}: needs login — {}",
                row["how"].as_str().unwrap_or_default()
            ),
            status => println!("{name}: {}", status.unwrap_or_default()),
        }
    }
    Ok(Exit::EndTurn)
}
