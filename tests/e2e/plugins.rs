//! Tool plugins loaded into the real binary: listing, permissions and diffs, cancellation across
//! the boundary, contained panics, calls that never end, plugins that abort the process, and
//! every way a plugin can be unusable.

use crate::{built_plugin, sandbox};
use agentry_tests::Sandbox;
use nix::sys::signal::Signal;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// The example plugin cargo built for this test (a dev-dependency of agentry-cli).
fn hello_plugin() -> PathBuf {
    built_plugin("agentry_plugin_hello")
}

pub(crate) fn plugin_arg() -> String {
    hello_plugin().display().to_string()
}

#[test]
fn a_plugin_is_listed_beside_the_built_in_providers() {
    let out = sandbox().run(&["providers", "--json", "--plugin", &plugin_arg()]);
    assert_eq!(out.code, Some(0), "{out:?}");
    let listing = out.json();
    let hello = listing
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "hello")
        .unwrap();
    assert_eq!(
        hello["origin"],
        json!({"kind": "plugin", "path": plugin_arg()})
    );
    let kinds: Vec<(&str, &str)> = hello["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["name"].as_str().unwrap(), t["kind"].as_str().unwrap()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("WriteGreeting", "edit"),
            ("SlowCount", "think"),
            ("CountWords", "read"),
            ("Summarize", "read")
        ]
    );
}

/// Whether `agentry providers` lists the example plugin's provider.
fn lists_hello(sb: &Sandbox) -> bool {
    let listing = sb.run(&["providers", "--json"]).json();
    listing
        .as_array()
        .unwrap()
        .iter()
        .any(|p| p["name"] == "hello")
}

#[test]
fn plugins_come_from_configuration_and_the_plugin_folders() {
    let sb = sandbox();
    let folder = sb.project().join(".agentry/plugins");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::copy(hello_plugin(), folder.join("libhello.so")).unwrap();
    assert!(lists_hello(&sb), "the plugin folder was not read");
    std::fs::remove_file(folder.join("libhello.so")).unwrap();
    sb.write(
        "config/agentry/config.toml",
        &format!("plugins = [{:?}]\n", plugin_arg()),
    );
    assert!(
        lists_hello(&sb),
        "`plugins` in the configuration was not read"
    );
}

#[test]
fn a_plugin_named_with_the_flag_wins_over_the_same_one_in_a_plugin_folder() {
    let sb = sandbox();
    let folder = sb.project().join(".agentry/plugins");
    std::fs::create_dir_all(&folder).unwrap();
    let older = folder.join("libhello.so");
    std::fs::copy(hello_plugin(), &older).unwrap();
    let out = sb.run(&["providers", "--json", "--plugin", &plugin_arg()]);
    assert_eq!(out.code, Some(0), "{out:?}");
    let origins: Vec<Value> = out
        .json()
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["name"] == "hello")
        .map(|p| p["origin"].clone())
        .collect();
    assert_eq!(
        origins,
        [json!({"kind": "plugin", "path": plugin_arg()})],
        "{}",
        out.stdout
    );
    assert!(
        out.stderr.contains(&format!(
            "agentry: {} is left out: --plugin {} gives provider `hello`",
            older.display(),
            plugin_arg()
        )),
        "{}",
        out.stderr
    );
}

fn events_of(
    sb: &Sandbox,
    name: &str,
    script: Value,
    args: &[&str],
) -> (agentry_tests::Outcome, Vec<Value>) {
    let path = sb.script(name, &script);
    let mut all = vec!["--output-format", "stream-json"];
    all.extend(args);
    all.push("go");
    let out = sb.run_scripted(&path, &all);
    let events = out.json_lines();
    (out, events)
}

fn final_update<'a>(events: &'a [Value], id: &str) -> &'a Value {
    events
        .iter()
        .rev()
        .find(|e| {
            e["type"] == "tool_call_update" && e["tool_call_id"] == id && e["status"].is_string()
        })
        .unwrap()
}

