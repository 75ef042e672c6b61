//! A project's `.mcp.json`: any text is a set of MCP servers or an error.
#![no_main]

libfuzzer_sys::fuzz_target!(|text: &str| {
    let _ = agentry_mcp::parse_mcp_json(text);
});
