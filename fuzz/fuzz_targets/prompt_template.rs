//! A prompt template file (front matter, then the body with `{{name}}` placeholders), and the
//! text after its slash command read into its arguments and rendered.
#![no_main]

use std::path::Path;

libfuzzer_sys::fuzz_target!(|text: &str| {
    let (file, typed) = text.split_once('\u{0}').unwrap_or((text, ""));
    let Ok(template) = agentry_stock::templates::PromptTemplate::parse(Path::new("/t/fuzzed.md"), file)
    else {
        return;
    };
    let values = agentry::commands::arguments_from_text(&template.arguments, typed);
    let _ = template.render(&values);
});
