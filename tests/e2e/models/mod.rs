//! `agentry run` against hosted-model APIs, served by the mock model server on 127.0.0.1.

use crate::{run_openai, sandbox};
use agentry_tests::aws::SigV4Check;
use agentry_tests::mock_model::{
    MockModelServer, MockReply, MockTurn, Part, Required, Stop, gemini_call_signature,
};
use serde_json::json;

fn round_trip(first: MockReply, answer: &str) -> MockModelServer {
    MockModelServer::start_blocking([
        MockTurn::Reply(first),
        MockTurn::Reply(MockReply::text(answer)),
    ])
}

#[test]
fn openai_round_trip_through_a_tool_call() {
    let sb = sandbox();
    let server = round_trip(
        MockReply::tool_call("call_1", "Nope", json!({"x": 1})),
        "Done via OpenAI.",
    );
    let out = run_openai(&sb, &server, &["--output-format", "json", "go"]);
    assert_eq!(out.code, Some(0), "{out:?}");
    let result = out.json();
    assert_eq!(result["result"], "Done via OpenAI.");
    assert_eq!(
        result["usage"]["input_tokens"], 40,
        "two requests of 20 input tokens"
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].headers["authorization"], "Bearer sk-e2e");
    assert_eq!(requests[0].body["model"], "gpt-4.1");
    let tool_message = &requests[1].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(tool_message["role"], "tool");
    assert_eq!(tool_message["tool_call_id"], "call_1");
    assert!(
        tool_message["content"]
            .as_str()
            .unwrap()
            .contains("There is no tool named `Nope`")
    );
}

