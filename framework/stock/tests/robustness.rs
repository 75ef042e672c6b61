//! The stock agent's parsers of what it does not control (configuration, front matter, prompt
//! templates) take any input without panicking: a value or an error. The same inputs are fuzzed
//! at length with `./scripts/fuzz`; these property tests run a few hundred cases each in the
//! normal test run.
#![allow(clippy::unwrap_used, missing_docs)]

use proptest::prelude::*;
use serde_json::Value;

proptest! {
    #[test]
    fn configuration_text_is_read_or_refused(text in "(?s).{0,300}") {
        let _ = toml::from_str::<agentry_stock::config::Config>(&text);
    }

    #[test]
    fn front_matter_is_read_or_refused(
        head in "[a-z_-]{0,10}: ?[^\n]{0,30}",
        body in "(?s).{0,100}",
        fence in prop::sample::select(vec!["---\n", "---\r\n", "--- \n", ""]),
    ) {
        let text = format!("{fence}{head}\n---\n{body}");
        if let Ok((_, rest)) = agentry_front_matter::read::<Value>(&text) {
            prop_assert!(text.ends_with(rest));
        }
    }

    #[test]
    fn prompt_templates_are_read_and_rendered_or_refused(
        name in "[a-z]{1,6}",
        body in "(?s)[^{}]{0,40}",
        typed in "[a-z \"]{0,30}",
    ) {
        let text = format!(
            "---\narguments:\n  - name: {name}\n    required: true\n---\n{body}{{{{{name}}}}}!\n"
        );
        let template =
            agentry_stock::templates::PromptTemplate::parse(std::path::Path::new("/t/p.md"), &text)
                .unwrap();
        let values = agentry::commands::arguments_from_text(&template.arguments, &typed);
        match template.render(&values) {
            Ok(rendered) => {
                let value = &values[&name];
                prop_assert!(rendered.ends_with(&format!("{value}!\n")), "{rendered:?}");
            }
            Err(error) => prop_assert!(error.to_string().contains(&name), "{error}"),
        }
    }
}
