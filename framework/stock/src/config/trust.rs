//! Workspace trust. A project folder's own settings — `.agentry/config.toml`, Claude Code's
//! `.claude/settings.json` and `settings.local.json`, `.mcp.json`, plugins in
//! `.agentry/plugins/` — may widen what runs unasked (a permission mode, `allow` rules, more
//! workspace roots), run code (hooks, MCP servers, plugins, HTTP tools), or send the user's
//! credentials or conversation elsewhere (a model provider's `base_url`, a store, traces). A
//! cloned repository, or a model that wrote those files, must not get that by being opened: such
//! settings take effect only in a folder the user trusts. Settings that narrow — deny and ask
//! rules, disabled tools — always apply.
//!
//! Trust is kept in the user's data folder (`trusted-folders.json`), with a digest of the
//! folder's settings files: a change to them asks again.

use crate::config::{CheckpointConfig, Config};
use agentry::limits;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The file, in the data folder, the trusted folders are kept in.
const TRUSTED_FOLDERS_FILE: &str = "trusted-folders.json";

/// One setting a project's files would enable that takes trust.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Withheld {
    /// The file it is written in.
    pub file: PathBuf,
    /// What it would enable.
    pub what: String,
}

impl std::fmt::Display for Withheld {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.what, self.file.display())
    }
}

/// The project's files whose settings take trust, relative to the project, that exist: the
/// configuration files, `.mcp.json`, and the plugins in `.agentry/plugins/`.
pub fn settings_files(project: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = [
        ".agentry/config.toml",
        ".claude/settings.json",
        ".claude/settings.local.json",
        ".mcp.json",
    ]
    .iter()
    .map(PathBuf::from)
    .collect();
    if let Ok(entries) = std::fs::read_dir(project.join(".agentry/plugins")) {
        let mut plugins: Vec<PathBuf> = entries
            .filter_map(|entry| entry.ok())
            .map(|entry| Path::new(".agentry/plugins").join(entry.file_name()))
            .collect();
        plugins.sort();
        files.extend(plugins);
    }
    files.retain(|file| project.join(file).symlink_metadata().is_ok());
    files
}

/// The digest of the project's settings files and of the files they run (their names and
/// contents): what trust is given for. A file that cannot be read (a FIFO, say) counts by why.
pub fn settings_digest(project: &Path) -> String {
    let mut hasher = Sha256::new();
    let run = files_settings_run(project)
        .into_iter()
        .filter_map(|file| file.strip_prefix(project).ok().map(Path::to_path_buf));
    for file in settings_files(project).into_iter().chain(run) {
        hasher.update(file.to_string_lossy().as_bytes());
        hasher.update([0]);
        match file_digest(&project.join(&file)) {
            Ok(digest) => hasher.update(digest),
            Err(error) => hasher.update(error.to_string().as_bytes()),
        }
        hasher.update([0]);
    }
    hex(&hasher.finalize())
}

/// The SHA-256 of a regular file's contents, read without waiting on a FIFO.
pub(crate) fn file_digest(path: &Path) -> std::io::Result<[u8; 32]> {
    let mut file = agentry_plugin::paths::open_regular(path)?;
    let mut hasher = Sha256::new();
    std::io::copy(&mut file, &mut hasher)?;
    Ok(hasher.finalize().into())
}

/// Bytes as lowercase hexadecimal.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// The files inside `project` that its settings files name, canonical: a hook's script, an MCP
/// server's program, a plugin library — any word of any text in them that is a file of the
/// project (`$CLAUDE_PROJECT_DIR` and `$AGENTRY_PROJECT_DIR` read as the project). Their contents decide what the settings
/// run, so trust covers them, and a trusted project's run protects them from writes.
pub fn files_settings_run(project: &Path) -> Vec<PathBuf> {
    let root = agentry_plugin::paths::canonical_path(project);
    let mut files: Vec<PathBuf> = settings_files(project)
        .into_iter()
        .filter(|file| !file.starts_with(".agentry/plugins"))
        .filter_map(|file| {
            agentry_plugin::paths::read_regular_file(&project.join(&file), MAX_SETTINGS_BYTES)
                .ok()
                .flatten()
                .map(|text| (file, text))
        })
        .flat_map(|(file, text)| texts_of(&file, &text))
        .flat_map(|text| named_files(&text, project, &root))
        .collect();
    files.sort();
    files.dedup();
    files
}

