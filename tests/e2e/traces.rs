//! OpenTelemetry traces from the real binary to a receiver on loopback: the span tree of a
//! chat with a tool call and a sub-agent, named and attributed per the GenAI semantic
//! conventions, with what was said only when the configuration asks for it.

use crate::both_ways;
use crate::loading::{Loading, as_strs};
use crate::run_openai_with_env;
use agentry_tests::mock_model::{MockModelServer, MockReply, MockTurn};
use agentry_tests::otlp::{OtlpReceiver, ReceivedSpan};
use serde_json::json;

/// The prompt of the chat (never in a trace unless content is asked for).
const PROMPT: &str = "find the secret sources";

/// A model that hands the work to a sub-agent, which globs and answers.
fn delegating_model() -> MockModelServer {
    MockModelServer::start_blocking([
        MockTurn::Reply(MockReply::tool_call(
            "fork_1",
            "Agent",
            json!({"description": "Find sources", "prompt": "Find the Rust files", "subagent_type": "general-purpose"}),
        )),
        MockTurn::Reply(MockReply::tool_call(
            "glob_1",
            "Glob",
            json!({"pattern": "**/*.rs"}),
        )),
        MockTurn::Reply(MockReply::text("src/main.rs is the only one.")),
        MockTurn::Reply(MockReply::text("There is one Rust file.")),
    ])
}

/// The one span named `name` under `parent` (`None`: a root).
fn child<'s>(
    spans: &'s [ReceivedSpan],
    parent: Option<&ReceivedSpan>,
    name: &str,
) -> Vec<&'s ReceivedSpan> {
    spans
        .iter()
        .filter(|span| span.name == name)
        .filter(|span| match parent {
            Some(parent) => span.parent_span_id == parent.span_id,
            None => span.parent_span_id.is_empty(),
        })
        .collect()
}

