//! What a session costs, through `agentry run`: each request priced from the price table (or
//! the configuration's price), the total and the figures by model in `--output-format json`,
//! the cost as it grows in `stream-json`, and `--max-budget-usd` kept with exit code 8.

use crate::{run_sonnet, sandbox};
use agentry_tests::Sandbox;
use agentry_tests::mock_model::{MockModelServer, MockReply, MockTurn};
use serde_json::{Value, json};

/// A tool call, then an answer, each with its input, output, cache-read and cache-write tokens.
fn anthropic_session() -> MockModelServer {
    let mut call = MockReply::tool_call("toolu_1", "Read", json!({"file_path": "notes.md"}));
    call.usage = [1_200, 80, 30_000, 4_000];
    let mut answer = MockReply::text("The notes say hello.");
    answer.usage = [300, 150, 34_000, 0];
    MockModelServer::start_blocking([MockTurn::Reply(call), MockTurn::Reply(answer)])
}

fn dollars(value: &Value) -> f64 {
    value
        .as_f64()
        .unwrap_or_else(|| panic!("{value} is not dollars"))
}

fn same(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn run_reports_a_sessions_cost_as_the_price_table_gives_it() {
    let sb = sandbox();
    sb.write("project/notes.md", "hello");
    let server = anthropic_session();
    let out = run_sonnet(&sb, &server, &["--output-format", "json", "Read notes.md"]);
    assert_eq!(out.code, Some(0), "{out:?}");
    let result = out.json();
    // Claude Sonnet 4.5 in the table: $3 input, $15 output, $0.30 cache read, $3.75 cache
    // write, a million tokens.
    let first = (1_200.0 * 3.0 + 80.0 * 15.0 + 30_000.0 * 0.30 + 4_000.0 * 3.75) / 1e6;
    let second = (300.0 * 3.0 + 150.0 * 15.0 + 34_000.0 * 0.30) / 1e6;
    assert!(same(first, 0.0288) && same(second, 0.01335));
    assert!(
        same(dollars(&result["total_cost_usd"]), first + second),
        "{result}"
    );
    let sonnet = &result["model_usage"]["anthropic/claude-sonnet-4-5"];
    assert_eq!(sonnet["requests"], 2, "{result}");
    assert_eq!(sonnet["input_tokens"], 1_500);
    assert_eq!(sonnet["cache_read_tokens"], 64_000);
    assert_eq!(sonnet["cache_write_tokens"], 4_000);
    assert_eq!(sonnet["output_tokens"], 230);
    assert!(same(dollars(&sonnet["cost_usd"]), first + second));

    // stream-json: each usage event with its own cost and the session's so far.
    let server = anthropic_session();
    let out = run_sonnet(
        &sb,
        &server,
        &["--output-format", "stream-json", "Read notes.md"],
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    let usage: Vec<Value> = out
        .stdout
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|event| event["type"] == "usage")
        .collect();
    assert_eq!(usage.len(), 2, "{}", out.stdout);
    assert_eq!(usage[0]["model"], "anthropic/claude-sonnet-4-5");
    assert!(same(dollars(&usage[0]["cost_usd"]), first));
    assert!(same(dollars(&usage[0]["session_cost_usd"]), first));
    assert!(same(dollars(&usage[1]["cost_usd"]), second));
    assert!(same(dollars(&usage[1]["session_cost_usd"]), first + second));

    // The configuration's price takes the table's place.
    sb.write(
        "config/agentry/config.toml",
        "[providers.anthropic.models.\"claude-sonnet-4-5\"]\nprice = { input = 1, output = 2 }\n",
    );
    let server = anthropic_session();
    let out = run_sonnet(&sb, &server, &["--output-format", "json", "Read notes.md"]);
    assert_eq!(out.code, Some(0), "{out:?}");
    // Cached tokens at the input price when the configuration gives none.
    let configured = (69_500.0 * 1.0 + 230.0 * 2.0) / 1e6;
    assert!(same(dollars(&out.json()["total_cost_usd"]), configured));
}

#[test]
fn a_model_without_a_price_is_reported_unpriced_never_free() {
    let sb = sandbox();
    let script = sb.script(
        "s",
        &json!({"responses": [{"events": [{"text": "Hi."}], "usage": {"input_tokens": 9, "output_tokens": 2}}]}),
    );
    let out = sb.run_scripted(&script, &["--output-format", "json", "hi"]);
    assert_eq!(out.code, Some(0), "{out:?}");
    let result = out.json();
    assert_eq!(result["total_cost_usd"], Value::Null, "{result}");
    assert_eq!(result["model_usage"]["scripted"]["cost_usd"], Value::Null);
    assert_eq!(result["model_usage"]["scripted"]["input_tokens"], 9);
}

/// A script whose model costs $10 a million prompt tokens: a tool call of 55,000 prompt
/// tokens ($0.55), then an answer never asked for within a budget of $0.56.
fn priced_script(sb: &Sandbox) -> std::path::PathBuf {
    sb.script(
        "priced",
        &json!({
            "price": {"input": 10.0, "output": 30.0},
            "responses": [
                {"events": [{"text": "Checking first."}, {"tool_call": {"id": "c1", "name": "Nope", "arguments": {}}}],
                 "usage": {"input_tokens": 55_000, "output_tokens": 0}},
                {"events": [{"text": "never asked for"}]}
            ]
        }),
    )
}

#[test]
fn max_budget_usd_ends_the_turn_with_exit_8_and_keeps_the_answer_so_far() {
    let sb = sandbox();
    let script = priced_script(&sb);
    let out = sb.run_scripted(
        &script,
        &["--max-budget-usd", "0.56", "--output-format", "json", "go"],
    );
    assert_eq!(out.code, Some(8), "{out:?}");
    let result = out.json();
    assert_eq!(result["stop_reason"], "max_budget");
    assert_eq!(result["result"], "Checking first.");
    assert!(same(dollars(&result["total_cost_usd"]), 0.55));
    assert!(out.stderr.contains("budget"), "{}", out.stderr);
    // Within a larger budget the same script runs to its end.
    let out = sb.run_scripted(&script, &["--max-budget-usd", "1", "go"]);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(out.stdout, "never asked for\n");
    // `[limits] max_budget_usd` does the same for any front-end.
    sb.write(
        "config/agentry/config.toml",
        "[limits]\nmax_budget_usd = 0.56\n",
    );
    let out = sb.run_scripted(&script, &["go"]);
    assert_eq!(out.code, Some(8), "{out:?}");
}

#[test]
fn a_budget_refuses_to_start_with_a_model_it_cannot_price_or_a_budget_that_is_not_one() {
    let sb = sandbox();
    let unpriced = sb.script(
        "s",
        &json!({"responses": [{"events": [{"text": "never asked for"}]}]}),
    );
    let out = sb.run_scripted(&unpriced, &["--max-budget-usd", "5", "hi"]);
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(
        out.stderr.contains("`scripted` has no price") && out.stderr.contains("price = {"),
        "{}",
        out.stderr
    );
    let priced = priced_script(&sb);
    for budget in ["-1", "NaN", "inf"] {
        let flag = format!("--max-budget-usd={budget}");
        let out = sb.run_scripted(&priced, &[&flag, "hi"]);
        assert_eq!(out.code, Some(2), "{budget}: {out:?}");
        assert!(out.stderr.contains("budget"), "{}", out.stderr);
    }
}

#[test]
fn a_folder_not_trusted_may_lower_the_budget_but_not_raise_it_or_price_a_model() {
    let sb = sandbox();
    let script = priced_script(&sb);
    sb.write(
        "config/agentry/config.toml",
        "[limits]\nmax_budget_usd = 0.56\n",
    );
    sb.write(
        "project/.agentry/config.toml",
        "[limits]\nmax_budget_usd = 100\n[providers.anthropic.models.\"claude-sonnet-4-5\"]\nprice = { input = 0, output = 0 }\n",
    );
    let untrusted = [("AGENTRY_TRUST", "0")];
    let run = |args: &[&str]| {
        let mut command = vec![
            "run".to_owned(),
            "--model".to_owned(),
            format!("scripted:{}", script.display()),
        ];
        command.extend(args.iter().map(|a| (*a).to_owned()));
        let command: Vec<&str> = command.iter().map(String::as_str).collect();
        sb.run_with_env(&command, &untrusted)
    };
    let out = run(&["go"]);
    assert_eq!(out.code, Some(8), "the user's budget holds: {out:?}");
    assert!(
        out.stderr.contains("max_budget_usd = 100"),
        "the raise is reported as withheld: {}",
        out.stderr
    );
    assert!(
        out.stderr.contains("model provider `anthropic`"),
        "the price is withheld with the provider's table: {}",
        out.stderr
    );
    sb.write(
        "project/.agentry/config.toml",
        "[limits]\nmax_budget_usd = 0.01\n",
    );
    let out = run(&["--output-format", "json", "go"]);
    assert_eq!(out.code, Some(8), "a lower budget counts: {out:?}");
    assert_eq!(out.json()["result"], "", "not even the first request");
}

#[test]
fn models_prices_lists_the_configured_prices_then_the_table_with_sources() {
    let sb = sandbox();
    sb.write(
        "config/agentry/config.toml",
        "[providers.ollama.models.\"qwen3\"]\nprice = { input = 0, output = 0 }\n",
    );
    let out = sb.run(&["models", "--prices"]);
    assert_eq!(out.code, Some(0), "{out:?}");
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert!(lines[1].starts_with("ollama/qwen3"), "{}", out.stdout);
    assert!(lines[1].ends_with("configuration"), "{}", out.stdout);
    let sonnet = lines
        .iter()
        .find(|line| line.starts_with("claude-sonnet-4-5 "))
        .unwrap_or_else(|| panic!("{}", out.stdout));
    assert!(
        sonnet.contains("3.0000    15.0000     0.3000     3.7500")
            && sonnet.contains("prompts over 200000 tokens")
            && sonnet.contains("https://"),
        "{sonnet}"
    );
    let out = sb.run(&["models", "--prices", "--json"]);
    let rows: Vec<Value> = serde_json::from_str(&out.stdout).unwrap();
    let listed = rows.iter().find(|row| row["model"] == "gpt-4.1").unwrap();
    assert_eq!(listed["price"]["input"], 2.0);
    assert!(listed["as_of"].is_string() && listed["source"].is_string());
}

#[test]
fn a_sub_agents_spending_counts_toward_the_budget_of_the_chat_that_ran_it() {
    let sb = sandbox();
    // The chat hands the work to a sub-agent (its requests go to the same scripted model), whose
    // answer costs $0.55; the calling chat's next request would pass $0.56.
    let script = sb.script(
        "delegating",
        &json!({
            "price": {"input": 10.0, "output": 30.0},
            "responses": [
                {"events": [{"tool_call": {"id": "fork_1", "name": "Agent", "arguments": {"description": "Look", "prompt": "Look around", "subagent_type": "general-purpose"}}}]},
                {"events": [{"text": "Nothing here."}], "usage": {"input_tokens": 55_000, "output_tokens": 0}},
                {"events": [{"text": "never asked for"}]}
            ]
        }),
    );
    let out = sb.run_scripted(
        &script,
        &[
            "--max-budget-usd",
            "0.56",
            "--output-format",
            "json",
            "look",
        ],
    );
    assert_eq!(out.code, Some(8), "{out:?}");
    let result = out.json();
    assert_eq!(result["stop_reason"], "max_budget");
    assert!(same(dollars(&result["total_cost_usd"]), 0.55), "{result}");
    assert_eq!(result["model_usage"]["scripted"]["requests"], 2, "{result}");
}
