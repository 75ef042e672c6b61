//! Compaction you control, through `agentry run`: `[compaction] enabled = false` fails clearly
//! instead of cutting, and `prune_tool_outputs` replaces old tool results by a note before
//! anything is summarised.

use crate::{run_sonnet as run, sandbox};
use agentry_tests::mock_model::{MockModelServer, MockReply, MockTurn};
use agentry_tests::{Outcome, Sandbox};
use serde_json::{Value, json};

#[test]
fn with_compaction_off_a_request_that_would_not_fit_ends_the_turn_naming_the_setting() {
    let sb = sandbox();
    // The stock tools' definitions alone are some 5,000 tokens: past a 3,000-token window.
    sb.write(
        "config/agentry/config.toml",
        "[providers.anthropic]\ncontext_window = 3000\n\n[compaction]\nenabled = false\n",
    );
    let server = MockModelServer::start_blocking([MockTurn::Reply(MockReply::text("never"))]);
    let out = run(&sb, &server, &["hi"]);
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(
        out.stderr
            .contains("no longer fits the model's context window of 3000 tokens")
            && out.stderr.contains("[compaction] enabled = false"),
        "{}",
        out.stderr
    );
    assert!(
        server.requests().is_empty(),
        "nothing was sent, nothing was cut"
    );
}

#[test]
fn prune_tool_outputs_replaces_old_tool_results_by_a_note_before_summarising() {
    let sb = sandbox();
    let server = pruning_in_a_small_window(&sb, "anthropic");
    let out = two_runs(&sb, &server, &["--output-format", "stream-json"]);
    assert_eq!(out.code, Some(0), "{out:?}");
    let compacted: Vec<Value> = out
        .stdout
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|event| event["type"] == "compacted")
        .collect();
    assert_eq!(compacted.len(), 1, "{}", out.stdout);
    let compacted = &compacted[0];
    assert_eq!(compacted["trigger"], "auto");
    assert_eq!(compacted["strategy"], "prune_tool_outputs", "{compacted}");
    assert_eq!(compacted["tool_outputs_pruned"], 1);
    assert_eq!(compacted["messages_summarised"], 0, "pruning was enough");
    assert!(
        compacted["tokens_after"].as_u64() < compacted["tokens_before"].as_u64(),
        "{compacted}"
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 3, "no summary was asked for");
    let sent = requests[2].body["messages"].to_string();
    assert!(
        sent.contains("[Tool output removed to save context: "),
        "{sent}"
    );
    assert!(
        !sent.contains("a line of the big file"),
        "the old result is gone"
    );
    assert!(sent.contains("And now?"), "the recent turn is kept");
}

