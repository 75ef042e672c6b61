//! Workspace trust at the command line: whether the project folder's own settings count
//! (`--trust`, the user's `trusted_folders`, or an earlier answer with the settings as they are
//! now), the question the terminal asks once per folder, what a run without trust left out, and
//! `agentry trust` / `agentry untrust`.

use crate::exit::CliError;
use agentry_stock::config::Config;
use agentry_stock::config::trust::{TrustedFolders, Withheld, withheld};
use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Whether `--trust` was given.
static FLAG: OnceLock<bool> = OnceLock::new();

/// Records `--trust` for the whole run.
pub fn set_flag(trust: bool) {
    let _ = FLAG.set(trust);
}

/// The configuration of `project`: the user's, then the project's own as far as the folder is
/// trusted. What an untrusted folder's files would have enabled is said on standard error, once
/// a run.
pub fn load(project: &Path) -> Result<Config, CliError> {
    static SAID: OnceLock<()> = OnceLock::new();
    let (config, withheld) = loaded(project)?;
    if !withheld.is_empty() && SAID.set(()).is_ok() {
        eprintln!("{}", left_out(project, &withheld));
    }
    Ok(config)
}

/// [`load`] without a word of what was left out.
pub fn load_quietly(project: &Path) -> Result<Config, CliError> {
    Ok(loaded(project)?.0)
}

/// The configuration of `project` as far as it is trusted, and what was left out.
fn loaded(project: &Path) -> Result<(Config, Vec<Withheld>), CliError> {
    let user = Config::load_user().map_err(CliError::usage)?;
    let trusted = is_trusted(project, &user);
    let (config, mut withheld) =
        Config::load_trusting(project, trusted).map_err(CliError::usage)?;
    if !trusted {
        // The files no configuration layer reads: `.mcp.json` and the project's plugins.
        withheld = agentry_stock::config::trust::withheld(project).map_err(CliError::usage)?;
    }
    Ok((config, withheld))
}

/// Whether `project` is trusted: by `--trust`, by the user's own `trusted_folders`, or by the
/// user's earlier answer, given for its settings files as they are now.
fn is_trusted(project: &Path, user: &Config) -> bool {
    FLAG.get().copied().unwrap_or(false)
        || user.trusts_folder(project)
        || TrustedFolders::open(&user.data_folder()).trusts(project)
}

/// Asks in the terminal, once per folder, whether to trust `project` when its files would
/// enable what takes trust; a yes is kept. Nothing is asked without a terminal, or when there
/// is nothing to trust.
pub fn ask_in_terminal(project: &Path) -> Result<(), CliError> {
    let user = Config::load_user().map_err(CliError::usage)?;
    if is_trusted(project, &user) || !std::io::stdin().is_terminal() {
        return Ok(());
    }
    let withheld = withheld(project).map_err(CliError::usage)?;
    if withheld.is_empty() {
        return Ok(());
    }
    let mut out = std::io::stderr();
    let _ = writeln!(out, "{}", question(project, &withheld));
    let _ = write!(out, "Trust this folder? [y/N] ");
    let _ = out.flush();
    let mut answer = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut answer)
        .map_err(CliError::internal)?;
    if matches!(answer.trim(), "y" | "Y" | "yes" | "Yes") {
        TrustedFolders::open(&user.data_folder())
            .trust(project, &user.data_folder())
            .map_err(CliError::internal)?;
    }
    Ok(())
}

/// The question an editor asks about `project`, when its settings were left out because it is
/// not trusted.
pub fn editor_question(project: &Path) -> Result<Option<agentry_acp::TrustQuestion>, CliError> {
    let user = Config::load_user().map_err(CliError::usage)?;
    if is_trusted(project, &user) {
        return Ok(None);
    }
    let withheld = withheld(project).map_err(CliError::usage)?;
    if withheld.is_empty() {
        return Ok(None);
    }
    let folder = project.to_path_buf();
    let data_folder = user.data_folder();
    Ok(Some(agentry_acp::TrustQuestion {
        folder: folder.clone(),
        enables: withheld.iter().map(ToString::to_string).collect(),
        trust: std::sync::Arc::new(move || {
            TrustedFolders::open(&data_folder)
                .trust(&folder, &data_folder)
                .map_err(|error| error.to_string())
        }),
    }))
}

/// The question the terminal asks about `project`: what its files would enable.
pub fn question(project: &Path, withheld: &[Withheld]) -> String {
    let terminal = agentry_plugin::terminal_text::visible;
    let lines: Vec<String> = withheld
        .iter()
        .map(|w| format!("  - {}", terminal(&w.to_string())))
        .collect();
    format!(
        "The folder {} has settings of its own that run code, allow more than you have, or send your keys or conversation elsewhere:\n{}\nThey take effect only once you trust the folder (agentry trust).",
        terminal(&project.display().to_string()),
        lines.join("\n")
    )
}

/// What a run in the untrusted folder `project` says it left out.
fn left_out(project: &Path, withheld: &[Withheld]) -> String {
    let terminal = agentry_plugin::terminal_text::visible;
    let items: Vec<String> = withheld
        .iter()
        .map(|w| terminal(&w.to_string()).into_owned())
        .collect();
    format!(
        "agentry: the folder {} is not trusted, so its own settings that take trust were left out: {}. Trust it with `agentry trust` (or `--trust` for one run).",
        terminal(&project.display().to_string()),
        items.join("; ")
    )
}

/// `agentry trust [PATH]`: trusts the folder with its settings as they are now.
pub fn trust(path: Option<PathBuf>) -> Result<(), CliError> {
    let project = folder(path)?;
    let user = Config::load_user().map_err(CliError::usage)?;
    let withheld = withheld(&project).map_err(CliError::usage)?;
    TrustedFolders::open(&user.data_folder())
        .trust(&project, &user.data_folder())
        .map_err(CliError::internal)?;
    let terminal = agentry_plugin::terminal_text::visible;
    println!("Trusted {}.", terminal(&project.display().to_string()));
    for item in withheld {
        println!("  - {}", terminal(&item.to_string()));
    }
    Ok(())
}

/// `agentry untrust [PATH]`: stops trusting the folder.
pub fn untrust(path: Option<PathBuf>) -> Result<(), CliError> {
    let project = folder(path)?;
    let user = Config::load_user().map_err(CliError::usage)?;
    let was = TrustedFolders::open(&user.data_folder())
        .untrust(&project, &user.data_folder())
        .map_err(CliError::internal)?;
    if was {
        println!("{} is no longer trusted.", project.display());
    } else {
        println!("{} was not trusted.", project.display());
    }
    Ok(())
}

/// The folder `path` names (the current one without it), canonical.
fn folder(path: Option<PathBuf>) -> Result<PathBuf, CliError> {
    let path = match path {
        Some(path) => path,
        None => std::env::current_dir().map_err(CliError::internal)?,
    };
    path.canonicalize()
        .ok()
        .filter(|path| path.is_dir())
        .ok_or_else(|| CliError::usage(anyhow::anyhow!("{}: no such folder", path.display())))
}
