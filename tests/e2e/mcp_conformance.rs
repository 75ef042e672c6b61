//! agentry's MCP client against the MCP project's conformance suite
//! (`@modelcontextprotocol/conformance`, pinned in `tests/peers/package.json`): for each client
//! scenario the suite starts its scenario server on loopback and runs our driver
//! (`tests/peers/mcp-conformance-client.mjs`), which configures that server for the real
//! `agentry` and runs a chat whose model (the mock here) calls the server's tools. The suite
//! judges what the client did on the wire. Scenarios agentry cannot pass yet are listed, each
//! with its reason, in `tests/peers/mcp-conformance-expected-failures.yaml`: the suite fails a
//! run on a listed scenario that passes as well as on an unlisted one that fails.
//!
//! The suite's server scenarios that apply to `agentry mcp serve` (it serves prompt templates
//! and the `agentry_run` tool, not the suite's own test tools and resources) run against it over
//! streamable HTTP on loopback, with the project's templates.

use crate::{repository, sandbox};
use agentry_tests::mock_model::{MockModelServer, MockReply, MockTurn, Part, Stop};
use agentry_tests::peers;
use serde_json::{Value, json};
use std::process::Command;

/// The prefix of the scenario server's tools as the model sees them.
const PREFIX: &str = "mcp__conformance__";

/// The model: asked to call the tools the prompt lists (with their arguments), or every tool
/// of the server, it calls them all at once; once their results are in, it answers. An argument
/// `{"$inputSchemaOf": TOOL}` is given TOOL's input schema as the request offered it.
fn model(body: &Value) -> MockTurn {
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    if messages.iter().any(|message| message["role"] == "tool") {
        return MockTurn::Reply(MockReply::text("Done."));
    }
    let prompt = crate::user_texts(body).concat();
    let calls: Vec<(String, Value)> = match prompt.split_once("Call these tools: ") {
        Some((_, listed)) => serde_json::from_str::<Vec<Value>>(listed.trim())
            .unwrap_or_default()
            .into_iter()
            .map(|call| {
                let name = format!("{PREFIX}{}", call["name"].as_str().unwrap_or_default());
                let arguments = call.get("arguments").cloned().unwrap_or(json!({}));
                (name, with_schemas(arguments, &body["tools"]))
            })
            .collect(),
        None => body["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|tool| {
                let name = tool["function"]["name"].as_str()?;
                let arguments = arguments_for(&tool["function"]["parameters"]);
                name.starts_with(PREFIX)
                    .then(|| (name.to_owned(), arguments))
            })
            .collect(),
    };
    if calls.is_empty() {
        return MockTurn::Reply(MockReply::text("The server offers no tools."));
    }
    let parts = calls
        .into_iter()
        .enumerate()
        .map(|(i, (name, arguments))| Part::ToolCall {
            id: format!("call_{i}"),
            name,
            arguments: arguments.to_string(),
        })
        .collect();
    MockTurn::Reply(MockReply::new(parts, Stop::ToolUse))
}

/// `arguments` with each `{"$inputSchemaOf": TOOL}` replaced by the parameters `tools` (as a
/// request offers them) give TOOL.
fn with_schemas(arguments: Value, tools: &Value) -> Value {
    match arguments {
        Value::Object(map) => match map.get("$inputSchemaOf").and_then(Value::as_str) {
            Some(tool) => tools
                .as_array()
                .into_iter()
                .flatten()
                .find(|offered| offered["function"]["name"] == format!("{PREFIX}{tool}"))
                .map(|offered| offered["function"]["parameters"].clone())
                .unwrap_or(Value::Null),
            None => Value::Object(
                map.into_iter()
                    .map(|(key, value)| (key, with_schemas(value, tools)))
                    .collect(),
            ),
        },
        other => other,
    }
}

/// Arguments a tool's input schema accepts: each required property given a value of its type.
fn arguments_for(schema: &Value) -> Value {
    let required = schema["required"].as_array().cloned().unwrap_or_default();
    let arguments: serde_json::Map<String, Value> = required
        .iter()
        .filter_map(Value::as_str)
        .map(|name| {
            let value = match schema["properties"][name]["type"].as_str() {
                Some("number" | "integer") => json!(1),
                Some("boolean") => json!(true),
                Some("array") => json!([]),
                Some("object") => json!({}),
                _ => json!("test"),
            };
            (name.to_owned(), value)
        })
        .collect();
    Value::Object(arguments)
}

/// Runs the suite's client `scenario` against `agentry`, failing the test with the suite's
/// report unless it passes (or fails only as the expected-failures file says).
fn passes(scenario: &str) {
    let sb = sandbox();
    let model = MockModelServer::start_responding_blocking(Box::new(model));
    let (node, suite, client) = peers::mcp_conformance();
    let expected = repository().join("tests/peers/mcp-conformance-expected-failures.yaml");
    let results = sb.project().join("results");
    let base = format!("{}/v1", model.url());
    let output = Command::new(node)
        .args(suite)
        .args(["client", "--scenario", scenario, "--command", &client])
        .arg("--expected-failures")
        .arg(&expected)
        .arg("--output-dir")
        .arg(&results)
        .current_dir(sb.project())
        .env_clear()
        .envs(sb.environment())
        .env("AGENTRY_BIN", crate::agentry_binary())
        .env("OPENAI_API_KEY", "sk-e2e")
        .env("OPENAI_BASE_URL", &base)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "scenario {scenario}:\n{}\n{}\nagentry's output:\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
        client_output(&results)
    );
}

