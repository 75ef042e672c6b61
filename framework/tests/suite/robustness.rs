//! The parsers that read what agentry does not control (plugin messages, tool inputs) take any
//! input without panicking: a value or an error (model streams, the stock agent's configuration,
//! front matter and prompt templates have the same checks in `agentry-models` and
//! `agentry-stock`). The same inputs are fuzzed at length with `./scripts/fuzz`; these property tests run
//! a few hundred cases each in the normal test run, seeded with the recorded model streams.

use proptest::prelude::*;
use serde_json::{Value, json};

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn plugin_messages_are_read_or_refused(text in "(?s).{0,200}") {
        let _ = serde_json::from_str::<agentry_plugin_abi::wire::Prepared>(&text);
        let _ = serde_json::from_str::<agentry_plugin_abi::wire::CallEnd>(&text);
        let _ = serde_json::from_str::<agentry::tool::ToolProgress>(&text);
    }

    #[test]
    fn tool_inputs_are_coerced_and_checked_without_panicking(
        context in prop::option::of("[0-9a-z-]{0,4}"),
        flag in prop::option::of(prop::sample::select(vec!["true", "false", "yes", "1"])),
        pattern in prop::option::of(".{0,10}"),
    ) {
        let schema = json!({
            "type": "object", "required": ["pattern"],
            "x-agentry-aliases": {"context": "-C"},
            "properties": {
                "pattern": {"type": "string"},
                "-C": {"type": ["integer", "null"], "minimum": 0},
                "-i": {"type": ["boolean", "null"]}
            }
        });
        let mut input = serde_json::Map::new();
        if let Some(context) = context { input.insert("context".into(), context.into()); }
        if let Some(flag) = flag { input.insert("-i".into(), flag.into()); }
        if let Some(pattern) = pattern { input.insert("pattern".into(), pattern.into()); }
        let input = agentry::coerce::coerce(&schema, Value::Object(input));
        prop_assert!(input.get("context").is_none(), "the alias was renamed: {input}");
        let validator = jsonschema::validator_for(&schema).unwrap();
        let _ = agentry::schema::check(&validator, &input);
    }
}

/// One model answer with a hundred thousand tool calls: the first hundred run, each of the rest
/// gets a refusal the model can read, and the chat goes on within a bounded memory.
#[tokio::test]
async fn an_answer_past_its_limit_of_calls_runs_the_first_and_refuses_the_rest() {
    use super::support::*;
    use agentry::model::scripted::ScriptedResponse;
    // Each test is a process of its own (nextest): the limit is this test's.
    let gib = 1024 * 1024 * 1024;
    nix::sys::resource::setrlimit(nix::sys::resource::Resource::RLIMIT_AS, 4 * gib, 4 * gib)
        .unwrap();
    let calls =
        (0..100_000).map(|n| call(&format!("c{n}"), "Look", json!({"path": format!("f{n}")})));
    let mut h = harness([response(calls), ScriptedResponse::text("done")]).build();
    let summary = h.prompt("look at everything").await.unwrap();
    assert_eq!(summary.result, "done");
    assert_eq!(
        h.log.entries().len(),
        200,
        "the first hundred ran (start and end each)"
    );
    let requests = h.model.requests();
    let results = match requests[1].messages.last() {
        Some(agentry::model::Message::ToolResults { results }) => results.clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(results.len(), 100_000);
    let refused = results[100].text();
    assert!(refused.contains("at most 100 times"), "{refused}");
    assert!(!results[99].text().contains("at most"));
}