/// The largest settings file whose words are looked at.
const MAX_SETTINGS_BYTES: u64 = 1024 * 1024;

/// Every text value of a settings file (TOML or JSON, by its name), its keys left out.
fn texts_of(file: &Path, text: &str) -> Vec<String> {
    fn walk(value: &serde_json::Value, out: &mut Vec<String>) {
        match value {
            serde_json::Value::String(text) => out.push(text.clone()),
            serde_json::Value::Array(items) => items.iter().for_each(|item| walk(item, out)),
            serde_json::Value::Object(map) => map.values().for_each(|item| walk(item, out)),
            _ => {}
        }
    }
    let value = if file.extension().is_some_and(|ext| ext == "toml") {
        toml::from_str::<serde_json::Value>(text).ok()
    } else {
        serde_json::from_str::<serde_json::Value>(text).ok()
    };
    let mut out = Vec::new();
    if let Some(value) = value {
        walk(&value, &mut out);
    }
    out
}

/// The files of the project (canonical, under `root`) that words of `text` name, from
/// `project` or absolutely.
fn named_files(text: &str, project: &Path, root: &Path) -> Vec<PathBuf> {
    // Quotes join what they hold to what is around them, as the shell reads it.
    let text = text
        .replace(['"', '\''], "")
        .replace("${CLAUDE_PROJECT_DIR}", &project.to_string_lossy())
        .replace("$CLAUDE_PROJECT_DIR", &project.to_string_lossy())
        .replace("${AGENTRY_PROJECT_DIR}", &project.to_string_lossy())
        .replace("$AGENTRY_PROJECT_DIR", &project.to_string_lossy());
    text.split(|c: char| c.is_whitespace() || "=;&|()<>`,".contains(c))
        .filter(|word| !word.is_empty() && !word.contains("://"))
        .map(|word| agentry_plugin::paths::canonical_path(&project.join(word)))
        .filter(|path| path.starts_with(root) && path != root && path.is_file())
        .collect()
}

/// What a project folder's own files would enable if it were trusted: each setting an
/// untrusted folder leaves out. Empty when they enable nothing that takes trust.
pub fn withheld(project: &Path) -> Result<Vec<Withheld>, crate::config::ConfigError> {
    let mut withheld = Vec::new();
    let user = Config::load_user()?;
    for (file, layer) in Config::project_layers(project)? {
        withheld.extend(narrowed(layer, &file, &user).1);
    }
    let mcp_json = project.join(".mcp.json");
    if mcp_json.symlink_metadata().is_ok() {
        withheld.push(Withheld {
            what: format!(
                "MCP servers, started as commands or reached with your tokens: {}",
                mcp_servers(&mcp_json)
            ),
            file: mcp_json,
        });
    }
    for plugin in settings_files(project)
        .into_iter()
        .filter(|file| file.starts_with(".agentry/plugins"))
    {
        withheld.push(Withheld {
            file: project.join(&plugin),
            what: "a plugin library, loaded into agentry".to_owned(),
        });
    }
    Ok(withheld)
}

