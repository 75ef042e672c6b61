//! The configuration's sections that the stock tool providers read, and the check, when the
//! configuration is loaded, that those whose mistakes would weaken or change the agent (the
//! sandbox, the task-list tools, the MCP servers) can be read.

use crate::exit::CliError;
use agentry_stock::config::Config;

/// The sections of every stock provider, whether or not this build links it: a build without
/// one reports its section as ignored rather than unknown.
pub const STOCK: &[&str] = &[
    "sandbox",
    "builtin",
    "mcp_servers",
    "mcp",
    "webfetch",
    "web_search",
    "http_tools",
];

/// Fails on a section its provider cannot read: the sandbox is not to be weakened by a typing
/// mistake, nor an MCP server or the task-list tools silently left out.
pub fn check(config: &Config) -> Result<(), CliError> {
    let section = |name: &str| config.sections.get(name);
    let checks: [Result<(), String>; 4] = [
        #[cfg(feature = "bash")]
        agentry_bash::SandboxSettings::from_section(section(agentry_bash::SECTION)).map(drop),
        #[cfg(not(feature = "bash"))]
        Ok(()),
        #[cfg(feature = "builtin")]
        agentry_builtin::BuiltinSettings::from_section(section(agentry_builtin::SECTION)).map(drop),
        #[cfg(not(feature = "builtin"))]
        Ok(()),
        #[cfg(feature = "mcp")]
        agentry_mcp::servers_from_section(section(agentry_mcp::SERVERS_SECTION)).map(drop),
        #[cfg(not(feature = "mcp"))]
        Ok(()),
        #[cfg(feature = "mcp")]
        agentry_mcp::McpOptions::from_section(section(agentry_mcp::SECTION)).map(drop),
        #[cfg(not(feature = "mcp"))]
        Ok(()),
    ];
    #[cfg(not(any(feature = "bash", feature = "builtin", feature = "mcp")))]
    let _ = section;
    checks.into_iter().try_for_each(|checked| {
        checked.map_err(|e| CliError::usage(anyhow::anyhow!("invalid configuration: {e}")))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stock_list_names_each_linked_providers_sections() {
        let linked: Vec<&str> = vec![
            #[cfg(feature = "bash")]
            agentry_bash::SECTION,
            #[cfg(feature = "builtin")]
            agentry_builtin::SECTION,
            #[cfg(feature = "mcp")]
            agentry_mcp::SERVERS_SECTION,
            #[cfg(feature = "mcp")]
            agentry_mcp::SECTION,
            #[cfg(feature = "webfetch")]
            agentry_webfetch::SECTION,
            #[cfg(feature = "search")]
            agentry_search::SECTION,
            #[cfg(feature = "http-tools")]
            agentry_http_tools::SECTION,
        ];
        for name in linked {
            assert!(STOCK.contains(&name), "{name} is not in STOCK");
        }
    }
}
