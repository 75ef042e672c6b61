//! The documentation's code and commands, checked against the repository: the plugin guide
//! shows the example plugins' sources whole, the smallest plugin fits in 15 lines, and the
//! scripts the guides show run in the real binary.

use crate::{built_plugin, repository, sandbox};

fn read(relative: &str) -> String {
    std::fs::read_to_string(repository().join(relative)).unwrap()
}

/// The fenced blocks of `language` in a Markdown text.
fn code_blocks(markdown: &str, language: &str) -> Vec<String> {
    let fence = format!("```{language}\n");
    markdown
        .split(&fence)
        .skip(1)
        .map(|rest| rest.split("```\n").next().unwrap().to_owned())
        .collect()
}

#[test]
fn the_plugin_guide_shows_the_example_sources_whole() {
    let guide = read("docs/book/src/writing-a-plugin.md");
    let blocks = code_blocks(&guide, "rust");
    for source in [
        "examples/plugin-minimal/src/lib.rs",
        "examples/plugin-hello/src/count_words.rs",
        "examples/plugin-hello/src/settings.rs",
        "examples/plugin-hello/src/summarize.rs",
    ] {
        let text = read(source);
        assert!(
            blocks.contains(&text),
            "the book's plugin chapter does not show {source} as it is"
        );
    }
}

#[test]
fn the_smallest_plugin_fits_in_15_lines_and_its_tool_runs() {
    let source = read("examples/plugin-minimal/src/lib.rs");
    let lines = source.lines().filter(|l| !l.trim().is_empty()).count();
    assert!(lines <= 15, "the smallest plugin has {lines} lines");
    let sb = sandbox();
    // The script the guide has its reader save as greet.json.
    let guide = read("docs/book/src/writing-a-plugin.md");
    let script = sb.write("greet.json", &code_blocks(&guide, "json").remove(0));
    let plugin = built_plugin("agentry_plugin_minimal").display().to_string();
    let out = sb.run_scripted(&script, &["--plugin", &plugin, "Greet Ada"]);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(out.stdout, "The tool said: Hello, Ada!\n");
    let listing = sb.run(&["providers", "--json", "--plugin", &plugin]).json();
    let greetings = listing
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "greetings")
        .unwrap();
    assert_eq!(greetings["tools"][0]["name"], "Hello");
    assert_eq!(greetings["tools"][0]["kind"], "think");
}

#[test]
fn the_scripted_model_guides_example_runs_as_documented() {
    let guide = read("docs/book/src/scripted-model.md");
    let example = code_blocks(&guide, "json").remove(0);
    let sb = sandbox();
    sb.write("project/README.md", "# A project\n");
    let script = sb.write("example.json", &example);
    let out = sb.run_scripted(
        &script,
        &[
            "--output-format",
            "stream-json",
            "--allow",
            "Read",
            "What is this?",
        ],
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    let events = out.json_lines();
    let read = events
        .iter()
        .find(|e| e["type"] == "tool_call_update" && e["status"] == "completed")
        .unwrap_or_else(|| panic!("the Read call did not complete: {}", out.stdout));
    assert!(read.to_string().contains("A project"), "{read}");
    let ended = events.last().unwrap();
    assert_eq!(ended["type"], "chat_ended");
    assert_eq!(ended["result"], "It is the project's README.");
}
