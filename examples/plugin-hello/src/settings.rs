//! The plugin's settings: `[hello]` in agentry's `config.toml`, which agentry hands over when it
//! loads the plugin (and then accepts in the file).

use crate::{WriteGreeting, provider};
use agentry_plugin::settings::{Configured, Making, Recipe, Settings, made};
use serde::Deserialize;

/// The `[hello]` section, every key optional.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HelloSettings {
    /// The word greetings open with (`Hello`).
    greeting: Option<String>,
}

/// How agentry makes the provider: from `[hello]`. A table it cannot read leaves the plugin
/// out, with the reason.
pub const RECIPE: Recipe = Recipe {
    name: "hello",
    sections: &["hello"],
    make,
};

fn make(settings: Settings) -> Making {
    let greeting = match settings.section("hello") {
        None => Ok(WriteGreeting::default()),
        Some(table) => HelloSettings::deserialize(table)
            .map(|chosen| WriteGreeting {
                greeting: chosen.greeting.unwrap_or_else(|| "Hello".to_owned()),
            })
            .map_err(|e| format!("[hello]: {e}")),
    };
    made(greeting.map(|greeting| Configured::new(provider(greeting))))
}