#[test]
fn plugin_tools_go_through_permissions_and_report_diffs() {
    let sb = sandbox();
    let call = json!({"responses": [
        {"events": [{"tool_call": {"id": "g", "name": "WriteGreeting", "arguments": {"name": "Ada", "file": "hi.txt"}}}]},
        {"events": [{"text": "done"}]}
    ]});
    let (out, events) = events_of(&sb, "refused", call.clone(), &["--plugin", &plugin_arg()]);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(
        final_update(&events, "g")["status"],
        "failed",
        "an edit needs permission"
    );
    assert!(!sb.project().join("hi.txt").exists());

    let (_, events) = events_of(
        &sb,
        "allowed",
        call,
        &["--plugin", &plugin_arg(), "--allow", "WriteGreeting"],
    );
    let done = final_update(&events, "g");
    assert_eq!(done["status"], "completed");
    assert_eq!(done["content"][0]["type"], "diff");
    assert_eq!(done["content"][0]["newText"], "Hello, Ada!\n");
    let announced = events
        .iter()
        .find(|e| e["type"] == "tool_call" && e["tool_call_id"] == "g")
        .unwrap();
    assert_eq!(announced["title"], "Greet Ada in hi.txt");
    assert_eq!(announced["kind"], "edit");
    assert_eq!(
        std::fs::read_to_string(sb.project().join("hi.txt")).unwrap(),
        "Hello, Ada!\n"
    );
}

#[test]
fn a_plugin_is_made_from_its_own_section_and_a_misspelt_section_is_still_an_error() {
    let sb = sandbox();
    let call = json!({"responses": [
        {"events": [{"tool_call": {"id": "g", "name": "WriteGreeting", "arguments": {"name": "Ada", "file": "hi.txt"}}}]},
        {"events": [{"text": "done"}]}
    ]});
    let flags = ["--plugin", &plugin_arg(), "--allow", "WriteGreeting"];
    sb.write(
        "project/.agentry/config.toml",
        "[hello]\ngreeting = \"Howdy\"\n",
    );
    let (out, events) = events_of(&sb, "configured", call, &flags);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(final_update(&events, "g")["status"], "completed");
    assert_eq!(
        std::fs::read_to_string(sb.project().join("hi.txt")).unwrap(),
        "Howdy, Ada!\n"
    );

    // A section no provider reads is refused, naming the file and what the providers read.
    sb.write(
        "project/.agentry/config.toml",
        "[helo]\ngreeting = \"Howdy\"\n",
    );
    let out = sb.run(&["providers", "--plugin", &plugin_arg()]);
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(
        out.stderr.contains("unknown key `helo`")
            && out.stderr.contains("config.toml")
            && out.stderr.contains("hello"),
        "{}",
        out.stderr
    );
    // Without the plugin, `[hello]` is as unknown as any misspelling.
    sb.write(
        "project/.agentry/config.toml",
        "[hello]\ngreeting = \"Howdy\"\n",
    );
    let out = sb.run(&["providers"]);
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(out.stderr.contains("unknown key `hello`"), "{}", out.stderr);

    // A section the plugin cannot read leaves it out, with the plugin's reason.
    sb.write(
        "project/.agentry/config.toml",
        "[hello]\ngreting = \"Howdy\"\n",
    );
    let out = sb.run(&["providers", "--plugin", &plugin_arg()]);
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(
        out.stderr.contains("[hello]: unknown field `greting`"),
        "{}",
        out.stderr
    );
}