both_ways!(a_chat_with_a_tool_call_and_a_sub_agent_is_one_span_tree);
fn a_chat_with_a_tool_call_and_a_sub_agent_is_one_span_tree(loading: Loading) {
    let sb = loading.sandbox();
    sb.write("project/src/main.rs", "fn main() {}\n");
    let server = delegating_model();
    let receiver = OtlpReceiver::start();
    let args = loading.args(&["--output-format", "json", PROMPT]);
    let out = run_openai_with_env(
        &sb,
        &server,
        &as_strs(&args),
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.url()),
            ("OTEL_SERVICE_NAME", "agentry-e2e"),
        ],
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    let session_id = out.json()["session_id"].as_str().unwrap().to_owned();
    // The spans are sent before the process exits.
    let spans = receiver.spans();
    assert_eq!(spans.len(), 8, "{spans:#?}");

    let [chat] = child(&spans, None, "invoke_agent agentry")[..] else {
        panic!("one root chat span: {spans:#?}");
    };
    assert_eq!(chat.service, "agentry-e2e");
    assert_eq!(
        chat.attribute("gen_ai.operation.name"),
        Some("invoke_agent")
    );
    assert_eq!(
        chat.attribute("gen_ai.conversation.id"),
        Some(session_id.as_str())
    );
    assert_eq!(chat.attribute("gen_ai.request.model"), Some("gpt-4.1"));
    assert_eq!(chat.attribute("gen_ai.provider.name"), Some("openai"));
    assert_eq!(
        chat.integer("gen_ai.usage.input_tokens"),
        Some(40),
        "its own two requests' tokens (the sub-agent's are its own span's)"
    );
    assert_eq!(chat.integer("gen_ai.usage.output_tokens"), Some(10));
    assert!(
        spans.iter().all(|span| span.trace_id == chat.trace_id),
        "one trace"
    );

    let requests = child(&spans, Some(chat), "chat gpt-4.1");
    assert_eq!(requests.len(), 2, "{spans:#?}");
    for request in &requests {
        assert_eq!(request.kind, 3, "a client span");
        assert_eq!(request.attribute("gen_ai.operation.name"), Some("chat"));
        assert_eq!(request.attribute("gen_ai.request.model"), Some("gpt-4.1"));
        assert_eq!(request.integer("gen_ai.usage.input_tokens"), Some(20));
        assert_eq!(request.integer("gen_ai.usage.output_tokens"), Some(5));
        assert_eq!(
            request.attribute("gen_ai.conversation.id"),
            Some(session_id.as_str())
        );
    }
    let finish: Vec<_> = requests
        .iter()
        .map(|r| r.attribute("gen_ai.response.finish_reasons").unwrap())
        .collect();
    assert_eq!(finish, [r#"["tool_calls"]"#, r#"["stop"]"#]);

    let [agent_call] = child(&spans, Some(chat), "execute_tool Agent")[..] else {
        panic!("one Agent call under the chat: {spans:#?}");
    };
    assert_eq!(
        agent_call.attribute("gen_ai.operation.name"),
        Some("execute_tool")
    );
    assert_eq!(agent_call.attribute("gen_ai.tool.name"), Some("Agent"));
    assert_eq!(agent_call.attribute("gen_ai.tool.call.id"), Some("fork_1"));
    assert_eq!(agent_call.status_code, 0, "it did not fail");

    let [sub_agent] = child(&spans, Some(agent_call), "invoke_agent sub-agent")[..] else {
        panic!("the sub-agent's chat is a child of its Agent call: {spans:#?}");
    };
    assert_eq!(child(&spans, Some(sub_agent), "chat gpt-4.1").len(), 2);
    let [glob] = child(&spans, Some(sub_agent), "execute_tool Glob")[..] else {
        panic!("the sub-agent's Glob call: {spans:#?}");
    };
    assert_eq!(glob.attribute("gen_ai.tool.call.id"), Some("glob_1"));

    let said = [
        "gen_ai.input.messages",
        "gen_ai.output.messages",
        "gen_ai.tool.call.arguments",
        "gen_ai.tool.call.result",
    ];
    for span in &spans {
        for key in said {
            assert_eq!(
                span.attribute(key),
                None,
                "{key} recorded without being asked: {span:#?}"
            );
        }
        for value in span.attributes.values() {
            assert!(!value.contains(PROMPT), "the prompt leaked: {span:#?}");
        }
    }
}

#[test]
fn the_configuration_turns_traces_on_and_asks_for_what_was_said() {
    let sb = Loading::Linked.sandbox();
    let receiver = OtlpReceiver::start();
    sb.write(
        "config/agentry/config.toml",
        &format!(
            "[telemetry]\nendpoint = \"{}\"\nservice_name = \"team-agent\"\ninclude_content = true\n",
            receiver.url()
        ),
    );
    let server = MockModelServer::start_blocking([
        MockTurn::Reply(MockReply::tool_call(
            "glob_1",
            "Glob",
            json!({"pattern": "*.md"}),
        )),
        MockTurn::Reply(MockReply {
            // The second request's prompt was read from the cache in part.
            usage: [20, 5, 12, 0],
            ..MockReply::text("No notes here.")
        }),
    ]);
    let out = run_openai_with_env(&sb, &server, &[PROMPT], &[]);
    assert_eq!(out.code, Some(0), "{out:?}");
    let spans = receiver.spans();
    assert_eq!(spans.len(), 4, "{spans:#?}");
    assert!(spans.iter().all(|span| span.service == "team-agent"));
    let requests = child(&spans, None, "invoke_agent agentry")
        .into_iter()
        .flat_map(|chat| child(&spans, Some(chat), "chat gpt-4.1"))
        .collect::<Vec<_>>();
    let input = requests[0].attribute("gen_ai.input.messages").unwrap();
    assert!(input.contains(PROMPT), "{input}");
    let output = requests[1].attribute("gen_ai.output.messages").unwrap();
    assert!(output.contains("No notes here."), "{output}");
    let cache_read = "gen_ai.usage.cache_read.input_tokens";
    assert_eq!(requests[1].integer(cache_read), Some(12));
    assert_eq!(requests[1].integer("gen_ai.usage.input_tokens"), Some(32));
    assert_eq!(requests[0].integer(cache_read), None, "no cache, no count");
    assert!(
        requests.iter().all(|r| r
            .integer("gen_ai.usage.cache_creation.input_tokens")
            .is_none()),
        "nothing was written to the cache"
    );
    let glob = &spans
        .iter()
        .find(|span| span.name == "execute_tool Glob")
        .unwrap();
    assert!(
        glob.attribute("gen_ai.tool.call.arguments")
            .unwrap()
            .contains("*.md")
    );
    assert!(glob.attribute("gen_ai.tool.call.result").is_some());
}

#[test]
fn traces_are_off_unless_configured_and_a_failed_request_is_an_error_span() {
    let sb = Loading::Linked.sandbox();
    let receiver = OtlpReceiver::start();
    let server = MockModelServer::start_blocking([MockTurn::Reply(MockReply::text("Hi."))]);
    let out = run_openai_with_env(&sb, &server, &["hello"], &[]);
    assert_eq!(out.code, Some(0), "{out:?}");
    // Off: nothing is sent anywhere (the receiver stands for any collector).
    assert!(receiver.spans().is_empty());

    let refusing = MockModelServer::start_blocking([MockTurn::Status {
        status: 400,
        headers: Vec::new(),
        body: r#"{"error": {"message": "bad request", "type": "invalid_request_error"}}"#
            .to_owned(),
    }]);
    let endpoint = [("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.url())];
    let out = run_openai_with_env(&sb, &refusing, &["hello"], &endpoint);
    assert_ne!(out.code, Some(0), "{out:?}");
    let spans = receiver.spans();
    let request = spans
        .iter()
        .find(|span| span.name == "chat gpt-4.1")
        .unwrap();
    assert_eq!(request.status_code, 2, "an error: {request:#?}");
    assert_eq!(request.attribute("error.type"), Some("model_api"));
    let chat = spans
        .iter()
        .find(|span| span.name == "invoke_agent agentry")
        .unwrap();
    assert_eq!(chat.status_code, 2);
    assert_eq!(chat.attribute("error.type"), Some("model_api"));
}
