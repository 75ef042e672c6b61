//! The configuration file (`config.toml`): any text is read or refused with an error.
#![no_main]

libfuzzer_sys::fuzz_target!(|text: &str| {
    if let Ok(config) = toml::from_str::<agentry_stock::config::Config>(text) {
        let _ = config.merge(agentry_stock::config::Config::default());
    }
});