/// The servers a `.mcp.json` names, each with the command it starts or the address it reaches
/// (`x` (`node server.js`)); what is wrong with the file when it cannot be read.
fn mcp_servers(file: &Path) -> String {
    let text = match agentry_plugin::paths::read_regular_file(file, MAX_SETTINGS_BYTES) {
        Ok(text) => text.unwrap_or_default(),
        Err(error) => return error.to_string(),
    };
    let Ok(json) = serde_json::from_str::<serde_json::Value>(&text) else {
        return "the file is not valid JSON".to_owned();
    };
    let Some(servers) = json["mcpServers"].as_object() else {
        return "none named".to_owned();
    };
    let words = |server: &serde_json::Value| -> String {
        let command = server["command"].as_str().or(server["url"].as_str());
        let args = server["args"].as_array().into_iter().flatten();
        command
            .into_iter()
            .chain(args.filter_map(serde_json::Value::as_str))
            .collect::<Vec<_>>()
            .join(" ")
    };
    servers
        .iter()
        .map(|(name, server)| format!("`{name}` (`{}`)", words(server)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A project layer as an untrusted folder gets it, over `so_far` (the user's settings): only
/// what narrows (deny and ask rules, disabled tools and providers, redactions, a stricter mode,
/// limits lower than those in force); and what it would have enabled.
pub(crate) fn narrowed(layer: Config, file: &Path, so_far: &Config) -> (Config, Vec<Withheld>) {
    let mut withheld = Vec::new();
    let mut withhold = |what: String| {
        withheld.push(Withheld {
            file: file.to_path_buf(),
            what,
        })
    };
    let narrowing_mode = layer
        .permission_mode
        .as_deref()
        .filter(|mode| matches!(*mode, "plan" | "default"));
    if let Some(mode) = layer
        .permission_mode
        .as_deref()
        .filter(|_| narrowing_mode.is_none())
    {
        withhold(format!("the permission mode `{mode}`"));
    }
    let allow: Vec<&str> = layer
        .permissions
        .allow
        .iter()
        .map(|rule| rule.text.as_str())
        .collect();
    if !allow.is_empty() {
        withhold(format!("allow rules {}", allow.join(", ")));
    }
    if !layer.permissions.additional_directories.is_empty() {
        withhold("more workspace folders (`additional_directories`)".to_owned());
    }
    if !layer.hooks.is_empty() {
        let handlers: Vec<String> = layer
            .hooks
            .handlers()
            .map(|(_, handler)| match handler.kind() {
                "command" => format!("`{}`", handler.target()),
                kind => format!("{kind} `{}`", handler.target()),
            })
            .collect();
        withhold(format!("hooks, run as commands: {}", handlers.join(", ")));
    }
    // Either way it widens: on, the repository's hooks would run; off, the user's own guard
    // hooks would not.
    if let Some(off) = layer.disable_all_hooks {
        withhold(format!(
            "turning every hook {} (`disableAllHooks: {off}`)",
            if off { "off, your own too" } else { "back on" }
        ));
    }
    let turned_on: Vec<String> = layer
        .enabled_plugins
        .iter()
        .filter(|(_, on)| **on)
        .map(|(id, _)| format!("`{id}`"))
        .collect();
    if !turned_on.is_empty() {
        withhold(format!(
            "the plugins {}, whose hooks and MCP servers run code",
            turned_on.join(", ")
        ));
    }
    for name in layer.extra_marketplaces.keys() {
        withhold(format!("the plugin marketplace `{name}`"));
    }
    if let Some(model) = &layer.model {
        withhold(format!(
            "the model `{model}` (where the conversation and your key for it would go)"
        ));
    }
    if !layer.models.is_empty() {
        withhold(format!("the models {}", layer.models.join(", ")));
    }
    for name in layer.providers.keys() {
        withhold(format!(
            "the model provider `{name}` (its address, key and headers)"
        ));
    }
    if !layer.plugins.is_empty() {
        withhold("plugin libraries, loaded into agentry".to_owned());
    }
    if layer.data_dir.is_some() {
        withhold("a data folder (`data_dir`)".to_owned());
    }
    if layer.serve.store.is_some() || layer.serve.broker.is_some() {
        withhold("a session store or broker (`[serve]`)".to_owned());
    }
    if layer.telemetry.endpoint.is_some() || layer.telemetry.include_content.is_some() {
        withhold("where traces go (`[telemetry]`)".to_owned());
    }
    if layer.compaction != crate::config::CompactionConfig::default() {
        withhold(
            "compaction settings (`[compaction]`), which could send the conversation to be summarised at every request"
                .to_owned(),
        );
    }
    if layer.checkpoints != CheckpointConfig::default() {
        withhold("checkpoint settings (`[checkpoints]`), which could turn rewinds off".to_owned());
    }
    for name in layer.sections.names() {
        withhold(format!("the `{name}` settings"));
    }
    let mut lower = |name: &str, value: Option<u64>, in_force: u64| {
        let kept = value.filter(|value| *value <= in_force);
        if let Some(value) = value.filter(|_| kept.is_none()) {
            withhold(format!("`{name} = {value}`, above the {in_force} in force"));
        }
        kept
    };
    let max_turn_requests = lower(
        "max_turn_requests",
        layer.max_turn_requests.map(u64::from),
        u64::from(
            so_far
                .max_turn_requests
                .unwrap_or(limits::MAX_CHAT_REQUESTS),
        ),
    );
    let max_fork_depth = lower(
        "max_fork_depth",
        layer.max_fork_depth.map(u64::from),
        u64::from(so_far.max_fork_depth.unwrap_or(limits::MAX_FORK_DEPTH)),
    );
    let max_calls_per_answer = lower(
        "max_calls_per_answer",
        layer.max_calls_per_answer.map(|max| max as u64),
        so_far
            .max_calls_per_answer
            .unwrap_or(limits::MAX_CALLS_PER_ANSWER) as u64,
    );
    // A budget may be set or lowered, never raised.
    let max_budget_usd = layer.limits.max_budget_usd.filter(|budget| {
        let in_force = so_far.limits.max_budget_usd;
        let lower = in_force.is_none_or(|in_force| *budget <= in_force);
        if !lower {
            withhold(format!(
                "`[limits] max_budget_usd = {budget}`, above the {} in force",
                in_force.unwrap_or_default()
            ));
        }
        lower
    });
    let kept = Config {
        permission_mode: narrowing_mode.map(str::to_owned),
        limits: crate::config::LimitSettings { max_budget_usd },
        // Which tools wait to be searched for changes what the model is sent, never what
        // it may do.
        tool_search: layer.tool_search,
        max_turn_requests: max_turn_requests.and_then(|max| u32::try_from(max).ok()),
        max_fork_depth: max_fork_depth.and_then(|max| u32::try_from(max).ok()),
        max_calls_per_answer: max_calls_per_answer.and_then(|max| usize::try_from(max).ok()),
        permissions: crate::config::PermissionRules {
            deny: layer.permissions.deny,
            ask: layer.permissions.ask,
            ..Default::default()
        },
        tools: layer.tools,
        record: layer.record,
        model_requests: layer.model_requests,
        // Turning a plugin off narrows.
        enabled_plugins: layer
            .enabled_plugins
            .into_iter()
            .filter(|(_, on)| !on)
            .collect(),
        ..Config::default()
    };
    (kept, withheld)
}

/// The folders the user trusts, each with the digest of its settings files when it was trusted.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrustedFolders {
    /// By canonical path.
    #[serde(default)]
    folders: BTreeMap<PathBuf, TrustedFolder>,
}

/// One trusted folder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct TrustedFolder {
    /// The digest of its settings files ([`settings_digest`]) when it was trusted.
    digest: String,
}

impl TrustedFolders {
    /// The trusted folders kept in `data_folder` (none when the file is missing or unreadable,
    /// which the log says).
    pub fn open(data_folder: &Path) -> Self {
        let path = data_folder.join(TRUSTED_FOLDERS_FILE);
        match crate::config::read_text(&path) {
            Ok(Some(text)) => serde_json::from_str(&text).unwrap_or_else(|error| {
                tracing::warn!(
                    "{} is not valid, so no folder is trusted: {error}",
                    path.display()
                );
                Self::default()
            }),
            Ok(None) => Self::default(),
            Err(error) => {
                tracing::warn!("{error}, so no folder is trusted");
                Self::default()
            }
        }
    }

    /// Whether `project` is trusted with its settings files as they are now.
    pub fn trusts(&self, project: &Path) -> bool {
        let project = agentry_plugin::paths::canonical_path(project);
        self.folders
            .get(&project)
            .is_some_and(|trusted| trusted.digest == settings_digest(&project))
    }

    /// Whether `project` was trusted, though its settings files may have changed since.
    pub fn knows(&self, project: &Path) -> bool {
        self.folders
            .contains_key(&agentry_plugin::paths::canonical_path(project))
    }

    /// Trusts `project` with its settings files as they are now, and keeps that in
    /// `data_folder`.
    pub fn trust(&mut self, project: &Path, data_folder: &Path) -> std::io::Result<()> {
        let project = agentry_plugin::paths::canonical_path(project);
        let digest = settings_digest(&project);
        self.folders.insert(project, TrustedFolder { digest });
        self.save(data_folder)
    }

    /// Stops trusting `project`; whether it was trusted.
    pub fn untrust(&mut self, project: &Path, data_folder: &Path) -> std::io::Result<bool> {
        let removed = self
            .folders
            .remove(&agentry_plugin::paths::canonical_path(project))
            .is_some();
        if removed {
            self.save(data_folder)?;
        }
        Ok(removed)
    }

    /// The trusted folders.
    pub fn folders(&self) -> impl Iterator<Item = &Path> {
        self.folders.keys().map(PathBuf::as_path)
    }

    fn save(&self, data_folder: &Path) -> std::io::Result<()> {
        agentry_plugin::private::folder(data_folder)?;
        let text = serde_json::to_string_pretty(self).map_err(std::io::Error::other)?;
        agentry_plugin::atomic_file::write_atomically_as(
            &data_folder.join(TRUSTED_FOLDERS_FILE),
            text.as_bytes(),
            None,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project_with(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (file, text) in files {
            let path = dir.path().join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        dir
    }

    /// The code trusted settings run is what trust was given for: a hook's script, an MCP
    /// server's program or a plugin the settings name, changed, asks again.
    #[test]
    fn trust_covers_the_files_the_settings_run() {
        let project = project_with(&[
            (
                ".claude/settings.json",
                r#"{"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/scripts/lint.sh --fast"}]}]}}"#,
            ),
            (
                ".agentry/config.toml",
                "plugins = [\"vendor/p.so\"]\n[mcp_servers.x]\ncommand = \"node\"\nargs = [\"tools/server.js\", \"https://example.com/x\"]\n",
            ),
            ("scripts/lint.sh", "true\n"),
            ("vendor/p.so", "library one"),
            ("tools/server.js", "serve()"),
            ("unrelated.txt", "text"),
        ]);
        let root = project.path().canonicalize().unwrap();
        assert_eq!(
            files_settings_run(project.path()),
            [
                root.join("scripts/lint.sh"),
                root.join("tools/server.js"),
                root.join("vendor/p.so"),
            ]
        );
        for file in ["scripts/lint.sh", "vendor/p.so", "tools/server.js"] {
            let before = settings_digest(project.path());
            std::fs::write(project.path().join(file), "changed").unwrap();
            assert_ne!(before, settings_digest(project.path()), "{file}");
        }
        let before = settings_digest(project.path());
        std::fs::write(project.path().join("unrelated.txt"), "changed").unwrap();
        assert_eq!(before, settings_digest(project.path()));
    }

    #[test]
    fn a_pipe_among_the_plugins_is_counted_not_waited_on() {
        let project = project_with(&[(".agentry/config.toml", "")]);
        std::fs::create_dir_all(project.path().join(".agentry/plugins")).unwrap();
        let made = std::process::Command::new("mkfifo")
            .arg(project.path().join(".agentry/plugins/p.so"))
            .status()
            .unwrap();
        assert!(made.success());
        assert_eq!(settings_digest(project.path()).len(), 64);
    }

    #[test]
    fn an_untrusted_layer_keeps_what_narrows_and_names_what_it_leaves_out() {
        let layer: Config = toml::from_str(
            r#"
            model = "anthropic/x"
            permission_mode = "bypass"
            data_dir = "/tmp/elsewhere"
            plugins = ["evil.so"]
            [permissions]
            allow = ["Bash"]
            deny = ["Read(.env)"]
            ask = ["Bash(git push:*)"]
            additional_directories = ["/"]
            [providers.anthropic]
            base_url = "http://127.0.0.1:9/"
            [tools]
            disabled = ["WebFetch"]
            [sandbox]
            mode = "off"
            [mcp_servers.x]
            command = "x"
            [[hooks.PreToolUse]]
            matcher = "*"
            hooks = [{ type = "command", command = "true" }]
            "#,
        )
        .unwrap();
        let (kept, withheld) = narrowed(
            layer,
            Path::new("/p/.agentry/config.toml"),
            &Config::default(),
        );
        assert_eq!(kept.permission_mode, None);
        assert!(kept.permissions.allow.is_empty());
        assert_eq!(kept.permissions.deny.len(), 1);
        assert_eq!(kept.permissions.ask.len(), 1);
        assert!(kept.permissions.additional_directories.is_empty());
        assert!(kept.providers.is_empty());
        assert!(kept.plugins.is_empty());
        assert!(kept.hooks.is_empty());
        assert_eq!(kept.data_dir, None);
        assert_eq!(kept.sections.get("sandbox"), None);
        assert_eq!(kept.sections.get("mcp_servers"), None);
        assert_eq!(kept.tools.disabled, ["WebFetch"]);
        assert_eq!(kept.model, None);
        let said: Vec<String> = withheld.iter().map(|w| w.what.clone()).collect();
        for expected in [
            "the permission mode `bypass`",
            "allow rules Bash",
            "hooks, run as commands: `true`",
            "the model provider `anthropic` (its address, key and headers)",
            "the `sandbox` settings",
            "the `mcp_servers` settings",
            "a data folder (`data_dir`)",
            "the model `anthropic/x` (where the conversation and your key for it would go)",
        ] {
            assert!(said.iter().any(|s| s == expected), "{expected} in {said:?}");
        }
        let (plan, nothing) = narrowed(
            toml::from_str("permission_mode = \"plan\"").unwrap(),
            Path::new("/p/.agentry/config.toml"),
            &Config::default(),
        );
        assert_eq!(plan.permission_mode.as_deref(), Some("plan"));
        assert!(nothing.is_empty());
    }

    #[test]
    fn an_untrusted_layer_may_lower_limits_and_never_raise_them_or_turn_checkpoints_off() {
        let user: Config =
            toml::from_str("max_turn_requests = 5\nmax_calls_per_answer = 1\n").unwrap();
        let layer: Config = toml::from_str(
            "max_turn_requests = 3\nmax_calls_per_answer = 100000\nmax_fork_depth = 9\n\
             [checkpoints]\nenabled = false\n",
        )
        .unwrap();
        let (kept, withheld) = narrowed(layer, Path::new("/p/.agentry/config.toml"), &user);
        assert_eq!(kept.max_turn_requests, Some(3), "lower: kept");
        assert_eq!(
            kept.max_calls_per_answer, None,
            "higher than the user's: left out"
        );
        assert_eq!(
            kept.max_fork_depth, None,
            "higher than the default: left out"
        );
        assert_eq!(kept.checkpoints, CheckpointConfig::default());
        let said: Vec<String> = withheld.iter().map(|w| w.what.clone()).collect();
        for expected in [
            "`max_calls_per_answer = 100000`, above the 1 in force",
            "`max_fork_depth = 9`, above the 2 in force",
            "checkpoint settings (`[checkpoints]`), which could turn rewinds off",
        ] {
            assert!(said.iter().any(|s| s == expected), "{expected} in {said:?}");
        }
        let merged = user.merge(kept);
        assert_eq!(merged.max_calls_per_answer, Some(1));
        assert_eq!(merged.max_turn_requests, Some(3));
    }

    #[test]
    fn an_untrusted_layer_turns_hooks_neither_off_nor_back_on() {
        let user: Config = toml::from_str(
            "disable_all_hooks = true\n[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ncommand = \"x\"\n",
        )
        .unwrap();
        let file = Path::new("/p/.claude/settings.json");
        let on = toml::from_str("disable_all_hooks = false\n").unwrap();
        let (kept, withheld) = narrowed(on, file, &user);
        assert_eq!(kept.disable_all_hooks, None);
        assert_eq!(
            withheld[0].what,
            "turning every hook back on (`disableAllHooks: false`)"
        );
        let merged = user.merge(kept);
        assert!(!merged.hooks.is_empty() && merged.hooks_in_force().is_empty());
        // Turning them off would silence the user's own guard hooks.
        let guarded: Config = toml::from_str(
            "[[hooks.PreToolUse]]\n[[hooks.PreToolUse.hooks]]\ncommand = \"guard.sh\"\n",
        )
        .unwrap();
        let off = toml::from_str("disable_all_hooks = true\n").unwrap();
        let (kept, withheld) = narrowed(off, file, &guarded);
        assert_eq!(kept.disable_all_hooks, None);
        assert_eq!(
            withheld[0].what,
            "turning every hook off, your own too (`disableAllHooks: true`)"
        );
        assert!(!guarded.merge(kept).hooks_in_force().is_empty());
    }

    #[test]
    fn trust_holds_for_the_settings_it_was_given_for() {
        let project = project_with(&[(".agentry/config.toml", "permission_mode = \"bypass\"\n")]);
        let data = tempfile::tempdir().unwrap();
        let mut trusted = TrustedFolders::open(data.path());
        assert!(!trusted.trusts(project.path()));
        trusted.trust(project.path(), data.path()).unwrap();
        let reopened = TrustedFolders::open(data.path());
        assert!(reopened.trusts(project.path()));
        std::fs::write(
            project.path().join(".agentry/config.toml"),
            "permission_mode = \"bypass\"\nsandbox = \"off\"\n",
        )
        .unwrap();
        assert!(!reopened.trusts(project.path()), "a change asks again");
        assert!(reopened.knows(project.path()));
        std::fs::write(project.path().join(".mcp.json"), "{}").unwrap();
        let digest = settings_digest(project.path());
        std::fs::remove_file(project.path().join(".mcp.json")).unwrap();
        assert_ne!(digest, settings_digest(project.path()));
        let mut trusted = reopened;
        assert!(trusted.untrust(project.path(), data.path()).unwrap());
        assert!(!TrustedFolders::open(data.path()).knows(project.path()));
    }

    #[test]
    fn what_a_folder_would_enable_is_listed_from_every_file() {
        let project = project_with(&[
            (
                ".claude/settings.json",
                r#"{"permissions": {"defaultMode": "acceptEdits", "deny": ["Bash(rm:*)"]}}"#,
            ),
            (".mcp.json", r#"{"mcpServers": {}}"#),
            (".agentry/plugins/x.so", "not really"),
        ]);
        let withheld = withheld(project.path()).unwrap();
        let said: Vec<String> = withheld.iter().map(ToString::to_string).collect();
        assert_eq!(said.len(), 3, "{said:?}");
        assert!(said[0].contains("acceptEdits") && said[0].contains("settings.json"));
        assert!(said[1].contains("MCP servers"));
        assert!(said[2].contains("plugin"));
        let plain = project_with(&[(
            ".claude/settings.json",
            r#"{"permissions": {"deny": ["Bash"]}}"#,
        )]);
        assert!(withheld_is_empty(plain.path()));
    }

    fn withheld_is_empty(project: &Path) -> bool {
        withheld(project).unwrap().is_empty()
    }
}
