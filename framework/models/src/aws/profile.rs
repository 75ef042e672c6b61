//! AWS's shared configuration files, `~/.aws/credentials` (sections named by the profile) and
//! `~/.aws/config` (`[default]` and `[profile NAME]`), as the AWS CLI and SDKs read them:
//! `key = value` lines, `#` and `;` comments, and indented lines that continue the key above
//! (sub-settings, which nothing here reads).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// One profile's settings, keys lowercase.
pub type Profile = HashMap<String, String>;

/// The settings of profile `name` from both files, the credentials file's winning where both set
/// a key; `None` when neither file has the profile.
pub fn load(files: &ProfileFiles, name: &str) -> Option<Profile> {
    let from_config = read(&files.config).and_then(|text| {
        let section = if name == "default" {
            "default".to_owned()
        } else {
            format!("profile {name}")
        };
        // The config file's `[default]` may also be written `[profile default]`.
        let mut sections = sections(&text);
        sections
            .remove(&section)
            .or_else(|| sections.remove(&format!("profile {name}")))
    });
    let from_credentials = read(&files.credentials).and_then(|text| sections(&text).remove(name));
    match (from_config, from_credentials) {
        (None, None) => None,
        (config, credentials) => {
            let mut profile = config.unwrap_or_default();
            profile.extend(credentials.unwrap_or_default());
            Some(profile)
        }
    }
}

/// Where the two files are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileFiles {
    /// The credentials file (`AWS_SHARED_CREDENTIALS_FILE`, or `~/.aws/credentials`).
    pub credentials: PathBuf,
    /// The config file (`AWS_CONFIG_FILE`, or `~/.aws/config`).
    pub config: PathBuf,
}

fn read(path: &Path) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// Every section of a file, by its name as written between the brackets (trimmed).
fn sections(text: &str) -> HashMap<String, Profile> {
    let mut sections: HashMap<String, Profile> = HashMap::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with(';') {
            continue;
        }
        if let Some(name) = trimmed
            .strip_prefix('[')
            .and_then(|rest| rest.strip_suffix(']'))
        {
            let name = name.split_whitespace().collect::<Vec<_>>().join(" ");
            sections.entry(name.clone()).or_default();
            current = Some(name);
            continue;
        }
        // An indented line continues the key above (a sub-setting): not a key of its own.
        if line.starts_with([' ', '\t']) {
            continue;
        }
        let (Some(section), Some((key, value))) = (&current, trimmed.split_once('=')) else {
            continue;
        };
        let value = value.trim();
        // A comment after a value needs whitespace before it (`key = a#b` keeps `a#b`).
        let value = value
            .find(" #")
            .or_else(|| value.find(" ;"))
            .map_or(value, |at| value[..at].trim_end());
        if let Some(settings) = sections.get_mut(section) {
            settings.insert(key.trim().to_ascii_lowercase(), value.to_owned());
        }
    }
    sections
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_read_as_the_cli_reads_them() {
        let parsed = sections(
            "# comment\n[default]\naws_access_key_id = AKID\n; another\nAWS_Secret_Access_Key=s#x # note\n\
             [profile  work ]\nregion = eu-west-1\ns3 =\n  max_concurrent_requests = 20\n",
        );
        assert_eq!(parsed["default"]["aws_access_key_id"], "AKID");
        assert_eq!(parsed["default"]["aws_secret_access_key"], "s#x");
        assert_eq!(parsed["profile work"]["region"], "eu-west-1");
        assert!(!parsed["profile work"].contains_key("max_concurrent_requests"));
    }

    #[test]
    fn the_credentials_file_wins_over_the_config_file() {
        let dir = tempfile::tempdir().unwrap();
        let files = ProfileFiles {
            credentials: dir.path().join("credentials"),
            config: dir.path().join("config"),
        };
        std::fs::write(
            &files.config,
            "[profile work]\nregion = eu-west-1\naws_access_key_id = OLD\n",
        )
        .unwrap();
        std::fs::write(&files.credentials, "[work]\naws_access_key_id = NEW\n").unwrap();
        let work = load(&files, "work").unwrap();
        assert_eq!(
            (work["region"].as_str(), work["aws_access_key_id"].as_str()),
            ("eu-west-1", "NEW")
        );
        assert_eq!(load(&files, "absent"), None);
    }
}