#[test]
fn settings_that_cannot_work_are_refused_and_a_folder_not_trusted_cannot_set_them() {
    let sb = sandbox();
    let server = MockModelServer::start_blocking([MockTurn::Reply(MockReply::text("ok"))]);
    for bad in [
        "threshold = 0",
        "keep_recent = { turns = 0 }",
        "strategy = \"forget\"",
        "keep_recnt = { turns = 1 }",
    ] {
        sb.write(
            "config/agentry/config.toml",
            &format!("[compaction]\n{bad}\n"),
        );
        let out = run(&sb, &server, &["hi"]);
        assert_eq!(out.code, Some(2), "{bad}: {out:?}");
        let key = bad.split(' ').next().unwrap();
        assert!(out.stderr.contains(key), "{bad}: {}", out.stderr);
    }
    sb.write("config/agentry/config.toml", "");
    sb.write(
        "project/.agentry/config.toml",
        "[compaction]\nthreshold = 0.01\n",
    );
    let out = sb.run_with_env(
        &["run", "--model", "anthropic/claude-sonnet-4-5", "hi"],
        &[
            ("AGENTRY_TRUST", "0"),
            ("ANTHROPIC_API_KEY", "sk-ant-e2e"),
            ("ANTHROPIC_BASE_URL", &server.url()),
        ],
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(out.stderr.contains("compaction settings"), "{}", out.stderr);
}

/// A 12,000-token window for `provider`'s models, compaction by pruning tool outputs and keeping
/// the last turn, a big file, and a model that reads it and answers twice: the second prompt of
/// a session is compacted.
pub(crate) fn pruning_in_a_small_window(sb: &Sandbox, provider: &str) -> MockModelServer {
    sb.write(
        "config/agentry/config.toml",
        &format!(
            "[providers.{provider}]\ncontext_window = 12000\n\n[compaction]\nstrategy = \"prune_tool_outputs\"\nkeep_recent = {{ turns = 1 }}\n"
        ),
    );
    sb.write("project/big.txt", &"a line of the big file\n".repeat(900));
    reading_big_file_then(&["It repeats one line.", "Still one line."])
}

/// A model that reads `big.txt`, then gives these answers.
fn reading_big_file_then(answers: &[&str]) -> MockModelServer {
    let read = MockReply::tool_call("toolu_1", "Read", json!({"file_path": "big.txt"}));
    let answers = answers
        .iter()
        .map(|text| MockTurn::Reply(MockReply::text(text)));
    MockModelServer::start_blocking(
        std::iter::once(MockTurn::Reply(read))
            .chain(answers)
            .collect::<Vec<_>>(),
    )
}

/// The configuration of a small window, summarising compaction and compaction hooks.
fn hooked(sb: &Sandbox, pre_compact: &str) {
    sb.write(
        "config/agentry/config.toml",
        &format!(
            "[providers.anthropic]\ncontext_window = 12000\n\n[compaction]\nkeep_recent = {{ turns = 1 }}\n\n\
             [[hooks.PreCompact]]\nmatcher = \"auto\"\nhooks = [{{ type = \"command\", command = {pre_compact:?} }}]\n\n\
             [[hooks.PostCompact]]\nhooks = [{{ type = \"command\", command = \"cat > post.json\" }}]\n"
        ),
    );
}

/// A first run that reads a big file, then a second (resumed, with `args`) whose request needs
/// compacting.
fn two_runs(sb: &Sandbox, server: &MockModelServer, args: &[&str]) -> Outcome {
    sb.write("project/big.txt", &"a line of the big file\n".repeat(900));
    let first = run(
        sb,
        server,
        &["--output-format", "json", "What is in big.txt?"],
    );
    assert_eq!(first.code, Some(0), "{first:?}");
    let session = first.json()["session_id"].as_str().unwrap().to_owned();
    let mut second = vec!["--resume", session.as_str()];
    second.extend_from_slice(args);
    second.push("And now?");
    run(sb, server, &second)
}

#[test]
fn pre_compact_and_post_compact_hooks_see_claude_codes_fields_and_add_instructions() {
    let sb = sandbox();
    hooked(
        &sb,
        "cat > pre.json; echo '{\"hookSpecificOutput\": {\"hookEventName\": \"PreCompact\", \"customInstructions\": \"Keep the codename HERON.\"}}'",
    );
    let server = reading_big_file_then(&[
        "It repeats one line. Codename HERON.",
        "We read big.txt; the codename is HERON.",
        "Still HERON.",
    ]);
    let out = two_runs(&sb, &server, &[]);
    assert_eq!(out.code, Some(0), "{out:?}");
    let read = |name: &str| -> Value {
        serde_json::from_str(&std::fs::read_to_string(sb.project().join(name)).unwrap()).unwrap()
    };
    let pre = read("pre.json");
    assert_eq!(pre["hook_event_name"], "PreCompact");
    assert_eq!(pre["trigger"], "auto");
    assert_eq!(pre["custom_instructions"], "");
    assert!(
        pre["session_id"].as_str().unwrap().starts_with("sess_"),
        "{pre}"
    );
    let summary_request = server.requests()[2].body["messages"].to_string();
    assert!(
        summary_request
            .contains("The user's instructions for this summary: Keep the codename HERON."),
        "{summary_request}"
    );
    let post = read("post.json");
    assert_eq!(post["hook_event_name"], "PostCompact");
    assert_eq!(post["trigger"], "auto");
    assert_eq!(
        post["compact_summary"],
        "We read big.txt; the codename is HERON."
    );
    assert!(
        out.stderr.contains("The conversation was compacted"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_pre_compact_hook_that_blocks_stops_the_compaction_and_says_why() {
    let sb = sandbox();
    hooked(&sb, "echo 'not during the demo' >&2; exit 2");
    let server = reading_big_file_then(&["It repeats one line.", "Still one line."]);
    let out = two_runs(&sb, &server, &[]);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(
        out.stderr
            .contains("a PreCompact hook stopped the compaction: not during the demo"),
        "{}",
        out.stderr
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 3, "no summary was asked for");
    assert!(
        requests[2].body["messages"]
            .to_string()
            .contains("a line of the big file")
    );
    assert!(
        !sb.project().join("post.json").exists(),
        "nothing was compacted"
    );
}

#[test]
fn a_long_tool_result_is_cut_with_a_note_and_the_model_reads_the_rest_from_disk() {
    let sb = sandbox();
    sb.write("project/big.txt", &"a line of the big file\n".repeat(900));
    sb.write(
        "config/agentry/config.toml",
        "[compaction]\nmax_tool_result_chars = 2000\n",
    );
    let seen: std::sync::Arc<std::sync::Mutex<Vec<String>>> = Default::default();
    let results = seen.clone();
    let server = MockModelServer::start_responding_blocking(Box::new(move |body: &Value| {
        let last = body["messages"]
            .as_array()
            .unwrap()
            .last()
            .unwrap()
            .to_string();
        results.lock().unwrap().push(last.clone());
        let kept = regex::Regex::new(r"The whole is in (\S+): read it there")
            .unwrap()
            .captures(&last)
            .map(|found| found[1].to_owned());
        match (results.lock().unwrap().len(), kept) {
            (1, _) => MockTurn::Reply(MockReply::tool_call(
                "toolu_1",
                "Read",
                json!({"file_path": "big.txt"}),
            )),
            (2, Some(path)) => MockTurn::Reply(MockReply::tool_call(
                "toolu_2",
                "Read",
                json!({"file_path": path, "offset": 890, "limit": 3}),
            )),
            _ => MockTurn::Reply(MockReply::text("Read it all.")),
        }
    }));
    let out = run(&sb, &server, &["What is in big.txt?"]);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(out.stdout, "Read it all.\n");
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 3, "{seen:?}");
    assert!(seen[1].contains("characters cut"), "{}", seen[1]);
    assert!(
        seen[1].len() < 4_000,
        "the cut result is what the model got"
    );
    assert!(
        seen[2].contains("a line of the big file") && !seen[2].contains("characters cut"),
        "the rest, read from the kept file: {}",
        seen[2]
    );
}
