//! YAML front matter, as prompt templates, skills (SKILL.md) and sub-agent definitions start.
#![no_main]

libfuzzer_sys::fuzz_target!(|text: &str| {
    let _ = agentry_front_matter::split(text);
    let _ = agentry_front_matter::read::<serde_json::Value>(text);
    let _ = agentry_front_matter::line_of(text, "description");
});
