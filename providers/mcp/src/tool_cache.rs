//! What a lazy server listed when it last ran (its description, tools and prompts), kept in the
//! data folder (`mcp-tools/SERVER.json`) so that its tools are offered before it starts. An
//! entry holds a digest of the server's configuration and project folder: a server configured
//! otherwise is listed afresh. Nothing of the configuration itself (its headers, its
//! environment) is written.

use crate::config::McpServerConfig;
use crate::offer::Offer;
use rmcp::model::{Prompt, Tool};
use serde::{Deserialize, Serialize};
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

/// One server's entry, as written.
#[derive(Serialize, Deserialize)]
struct Entry {
    /// The digest of the configuration and project it was listed with.
    digest: String,
    description: String,
    tools: Vec<Tool>,
    prompts: Vec<Prompt>,
}

/// Where one server's listing is kept.
pub(crate) struct ToolCache {
    path: PathBuf,
    digest: String,
}

impl ToolCache {
    /// The entry of server `name`, configured as `config` for `project`, in `folder`.
    pub(crate) fn new(folder: &Path, name: &str, config: &McpServerConfig, project: &Path) -> Self {
        let file = agentry_plugin::paths::file_name_from(name);
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        serde_json::to_string(config)
            .unwrap_or_default()
            .hash(&mut hasher);
        project.hash(&mut hasher);
        name.hash(&mut hasher);
        Self {
            path: folder.join(format!("{file}.json")),
            digest: format!("{:016x}", hasher.finish()),
        }
    }

    /// What the server listed when it last ran with this configuration, if it did.
    pub(crate) fn read(&self) -> Option<Offer> {
        let text = std::fs::read_to_string(&self.path).ok()?;
        let entry: Entry = serde_json::from_str(&text).ok()?;
        (entry.digest == self.digest).then_some(Offer {
            description: entry.description,
            tools: entry.tools,
            prompts: entry.prompts,
        })
    }

    /// Keeps `offer` as the server's listing (written whole, then renamed into place; a
    /// failure is logged, and the server is listed afresh next time).
    pub(crate) fn write(&self, offer: &Offer) {
        let entry = Entry {
            digest: self.digest.clone(),
            description: offer.description.clone(),
            tools: offer.tools.clone(),
            prompts: offer.prompts.clone(),
        };
        let written = (|| -> std::io::Result<()> {
            let folder = self.path.parent().unwrap_or(Path::new("."));
            std::fs::create_dir_all(folder)?;
            let mut file = tempfile::NamedTempFile::new_in(folder)?;
            serde_json::to_writer(&mut file, &entry)?;
            file.persist(&self.path).map_err(|e| e.error)?;
            Ok(())
        })();
        if let Err(error) = written {
            tracing::warn!(
                "cannot keep the tool list at {}: {error}",
                self.path.display()
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::StdioServer;

    fn server(command: &str) -> McpServerConfig {
        McpServerConfig::Stdio(StdioServer {
            command: command.to_owned(),
            args: Vec::new(),
            env: [("TOKEN".to_owned(), "s3cret".to_owned())].into(),
            cwd: None,
            lazy: true,
        })
    }

    #[test]
    fn a_listing_is_read_back_only_for_the_configuration_it_was_made_with() {
        let folder = tempfile::tempdir().unwrap();
        let project = Path::new("/work/project");
        let cache = ToolCache::new(folder.path(), "records/one", &server("srv"), project);
        assert!(cache.read().is_none());
        let offer = Offer {
            description: "Records 1.0".to_owned(),
            tools: vec![Tool::new("op_1", "Does op 1.", std::sync::Arc::default())],
            prompts: Vec::new(),
        };
        cache.write(&offer);
        let read = cache.read().unwrap();
        assert_eq!(read.tools, offer.tools);
        assert_eq!(read.description, "Records 1.0");
        let written = std::fs::read_to_string(folder.path().join("records_one.json")).unwrap();
        assert!(
            !written.contains("s3cret"),
            "no configuration is written: {written}"
        );
        let changed = ToolCache::new(folder.path(), "records/one", &server("other"), project);
        assert!(
            changed.read().is_none(),
            "another configuration lists afresh"
        );
        let elsewhere = ToolCache::new(
            folder.path(),
            "records/one",
            &server("srv"),
            Path::new("/x"),
        );
        assert!(elsewhere.read().is_none(), "so does another project");
    }
}