/// Runs the suite's server `scenario` against `agentry mcp serve --listen` on loopback, failing
/// the test with the suite's report unless it passes (or fails only as the expected-failures
/// file says).
fn serves(scenario: &str) {
    let sb = sandbox();
    crate::mcp_serve::with_templates(&sb);
    // The suite sends no token: on loopback, `--no-auth`.
    let mut server = sb.spawn(&["mcp", "serve", "--listen", "127.0.0.1:0", "--no-auth"]);
    let url = server.wait_for_line(|line| line.starts_with("http://"));
    let (node, suite, _) = peers::mcp_conformance();
    let expected = repository().join("tests/peers/mcp-conformance-expected-failures.yaml");
    let output = Command::new(node)
        .args(suite)
        .args(["server", "--url", &url, "--scenario", scenario])
        .arg("--expected-failures")
        .arg(&expected)
        .current_dir(sb.project())
        .output()
        .unwrap();
    let _ = server.child.kill();
    server.wait();
    assert!(
        output.status.success(),
        "server scenario {scenario}:\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    );
}

/// What the client wrote, as the suite saved it under `results`.
fn client_output(results: &std::path::Path) -> String {
    let runs = std::fs::read_dir(results).into_iter().flatten().flatten();
    runs.flat_map(|run| {
        ["stdout.txt", "stderr.txt"].map(|name| std::fs::read_to_string(run.path().join(name)))
    })
    .flatten()
    .collect::<Vec<_>>()
    .join("\n")
}

/// One test per server scenario that applies to `agentry mcp serve`.
macro_rules! server_scenarios {
    ($($test:ident => $scenario:literal),* $(,)?) => {
        $(
            #[test]
            fn $test() {
                serves($scenario);
            }
        )*
    };
}

server_scenarios! {
    server_initialize => "server-initialize",
    server_session_lifecycle => "server-session-lifecycle",
    server_ping => "ping",
    server_tools_list => "tools-list",
    server_prompts_list => "prompts-list",
    server_completion => "completion-complete",
    server_caching => "caching",
    server_http_header_validation => "http-header-validation",
    server_dns_rebinding_protection => "dns-rebinding-protection",
    server_sse_polling => "server-sse-polling",
    server_sse_multiple_streams => "server-sse-multiple-streams",
}

/// One test per client scenario of the 2025-06-18, 2025-11-25 and 2026-07-28 revisions (each
/// run at the newest revision it belongs to, as the suite does by default).
macro_rules! scenarios {
    ($($test:ident => $scenario:literal),* $(,)?) => {
        $(
            #[test]
            fn $test() {
                passes($scenario);
            }
        )*
    };
}

scenarios! {
    initialize => "initialize",
    tools_call => "tools_call",
    elicitation_defaults => "elicitation-sep1034-client-defaults",
    sse_retry => "sse-retry",
    json_schema_2020_12_preservation => "json-schema-2020-12-preservation",
    auth_metadata_default => "auth/metadata-default",
    auth_metadata_var1 => "auth/metadata-var1",
    auth_metadata_var2 => "auth/metadata-var2",
    auth_metadata_var3 => "auth/metadata-var3",
    auth_basic_cimd => "auth/basic-cimd",
    auth_scope_from_www_authenticate => "auth/scope-from-www-authenticate",
    auth_scope_from_scopes_supported => "auth/scope-from-scopes-supported",
    auth_scope_omitted_when_undefined => "auth/scope-omitted-when-undefined",
    auth_scope_step_up => "auth/scope-step-up",
    auth_scope_retry_limit => "auth/scope-retry-limit",
    auth_token_endpoint_auth_basic => "auth/token-endpoint-auth-basic",
    auth_token_endpoint_auth_post => "auth/token-endpoint-auth-post",
    auth_token_endpoint_auth_none => "auth/token-endpoint-auth-none",
    auth_pre_registration => "auth/pre-registration",
    auth_oauth_metadata_backcompat => "auth/2025-03-26-oauth-metadata-backcompat",
    auth_oauth_endpoint_fallback => "auth/2025-03-26-oauth-endpoint-fallback",
    request_metadata => "request-metadata",
    request_state => "sep-2322-client-request-state",
    http_standard_headers => "http-standard-headers",
    http_custom_headers => "http-custom-headers",
    http_invalid_tool_headers => "http-invalid-tool-headers",
    json_schema_ref_no_deref => "json-schema-ref-no-deref",
    auth_resource_mismatch => "auth/resource-mismatch",
    auth_offline_access_scope => "auth/offline-access-scope",
    auth_offline_access_not_supported => "auth/offline-access-not-supported",
    auth_authorization_server_migration => "auth/authorization-server-migration",
    auth_iss_supported => "auth/iss-supported",
    auth_iss_not_advertised => "auth/iss-not-advertised",
    auth_iss_supported_missing => "auth/iss-supported-missing",
    auth_iss_wrong_issuer => "auth/iss-wrong-issuer",
    auth_iss_unexpected => "auth/iss-unexpected",
    auth_iss_normalized => "auth/iss-normalized",
    auth_metadata_issuer_mismatch => "auth/metadata-issuer-mismatch",
}