#[test]
fn anthropic_round_trip_keeps_thinking_and_reports_tool_errors() {
    let sb = sandbox();
    let first = MockReply::new(
        vec![
            Part::Thinking {
                text: "Plan it.".into(),
                signature: "sig-e2e".into(),
            },
            Part::Text("Calling.".into()),
            Part::ToolCall {
                id: "toolu_1".into(),
                name: "Nope".into(),
                arguments: "{}".into(),
            },
        ],
        Stop::ToolUse,
    );
    let server = round_trip(first, "Done via Anthropic.");
    let out = sb.run_with_env(
        &["run", "--model", "anthropic/claude-sonnet-4-5", "go"],
        &[
            ("ANTHROPIC_API_KEY", "ak-e2e"),
            ("ANTHROPIC_BASE_URL", &server.url()),
        ],
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(out.stdout, "Done via Anthropic.\n");
    let requests = server.requests();
    assert_eq!(requests[0].headers["x-api-key"], "ak-e2e");
    assert_eq!(requests[0].body["model"], "claude-sonnet-4-5");
    assert_eq!(requests[0].body["max_tokens"], 64000);
    let messages = requests[1].body["messages"].as_array().unwrap();
    assert_eq!(
        messages[1]["content"][0],
        json!({"type": "thinking", "thinking": "Plan it.", "signature": "sig-e2e"})
    );
    let result = &messages[2]["content"][0];
    assert_eq!(
        (result["type"].as_str(), result["is_error"].as_bool()),
        (Some("tool_result"), Some(true))
    );
}

#[test]
fn a_local_ollama_model_needs_no_key() {
    let sb = sandbox();
    let server =
        MockModelServer::start_blocking([MockTurn::Reply(MockReply::text("local answer"))]);
    let host = server.url().trim_start_matches("http://").to_owned();
    let out = sb.run_with_env(
        &["run", "--model", "ollama/qwen3", "hi"],
        &[("OLLAMA_HOST", &host)],
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(out.stdout, "local answer\n");
    let request = &server.requests()[0];
    assert_eq!(request.path, "/v1/chat/completions");
    assert!(request.headers.get("authorization").is_none());
}

#[test]
fn retries_are_shown_on_stderr_and_api_errors_exit_3() {
    let sb = sandbox();
    let server = MockModelServer::start_blocking([
        MockTurn::Status {
            status: 429,
            headers: vec![("retry-after".into(), "0".into())],
            body: r#"{"error":{"message":"slow down"}}"#.into(),
        },
        MockTurn::Reply(MockReply::text("after the retry")),
        MockTurn::Status {
            status: 401,
            headers: vec![],
            body: r#"{"error":{"message":"Incorrect API key provided"}}"#.into(),
        },
    ]);
    let base = format!("{}/v1", server.url());
    let env = [
        ("OPENAI_API_KEY", "sk-e2e"),
        ("OPENAI_BASE_URL", base.as_str()),
    ];
    let out = sb.run_with_env(&["run", "--model", "openai/gpt-4.1", "hi"], &env);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(out.stdout, "after the retry\n");
    assert!(
        out.stderr.contains("HTTP 429 (slow down); retrying"),
        "{}",
        out.stderr
    );
    let out = sb.run_with_env(&["run", "--model", "openai/gpt-4.1", "hi"], &env);
    assert_eq!(out.code, Some(3), "{out:?}");
    assert!(
        out.stderr.contains("HTTP 401") && out.stderr.contains("Incorrect API key provided"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_hosted_model_without_its_key_says_what_to_set() {
    let out = sandbox().run(&["run", "--model", "anthropic/claude-sonnet-4-5", "hi"]);
    assert_eq!(out.code, Some(2));
    assert!(
        out.stderr
            .contains("needs an API key: set ANTHROPIC_API_KEY"),
        "{}",
        out.stderr
    );
}

#[test]
fn configured_providers_reach_any_compatible_endpoint() {
    let sb = sandbox();
    let server =
        MockModelServer::start_blocking([MockTurn::Reply(MockReply::text("from my gateway"))]);
    sb.write(
        "config/agentry/config.toml",
        &format!(
            "model = \"gateway/team-model\"\n[providers.gateway]\nbase_url = \"{}/v1\"\napi_key_env = \"GATEWAY_TOKEN\"\n",
            server.url()
        ),
    );
    let out = sb.run_with_env(&["run", "hi"], &[("GATEWAY_TOKEN", "gw")]);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(out.stdout, "from my gateway\n");
    assert_eq!(server.requests()[0].headers["authorization"], "Bearer gw");
    assert_eq!(server.requests()[0].body["model"], "team-model");
}

#[test]
fn bedrock_round_trip_signed_with_the_profiles_keys() {
    let sb = sandbox();
    sb.write(
        "home/.aws/credentials",
        "[default]\naws_access_key_id = AKIDE2E\naws_secret_access_key = e2e-secret-key\n",
    );
    let server = round_trip(
        MockReply::tool_call("tooluse_1", "Nope", json!({"x": 1})),
        "Done via Bedrock.",
    );
    server.require(Required::SigV4(SigV4Check {
        access_key_id: "AKIDE2E".into(),
        secret_access_key: "e2e-secret-key".into(),
        session_token: None,
        region: "eu-west-1".into(),
        service: "bedrock".into(),
    }));
    let out = sb.run_with_env(
        &[
            "run",
            "--model",
            "bedrock/amazon.nova-pro-v1:0",
            "--output-format",
            "json",
            "go",
        ],
        &[
            ("AWS_REGION", "eu-west-1"),
            ("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", &server.url()),
        ],
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(out.json()["result"], "Done via Bedrock.");
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        requests[0].path,
        "/model/amazon.nova-pro-v1%3A0/converse-stream"
    );
    let messages = requests[1].body["messages"].as_array().unwrap();
    assert_eq!(
        messages[1]["content"][0]["toolUse"],
        json!({"toolUseId": "tooluse_1", "name": "Nope", "input": {"x": 1}})
    );
    let result = &messages[2]["content"][0]["toolResult"];
    assert_eq!(result["status"], "error");
    assert!(
        result["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("There is no tool named `Nope`")
    );
    assert!(!out.stdout.contains("e2e-secret-key") && !out.stderr.contains("e2e-secret-key"));
}

#[test]
fn bedrock_without_credentials_exits_2_naming_where_it_looked_before_any_request() {
    let sb = sandbox();
    let server = MockModelServer::start_blocking([MockTurn::Reply(MockReply::text("never"))]);
    let out = sb.run_with_env(
        &["run", "--model", "bedrock/amazon.nova-pro-v1:0", "hi"],
        &[
            ("AWS_REGION", "eu-west-1"),
            ("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", &server.url()),
        ],
    );
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(
        out.stderr.contains("no AWS credentials found")
            && out.stderr.contains("home/.aws/credentials")
            && out.stderr.trim().lines().count() == 1,
        "{}",
        out.stderr
    );
    assert!(server.requests().is_empty());
}

#[test]
fn gemini_round_trip_sends_the_calls_signature_back_on_the_call() {
    let sb = sandbox();
    let server = round_trip(
        MockReply::tool_call("fc_1", "Nope", json!({"x": 1})),
        "Done via Gemini.",
    );
    server.require(Required::Header {
        name: "x-goog-api-key".into(),
        value: "gm-e2e".into(),
    });
    let out = sb.run_with_env(
        &["run", "--model", "gemini/gemini-3-flash-preview", "go"],
        &[
            ("GOOGLE_API_KEY", "gm-e2e"),
            ("GEMINI_BASE_URL", &server.url()),
        ],
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(out.stdout, "Done via Gemini.\n");
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let contents = requests[1].body["contents"].as_array().unwrap();
    assert_eq!(
        contents[1],
        json!({"role": "model", "parts": [{
            "functionCall": {"id": "fc_1", "name": "Nope", "args": {"x": 1}},
            "thoughtSignature": gemini_call_signature("fc_1"),
        }]})
    );
    let response = &contents[2]["parts"][0]["functionResponse"];
    assert_eq!(
        (&response["id"], &response["name"]),
        (&json!("fc_1"), &json!("Nope"))
    );
    assert!(
        response["response"]["error"]
            .as_str()
            .unwrap()
            .contains("There is no tool named `Nope`")
    );
}

/// A reply that reasons (signed, as `signature` says), calls the failing tool `Nope` as `id`, then
/// a reply that says `done`.
fn step(id: &str, signature: Option<&str>, done: &str) -> [MockTurn; 2] {
    let mut parts = Vec::new();
    if let Some(signature) = signature {
        parts.push(Part::Thinking {
            text: format!("Plan {id}."),
            signature: signature.into(),
        });
    }
    parts.push(Part::ToolCall {
        id: id.into(),
        name: "Nope".into(),
        arguments: "{}".into(),
    });
    [
        MockTurn::Reply(MockReply::new(parts, Stop::ToolUse)),
        MockTurn::Reply(MockReply::text(done)),
    ]
}

#[test]
fn one_session_goes_from_anthropic_to_gemini_to_bedrock_to_openai_and_no_signature_crosses() {
    let sb = sandbox();
    let turns: Vec<MockTurn> = [
        step("toolu_a", Some("sig-anthropic-A"), "A done."),
        step("fc_b", None, "B done."),
        step("tooluse_c", Some("sig-bedrock-C"), "C done."),
        step("call_d", None, "D done."),
    ]
    .into_iter()
    .flatten()
    .collect();
    let server = MockModelServer::start_blocking(turns);
    let url = server.url();
    let openai_url = format!("{url}/v1");
    let env = [
        ("ANTHROPIC_API_KEY", "ak"),
        ("ANTHROPIC_BASE_URL", url.as_str()),
        ("GEMINI_API_KEY", "gk"),
        ("GEMINI_BASE_URL", url.as_str()),
        ("AWS_ACCESS_KEY_ID", "AKIDSWITCH"),
        ("AWS_SECRET_ACCESS_KEY", "switch-secret"),
        ("AWS_REGION", "us-east-1"),
        ("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", url.as_str()),
        ("OPENAI_API_KEY", "ok"),
        ("OPENAI_BASE_URL", openai_url.as_str()),
    ];
    let models = [
        ("anthropic/claude-sonnet-4-5", "A done."),
        ("gemini/gemini-3-flash-preview", "B done."),
        ("bedrock/amazon.nova-pro-v1:0", "C done."),
        ("openai/gpt-4.1", "D done."),
    ];
    let mut session: Option<String> = None;
    for (model, answer) in models {
        let mut args = vec!["run", "--model", model, "--output-format", "json"];
        if let Some(id) = &session {
            args.extend(["--resume", id.as_str()]);
        }
        args.push("go on");
        let out = sb.run_with_env(&args, &env);
        assert_eq!(out.code, Some(0), "{model}: {out:?}");
        let result = out.json();
        assert_eq!(result["result"], answer, "{model}");
        let id = result["session_id"].as_str().unwrap().to_owned();
        assert_eq!(session.get_or_insert(id.clone()), &id, "one session");
    }
    let bodies: Vec<String> = server
        .requests()
        .iter()
        .map(|r| r.body.to_string())
        .collect();
    assert_eq!(bodies.len(), 8);
    let gemini_signature = gemini_call_signature("fc_b");
    // Each provider reads back its own signatures, and no other's.
    let own = [
        (
            "sig-anthropic-A",
            [false, true, false, false, false, false, false, false],
        ),
        (
            gemini_signature.as_str(),
            [false, false, false, true, false, false, false, false],
        ),
        (
            "sig-bedrock-C",
            [false, false, false, false, false, true, false, false],
        ),
    ];
    for (signature, sent) in own {
        let found: Vec<bool> = bodies.iter().map(|b| b.contains(signature)).collect();
        assert_eq!(found, sent, "where {signature} was sent");
    }
    // The calls and their results are carried across in each format.
    let gemini = &server.requests()[2].body["contents"];
    assert_eq!(
        gemini[1]["parts"],
        json!([
            {"text": "Plan toolu_a.", "thought": true},
            {"functionCall": {"id": "toolu_a", "name": "Nope", "args": {}}},
        ])
    );
    let bedrock = &server.requests()[4].body["messages"];
    assert_eq!(
        bedrock[1]["content"],
        json!([{"toolUse": {"toolUseId": "toolu_a", "name": "Nope", "input": {}}}])
    );
    assert_eq!(bedrock[5]["content"][0]["toolUse"]["toolUseId"], "fc_b");
    let openai = &server.requests()[6].body["messages"];
    let ids: Vec<&str> = openai
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["tool_call_id"].as_str())
        .collect();
    assert_eq!(ids, ["toolu_a", "fc_b", "tooluse_c"]);
}

#[test]
fn azure_and_foundry_round_trips_take_azures_keys_and_urls() {
    let sb = sandbox();
    let server = round_trip(
        MockReply::tool_call("call_1", "Nope", json!({})),
        "Done via Azure.",
    );
    server.require(Required::Header {
        name: "api-key".into(),
        value: "az-e2e".into(),
    });
    let out = sb.run_with_env(
        &["run", "--model", "azure/gpt-4o-prod", "go"],
        &[
            ("AZURE_OPENAI_ENDPOINT", &server.url()),
            ("AZURE_OPENAI_API_KEY", "az-e2e"),
        ],
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(out.stdout, "Done via Azure.\n");
    let requests = server.requests();
    assert_eq!(requests[1].path, "/openai/v1/chat/completions");
    assert_eq!(requests[1].body["model"], "gpt-4o-prod");
    assert_eq!(
        requests[1].body["messages"]
            .as_array()
            .unwrap()
            .last()
            .unwrap()["tool_call_id"],
        "call_1"
    );

    let foundry = round_trip(
        MockReply::tool_call("toolu_1", "Nope", json!({})),
        "Done via Foundry.",
    );
    foundry.require(Required::Header {
        name: "x-api-key".into(),
        value: "fd-e2e".into(),
    });
    let out = sb.run_with_env(
        &["run", "--model", "foundry/claude-sonnet-4-5", "go"],
        &[
            ("AZURE_FOUNDRY_BASE_URL", &foundry.url()),
            ("AZURE_FOUNDRY_API_KEY", "fd-e2e"),
        ],
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(out.stdout, "Done via Foundry.\n");
    assert_eq!(foundry.requests()[0].path, "/v1/messages");
    let missing = sb.run(&["run", "--model", "foundry/claude-sonnet-4-5", "hi"]);
    assert_eq!(missing.code, Some(2));
    assert!(
        missing.stderr.contains("AZURE_FOUNDRY_RESOURCE"),
        "{}",
        missing.stderr
    );
}

#[test]
fn agentry_models_says_where_each_providers_credentials_were_found_and_never_shows_them() {
    let sb = sandbox();
    sb.write(
        "home/.aws/credentials",
        "[default]\naws_access_key_id = AKIDLIST\naws_secret_access_key = list-secret\n",
    );
    let env = [
        ("GOOGLE_API_KEY", "g-secret"),
        ("ANTHROPIC_API_KEY", "a-secret"),
        ("AWS_REGION", "eu-west-1"),
        // Neither Azure's managed identity nor its CLI.
        ("AZURE_TOKEN_CREDENTIALS", "dev"),
        ("PATH", "/nonexistent"),
    ];
    let out = sb.run_with_env(&["models", "--json"], &env);
    assert_eq!(out.code, Some(0), "{out:?}");
    let listed: Vec<serde_json::Value> = serde_json::from_str(&out.stdout).unwrap();
    let provider = |name: &str| {
        listed
            .iter()
            .find(|p| p["name"] == name)
            .unwrap_or_else(|| panic!("{name} is listed"))
            .clone()
    };
    assert_eq!(
        provider("gemini")["credentials"],
        json!({"status": "found", "from": "GOOGLE_API_KEY"})
    );
    assert_eq!(
        provider("openai")["credentials"],
        json!({"status": "missing", "looked_for": "OPENAI_API_KEY"})
    );
    assert_eq!(provider("ollama")["credentials"]["status"], "not_needed");
    let bedrock = provider("bedrock");
    assert_eq!(
        bedrock["endpoint"],
        "https://bedrock-runtime.eu-west-1.amazonaws.com"
    );
    let from = bedrock["credentials"]["from"].as_str().unwrap();
    assert!(
        from.contains("profile default in") && from.contains(".aws/credentials"),
        "{from}"
    );
    assert_eq!(provider("azure")["credentials"]["status"], "missing");
    let text = sb.run_with_env(&["models"], &env);
    assert!(
        text.stdout.contains("credentials from GOOGLE_API_KEY"),
        "{}",
        text.stdout
    );
    for secret in ["g-secret", "a-secret", "list-secret", "AKIDLIST"] {
        for shown in [&out.stdout, &out.stderr, &text.stdout, &text.stderr] {
            assert!(!shown.contains(secret), "{secret} shown: {shown}");
        }
    }
}

mod entra;
mod vertex;
