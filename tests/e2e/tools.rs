//! The stock tools in the real binary, driven by the mock model: what models trip over when
//! a tool differs from the ones they were trained on.

use crate::both_ways;
use crate::loading::{Loading, as_strs};
use crate::{run_openai, tool_result_in};
use agentry_tests::mock_model::{MockModelServer, MockReply, MockTurn};
use serde_json::json;

both_ways!(a_crlf_file_is_edited_with_the_lines_read_showed_and_keeps_crlf);
fn a_crlf_file_is_edited_with_the_lines_read_showed_and_keeps_crlf(loading: Loading) {
    let sb = loading.sandbox();
    sb.write("project/win.txt", "first\r\nsecond\r\nthird\r\n");
    let server = MockModelServer::start_blocking([
        MockTurn::Reply(MockReply::tool_call(
            "r",
            "Read",
            json!({"file_path": "win.txt"}),
        )),
        MockTurn::Reply(MockReply::tool_call(
            "e",
            "Edit",
            json!({"file_path": "win.txt", "old_string": "first\nsecond", "new_string": "one\ntwo"}),
        )),
        MockTurn::Reply(MockReply::text("Edited.")),
    ]);
    let args = loading.args(&["--allow", "Edit", "edit the file"]);
    let out = run_openai(&sb, &server, &as_strs(&args));
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(
        !tool_result_in(&server, 1).contains("\\r"),
        "Read shows no \\r"
    );
    let edited = tool_result_in(&server, 2);
    assert!(edited.contains("Edited"), "{edited}");
    let text = std::fs::read_to_string(sb.project().join("win.txt")).unwrap();
    assert_eq!(text, "one\r\ntwo\r\nthird\r\n");
}

both_ways!(an_absolute_glob_pattern_finds_files);
fn an_absolute_glob_pattern_finds_files(loading: Loading) {
    let sb = loading.sandbox();
    sb.write("project/src/deep/lib.rs", "pub fn f() {}\n");
    sb.write("project/README.md", "# p\n");
    let pattern = format!("{}/src/**/*.rs", sb.project().display());
    let server = MockModelServer::start_blocking([
        MockTurn::Reply(MockReply::tool_call(
            "g",
            "Glob",
            json!({"pattern": pattern}),
        )),
        MockTurn::Reply(MockReply::text("Found it.")),
    ]);
    let out = run_openai(&sb, &server, &as_strs(&loading.args(&["find the sources"])));
    assert_eq!(out.code, Some(0), "{out:?}");
    let found = tool_result_in(&server, 1);
    assert!(found.contains("src/deep/lib.rs"), "{found}");
    assert!(!found.contains("README.md"), "{found}");
}

both_ways!(a_claude_code_sub_agent_definition_runs_as_a_tagged_nested_loop);
fn a_claude_code_sub_agent_definition_runs_as_a_tagged_nested_loop(loading: Loading) {
    let sb = loading.sandbox();
    sb.write(
        "project/.claude/agents/finder.md",
        "---\nname: file-finder\ndescription: Finds files.\ntools: Glob\n---\nYou find files.\n",
    );
    sb.write("project/src/main.rs", "fn main() {}\n");
    let server = MockModelServer::start_blocking([
        MockTurn::Reply(MockReply::tool_call(
            "fork_1",
            "Agent",
            json!({"description": "Find sources", "prompt": "Find the Rust files", "subagent_type": "file-finder"}),
        )),
        MockTurn::Reply(MockReply::tool_call(
            "g",
            "Glob",
            json!({"pattern": "**/*.rs"}),
        )),
        MockTurn::Reply(MockReply::text("src/main.rs is the only one.")),
        MockTurn::Reply(MockReply::text("There is one Rust file.")),
    ]);
    let args = loading.args(&["--output-format", "stream-json", "find the sources"]);
    let out = run_openai(&sb, &server, &as_strs(&args));
    assert_eq!(out.code, Some(0), "{out:?}");
    let requests = server.requests();
    let child_tools: Vec<&str> = requests[1].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(child_tools, ["Glob"]);
    assert!(
        requests[1].body["messages"][0]["content"]
            .as_str()
            .unwrap()
            .starts_with("You find files."),
        "{}",
        requests[1].body["messages"][0]
    );
    assert!(tool_result_in(&server, 3).contains("src/main.rs is the only one."));
    let turns: Vec<(serde_json::Value, serde_json::Value)> = out
        .stdout
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
        .filter(|event| event["type"] == "turn_started")
        .map(|event| {
            (
                event["parent_fork_tool_call_id"].clone(),
                event["loop_id"].clone(),
            )
        })
        .collect();
    let root = (json!(null), json!("root"));
    let child = (json!("fork_1"), json!("loop_fork_1"));
    assert_eq!(
        turns,
        [
            root.clone(),
            root.clone(),
            child.clone(),
            child.clone(),
            child,
            root
        ]
    );
}