/// `agentry run --output-format stream-json ARGS go` with `script`, interrupted (SIGINT) once
/// a line says `when`: checks it ended cancelled (exit 130) and returns the events after `when`.
fn interrupted(sb: &Sandbox, script: &Path, args: &[&str], when: &str) -> Vec<Value> {
    let mut all = vec!["--output-format", "stream-json"];
    all.extend(args);
    all.push("go");
    let mut running = sb.spawn_scripted(script, &all);
    running.wait_for_line(|l| l.contains(when));
    running.signal(Signal::SIGINT);
    let status = running.wait();
    assert_eq!(status.code(), Some(130), "the turn ended, cancelled");
    running
        .rest()
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn a_slow_plugin_call_reports_progress_and_is_cancelled_across_the_boundary() {
    let sb = sandbox();
    let script = sb.script(
        "slow",
        &json!({"responses": [
            {"events": [{"tool_call": {"id": "c", "name": "SlowCount", "arguments": {"to": 600}}}]},
            {"events": [{"text": "never"}]}
        ]}),
    );
    let rest = interrupted(&sb, &script, &["--plugin", &plugin_arg()], "counted to 2");
    let update = rest
        .iter()
        .find(|e| e["tool_call_id"] == "c" && e["status"] == "failed")
        .expect("the call did not fail as cancelled");
    assert!(
        update["content"]
            .to_string()
            .contains("Cancelled by the user"),
        "{update}"
    );
    assert_eq!(rest.last().unwrap()["stop_reason"], "cancelled");
}

#[test]
fn a_panicking_plugin_tool_fails_its_call_and_the_plugin_is_disabled() {
    let sb = sandbox();
    let (out, events) = events_of(
        &sb,
        "panic",
        json!({"responses": [
            {"events": [{"tool_call": {"id": "p", "name": "WriteGreeting", "arguments": {"name": "panic", "file": "x.txt"}}}]},
            {"events": [{"tool_call": {"id": "after", "name": "SlowCount", "arguments": {"to": 1}}}]},
            {"events": [{"text": "still here"}]}
        ]}),
        &["--plugin", &plugin_arg(), "--permission-mode", "bypass"],
    );
    assert_eq!(out.code, Some(0), "the agent survives: {out:?}");
    let panicked = final_update(&events, "p");
    assert_eq!(panicked["status"], "failed");
    assert!(
        panicked["content"]
            .to_string()
            .contains("panicked (asked to panic)"),
        "{panicked}"
    );
    let after = final_update(&events, "after");
    assert_eq!(after["status"], "failed");
    assert!(
        after["content"]
            .to_string()
            .contains("disabled until agentry restarts"),
        "{after}"
    );
    assert_eq!(events.last().unwrap()["result"], "still here");
}

#[test]
fn a_plugin_built_for_abi_1_0_still_loads_and_its_calls_complete() {
    let sb = sandbox();
    let fixtures = tempfile::tempdir().unwrap();
    let plugin = broken(fixtures.path(), "misbehaving", "MISBEHAVING");
    let plugin = plugin.display().to_string();
    let script = sb.script(
        "done",
        &json!({"responses": [
            {"events": [{"tool_call": {"id": "d", "name": "Done", "arguments": {}}}]},
            {"events": [{"text": "finished"}]}
        ]}),
    );
    let out = sb.run_scripted(
        &script,
        &[
            "--plugin",
            &plugin,
            "--allow",
            "Done",
            "--output-format",
            "stream-json",
            "go",
        ],
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    let events = out.json_lines();
    let end = events
        .iter()
        .rfind(|e| e["type"] == "tool_call_update" && e["tool_call_id"] == "d")
        .unwrap();
    assert_eq!(end["status"], "completed", "{end}");
    assert!(end.to_string().contains("done by a 1.0 plugin"), "{end}");
}

#[test]
fn a_plugin_call_that_ignores_its_cancellation_is_abandoned_and_the_turn_ends() {
    let sb = sandbox();
    let fixtures = tempfile::tempdir().unwrap();
    let plugin = broken(fixtures.path(), "misbehaving", "MISBEHAVING");
    let script = sb.script(
        "hang",
        &json!({"responses": [
            {"events": [{"tool_call": {"id": "h", "name": "Hang", "arguments": {}}}]},
            {"events": [{"text": "never"}]}
        ]}),
    );
    let plugin = plugin.display().to_string();
    let rest = interrupted(
        &sb,
        &script,
        &["--plugin", &plugin, "--permission-mode", "bypass"],
        "in_progress",
    );
    let update = rest
        .iter()
        .find(|e| e["tool_call_id"] == "h" && e["status"] == "failed")
        .expect("the call ends, failed");
    assert!(update.to_string().contains("Cancelled"), "{update}");
}

#[test]
fn a_plugin_that_aborts_takes_the_process_down_and_the_chat_reads_as_interrupted() {
    use agentry_tests::mock_model::{MockModelServer, MockReply, MockTurn};
    let sb = sandbox();
    let fixtures = tempfile::tempdir().unwrap();
    let plugin = broken(fixtures.path(), "misbehaving", "MISBEHAVING");
    let plugin = plugin.display().to_string();
    let model = MockModelServer::start_blocking([
        MockTurn::Reply(MockReply::tool_call("a", "Abort", json!({}))),
        MockTurn::Reply(MockReply::text("Recovered.")),
    ]);
    let args = ["--plugin", &plugin, "--permission-mode", "bypass"];
    let mut first = args.to_vec();
    first.push("abort please");
    let out = crate::run_openai(&sb, &model, &first);
    assert_eq!(out.code, None, "killed by SIGABRT: {out:?}");
    let listed = sb.run(&["sessions", "--json"]);
    let id = listed.json()[0]["id"].as_str().unwrap().to_owned();
    let mut second = args.to_vec();
    second.extend(["--resume", &id, "and now?"]);
    let out = crate::run_openai(&sb, &model, &second);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(out.stdout, "Recovered.\n");
    let sent = model.requests()[1].body["messages"].to_string();
    assert_eq!(sent.matches("abort please").count(), 1, "{sent}");
    assert!(
        sent.contains("The previous request was interrupted"),
        "{sent}"
    );
}

/// Builds a broken plugin from the C fixture with `-D` flags (separated by spaces).
pub(crate) fn broken(dir: &Path, name: &str, flags: &str) -> PathBuf {
    let source = crate::repository().join("tests/fixtures/plugins/bad_plugin.c");
    let out = dir.join(format!("lib{name}.so"));
    let status = std::process::Command::new("cc")
        .args(["-shared", "-fPIC", "-o"])
        .arg(&out)
        .args(flags.split(' ').map(|flag| format!("-D{flag}")))
        .arg(&source)
        .status()
        .expect("a C compiler (cc) is needed to build the broken-plugin fixtures");
    assert!(status.success());
    out
}

#[test]
fn unusable_plugins_are_clear_errors_and_the_agent_runs_without_them() {
    let sb = sandbox();
    let fixtures = tempfile::tempdir().unwrap();
    let not_a_library = fixtures.path().join("libtext.so");
    std::fs::write(&not_a_library, "just text").unwrap();
    let cases = [
        (not_a_library, "not a loadable shared library"),
        (
            broken(fixtures.path(), "noinfo", "NO_INFO"),
            "not an agentry plugin (it has no `agentry_plugin_info` symbol",
        ),
        (
            broken(fixtures.path(), "abi99", "ABI_MAJOR=99"),
            "built for plugin ABI 99.0 (agentry-plugin 9.9.9, rustc 0.0.0 (a C fixture)), but this agentry speaks ABI 1.2",
        ),
        (
            broken(fixtures.path(), "abort", "PANIC_UNWIND=0"),
            "built with panic = \"abort\"",
        ),
        (
            broken(fixtures.path(), "badjson", "BAD_JSON"),
            "its provider description is unusable: it is not valid JSON",
        ),
    ];
    let script = sb.script(
        "plain",
        &json!({"responses": [{"events": [{"text": "fine"}]}]}),
    );
    let folder = sb.project().join(".agentry/plugins");
    std::fs::create_dir_all(&folder).unwrap();
    for (path, expected) in cases {
        // Named with --plugin: the command fails and says why.
        let out = sb.run_scripted(&script, &["--plugin", path.to_str().unwrap(), "hi"]);
        assert_eq!(out.code, Some(2), "{out:?}");
        assert_eq!(out.stdout, "");
        assert!(
            out.stderr
                .contains("the plugin named with --plugin did not load")
                && out.stderr.contains(expected),
            "{expected}: {}",
            out.stderr
        );
        // One failure, said once.
        assert_eq!(
            out.stderr.lines().filter(|l| l.contains(expected)).count(),
            1,
            "{}",
            out.stderr
        );
        // Found in a plugin folder: reported, and the agent runs without it.
        let found = folder.join(path.file_name().unwrap());
        std::fs::copy(&path, &found).unwrap();
        let out = sb.run_scripted(&script, &["hi"]);
        assert_eq!(out.code, Some(0), "{out:?}");
        assert_eq!(out.stdout, "fine\n");
        assert!(
            out.stderr.contains("agentry: plugin not loaded: ") && out.stderr.contains(expected),
            "{expected}: {}",
            out.stderr
        );
        let listing = sb.run(&["providers", "--json"]);
        assert_eq!(listing.code, Some(0), "{listing:?}");
        let row = listing
            .json()
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["origin"] == json!({"kind": "plugin", "path": found}))
            .cloned()
            .unwrap_or_else(|| panic!("{} is not listed: {}", found.display(), listing.stdout));
        assert_eq!(row["status"], "failed");
        assert!(
            row["description"].as_str().unwrap().contains(expected),
            "{row}"
        );
        std::fs::remove_file(&found).unwrap();
    }
}

#[test]
fn a_plugin_declaring_another_abi_is_refused_without_being_loaded() {
    let sb = sandbox();
    let fixtures = tempfile::tempdir().unwrap();
    let mark = fixtures.path().join("loaded");
    let mark_env = [("AGENTRY_TEST_LOADED_MARK", mark.to_str().unwrap())];
    // Declared: its ABI is read from the file, and it is refused with both versions named
    // before the system's loader runs any of its code.
    let declared = broken(fixtures.path(), "abi2", "DECLARED_ABI=\"2.0\" ABI_MAJOR=2");
    let out = sb.run_with_env(
        &["providers", "--plugin", declared.to_str().unwrap()],
        &mark_env,
    );
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(
        out.stderr.contains(
            "built for plugin ABI 2.0 (agentry-plugin 9.9.9, rustc 0.0.0 (a C fixture); for agentry >=9.9.0, <9.10.0), but this agentry speaks ABI 1.2"
        ),
        "{}",
        out.stderr
    );
    assert!(!mark.exists(), "the refused library was loaded");
    // Undeclared (a plugin from before ABI 1.2): only loading it tells, and its constructor runs.
    let undeclared = broken(fixtures.path(), "abi99", "ABI_MAJOR=99");
    let out = sb.run_with_env(
        &["providers", "--plugin", undeclared.to_str().unwrap()],
        &mark_env,
    );
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(
        out.stderr.contains("built for plugin ABI 99.0"),
        "{}",
        out.stderr
    );
    assert!(mark.exists(), "the undeclared library was never loaded");
}

#[test]
fn a_plugin_tool_with_a_broken_schema_is_kept_from_the_model_and_refused_with_the_reason() {
    use agentry_tests::mock_model::{MockModelServer, MockReply, MockTurn};
    let sb = sandbox();
    let fixtures = tempfile::tempdir().unwrap();
    let plugin = broken(fixtures.path(), "badschema", "BAD_SCHEMA");
    let model = MockModelServer::start_blocking([
        MockTurn::Reply(MockReply::tool_call("t1", "T", json!({}))),
        MockTurn::Reply(MockReply::text("Done without it.")),
    ]);
    let out = crate::run_openai(
        &sb,
        &model,
        &[
            "--plugin",
            plugin.to_str().unwrap(),
            "--permission-mode",
            "bypass",
            "use T",
        ],
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(out.stdout, "Done without it.\n");
    assert!(
        out.stderr.contains(
            "tool `T` from `bad` is left out: its input schema is not a valid JSON Schema"
        ),
        "{}",
        out.stderr
    );
    let requests = model.requests();
    let offered: Vec<&str> = requests[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|tool| tool["function"]["name"].as_str())
        .collect();
    assert!(offered.contains(&"Fine"), "{offered:?}");
    assert!(!offered.contains(&"T"), "{offered:?}");
    let answered = requests[1].body["messages"].to_string();
    assert!(
        answered.contains("T cannot be called: its input schema is not valid JSON Schema"),
        "{answered}"
    );
}

#[test]
fn not_a_plugin_asks_whether_export_plugin_is_missing_and_version_names_the_abi() {
    let sb = sandbox();
    let fixtures = tempfile::tempdir().unwrap();
    let path = broken(fixtures.path(), "noinfo", "NO_INFO");
    let out = sb.run(&["providers", "--plugin", path.to_str().unwrap()]);
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(
        out.stderr
            .contains("is `agentry_plugin_abi::export_plugin!(…)` missing"),
        "{}",
        out.stderr
    );
    let version = sb.run(&["-V"]);
    assert_eq!(version.code, Some(0), "{version:?}");
    assert!(
        version.stdout.ends_with(", plugin ABI 1.2)\n"),
        "{}",
        version.stdout
    );
}
