//! The configuration's sections that belong to tool providers: every top-level key the
//! framework does not read (`[webfetch]`, `[mcp_servers.NAME]`, `[[http_tools]]`, a third
//! party's `[my_provider]`), kept as written for the provider that owns it to read.

use super::ConfigError;
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The providers' sections of a configuration, each as written and with the file it came from.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct ProviderSections {
    #[serde(flatten)]
    values: BTreeMap<String, Value>,
    #[serde(skip)]
    files: BTreeMap<String, PathBuf>,
}

impl ProviderSections {
    /// The section `name`, as written (after layering), if any layer has it.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.values.get(name)
    }

    /// The names of the sections there are.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.values.keys().map(String::as_str)
    }

    /// Sets the section `name` (as a binary does for a flag that overrides a setting).
    pub fn set(&mut self, name: &str, value: Value) {
        self.values.insert(name.to_owned(), value);
    }

    /// The same sections, each marked as written in `path`.
    pub(super) fn written_in(mut self, path: &Path) -> Self {
        self.files = self
            .values
            .keys()
            .map(|name| (name.clone(), path.to_path_buf()))
            .collect();
        self
    }

    /// Fails on a section no provider reads, naming the file it is in: a misspelt key is not to
    /// pass unnoticed.
    pub(super) fn check_known(&self, known: &[&str]) -> Result<(), ConfigError> {
        match self
            .values
            .keys()
            .find(|name| !known.contains(&name.as_str()))
        {
            None => Ok(()),
            Some(name) => Err(ConfigError::Invalid {
                path: self.files.get(name).cloned().unwrap_or_default(),
                message: format!(
                    "unknown key `{name}`: neither agentry nor its tool providers read it{}",
                    match known {
                        [] => String::new(),
                        known => format!(" (the providers read {})", known.join(", ")),
                    }
                ),
            }),
        }
    }

    /// Lays `other` over `self`, section by section: tables merge key by key (the later layer's
    /// value wins), lists extend, anything else is replaced.
    pub(super) fn merged(mut self, other: ProviderSections) -> ProviderSections {
        for (name, value) in other.values {
            let merged = match (self.values.remove(&name), value) {
                (Some(Value::Object(mut earlier)), Value::Object(later)) => {
                    earlier.extend(later);
                    Value::Object(earlier)
                }
                (Some(Value::Array(mut earlier)), Value::Array(later)) => {
                    earlier.extend(later);
                    Value::Array(earlier)
                }
                (_, later) => later,
            };
            self.values.insert(name, merged);
        }
        self.files.extend(other.files);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sections(value: Value) -> ProviderSections {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn tables_merge_by_key_lists_extend_and_values_are_replaced() {
        let user = sections(json!({
            "timeouts": {"start": 5, "call": 600},
            "endpoints": [{"name": "a"}],
            "mode": "read-only",
        }));
        let project = sections(json!({
            "timeouts": {"call": 30},
            "endpoints": [{"name": "b"}],
            "mode": {"network": true},
        }));
        let merged = user.merged(project);
        assert_eq!(
            merged.get("timeouts"),
            Some(&json!({"start": 5, "call": 30}))
        );
        assert_eq!(
            merged.get("endpoints"),
            Some(&json!([{"name": "a"}, {"name": "b"}]))
        );
        assert_eq!(merged.get("mode"), Some(&json!({"network": true})));
    }

    #[test]
    fn a_section_no_provider_reads_is_an_error_naming_its_file() {
        let read =
            sections(json!({"my_provider": {}, "modle": "x"})).written_in(Path::new("a.toml"));
        assert!(read.check_known(&["my_provider", "modle"]).is_ok());
        let error = read.check_known(&["my_provider"]).unwrap_err().to_string();
        assert!(error.contains("a.toml"), "{error}");
        assert!(error.contains("unknown key `modle`"), "{error}");
    }
}