both_ways!(skills_are_offered_by_name_loaded_by_the_skill_tool_and_run_as_slash_commands);
fn skills_are_offered_by_name_loaded_by_the_skill_tool_and_run_as_slash_commands(loading: Loading) {
    let sb = loading.sandbox();
    sb.write(
        "project/.agents/skills/haiku-writer/SKILL.md",
        "---\nname: haiku-writer\ndescription: Writes haiku.\n---\nCount five, seven, five syllables.\n",
    );
    let listing = loading.after(&["commands", "--json"]);
    let listed = sb.run(&as_strs(&listing)).json();
    assert_eq!(listed[0]["name"], "haiku-writer");
    assert_eq!(listed[0]["origin"], "skill");
    let server = MockModelServer::start_blocking([
        MockTurn::Reply(MockReply::tool_call(
            "s",
            "Skill",
            json!({"skill": "haiku-writer"}),
        )),
        MockTurn::Reply(MockReply::text("An old pond.")),
        MockTurn::Reply(MockReply::text("Frog jumps in.")),
    ]);
    let out = run_openai(&sb, &server, &as_strs(&loading.args(&["write a haiku"])));
    assert_eq!(out.code, Some(0), "{out:?}");
    let requests = server.requests();
    let skill_tool = requests[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|tool| tool["function"]["name"] == "Skill")
        .unwrap()
        .clone();
    let description = skill_tool["function"]["description"].as_str().unwrap();
    assert!(
        description.contains("- haiku-writer: Writes haiku."),
        "{description}"
    );
    assert!(
        !description.contains("syllables"),
        "only names and descriptions up front"
    );
    assert!(tool_result_in(&server, 1).contains("Count five, seven, five syllables."));
    let args = loading.args(&["/haiku-writer about frogs"]);
    let out = run_openai(&sb, &server, &as_strs(&args));
    assert_eq!(out.code, Some(0), "{out:?}");
    let prompt = server.requests()[2].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()["content"]
        .to_string();
    assert!(prompt.contains("# Skill: haiku-writer"), "{prompt}");
    assert!(prompt.contains("ARGUMENTS: about frogs"), "{prompt}");
}

both_ways!(a_users_skill_folder_is_readable_without_asking_and_nothing_beside_it);
fn a_users_skill_folder_is_readable_without_asking_and_nothing_beside_it(loading: Loading) {
    let sb = loading.sandbox();
    sb.write(
        "config/agentry/skills/style/SKILL.md",
        "---\nname: style\ndescription: The house style.\n---\nRead rules.md first.\n",
    );
    sb.write("config/agentry/skills/style/rules.md", "Use tabs.\n");
    sb.write("config/agentry/notes.txt", "not a skill's\n");
    let root = sb.project().parent().unwrap().to_path_buf();
    let read = |id: &str, path: std::path::PathBuf| {
        MockTurn::Reply(MockReply::tool_call(
            id,
            "Read",
            json!({"file_path": path.display().to_string()}),
        ))
    };
    let server = MockModelServer::start_blocking([
        read("rules", root.join("config/agentry/skills/style/rules.md")),
        read("beside", root.join("config/agentry/notes.txt")),
        MockTurn::Reply(MockReply::text("Tabs.")),
    ]);
    // Headless: a call that would ask is refused, so only what needs no asking is read.
    let out = run_openai(
        &sb,
        &server,
        &as_strs(&loading.args(&["what is the style?"])),
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(tool_result_in(&server, 1).contains("Use tabs."));
    let beside = tool_result_in(&server, 2);
    assert!(!beside.contains("not a skill's"), "{beside}");
}

both_ways!(a_headless_run_asks_questions_only_with_an_answers_file);
fn a_headless_run_asks_questions_only_with_an_answers_file(loading: Loading) {
    let sb = loading.sandbox();
    let question = json!({"questions": [{
        "question": "Which license?",
        "header": "License",
        "options": [{"label": "MIT"}, {"label": "Apache-2.0"}],
    }]});
    let server = MockModelServer::start_blocking([
        MockTurn::Reply(MockReply::text("I will pick one myself.")),
        MockTurn::Reply(MockReply::tool_call("q", "AskUserQuestion", question)),
        MockTurn::Reply(MockReply::text("Apache-2.0 it is.")),
    ]);
    let offered = |n: usize| {
        server.requests()[n].body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|tool| tool["function"]["name"] == "AskUserQuestion")
    };
    let out = run_openai(&sb, &server, &as_strs(&loading.args(&["choose a license"])));
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(!offered(0), "nobody can answer a headless run");
    sb.write("project/answers.json", r#"[{"selections": {"0": [1]}}]"#);
    let answers = sb.project().join("answers.json").display().to_string();
    let args = loading.args(&["--answers", &answers, "choose a license"]);
    let out = run_openai(&sb, &server, &as_strs(&args));
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(offered(1));
    let result = tool_result_in(&server, 2);
    assert!(
        result.contains(r#"\"Which license?\" = \"Apache-2.0\""#),
        "{result}"
    );
    sb.write("project/bad.json", "{\"selections\": 1}");
    let bad = sb.project().join("bad.json").display().to_string();
    let out = run_openai(
        &sb,
        &server,
        &as_strs(&loading.args(&["--answers", &bad, "choose"])),
    );
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(
        out.stderr.contains("is not a list of answers"),
        "{}",
        out.stderr
    );
}
