//! Watching the template folders: when what they offer changes (a template added, removed,
//! renamed or given new arguments), the server tells its clients.

use super::catalog::Catalog;
use agentry::commands::CommandArgument;
use agentry_stock::templates::PromptTemplate;
use notify::{RecursiveMode, Watcher};
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::sync::mpsc;

/// How long events are gathered before the folders are read again (an editor's save is
/// often several events).
const SETTLE: Duration = Duration::from_millis(100);

/// What clients see of a template in `prompts/list` (a change of its body alone is no list
/// change).
#[derive(PartialEq)]
struct Listed {
    name: String,
    description: Option<String>,
    arguments: Vec<CommandArgument>,
}

fn listing(templates: Vec<PromptTemplate>) -> Vec<Listed> {
    templates
        .into_iter()
        .map(|t| Listed {
            name: t.name,
            description: t.description,
            arguments: t.arguments,
        })
        .collect()
}

/// Watches the catalog's folders (and, for one that does not exist yet, the nearest folder
/// above it that does) until `changed` returns false; calls it whenever the listing changes.
pub(crate) async fn watch(catalog: Catalog, mut changed: impl AsyncFnMut() -> bool) {
    let (events, mut received) = mpsc::unbounded_channel();
    let watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        if event.is_ok() {
            let _ = events.send(());
        }
    });
    let mut watcher = match watcher {
        Ok(watcher) => watcher,
        Err(error) => {
            tracing::warn!(
                "cannot watch the prompt folders, so list changes are not announced: {error}"
            );
            return;
        }
    };
    let mut watched: Vec<PathBuf> = Vec::new();
    let rearm = |watcher: &mut notify::RecommendedWatcher, watched: &mut Vec<PathBuf>| {
        for folder in catalog.folders() {
            let target = nearest_existing(&folder.path);
            if !watched.contains(&target)
                && watcher.watch(&target, mode(&folder.path, &target)).is_ok()
            {
                watched.push(target);
            }
        }
    };
    rearm(&mut watcher, &mut watched);
    let mut last = listing(catalog.templates());
    while received.recv().await.is_some() {
        tokio::time::sleep(SETTLE).await;
        while received.try_recv().is_ok() {}
        rearm(&mut watcher, &mut watched);
        let now = listing(catalog.templates());
        if now != last {
            last = now;
            if !changed().await {
                return;
            }
        }
    }
}

/// The folder itself, or the nearest one above it that exists.
fn nearest_existing(folder: &Path) -> PathBuf {
    folder
        .ancestors()
        .find(|ancestor| ancestor.is_dir())
        .unwrap_or(folder)
        .to_path_buf()
}

/// The folder itself is watched with its subfolders; an ancestor only for the folder's
/// appearance (the whole tree below a project would be far too much).
fn mode(folder: &Path, target: &Path) -> RecursiveMode {
    if folder == target {
        RecursiveMode::Recursive
    } else {
        RecursiveMode::NonRecursive
    }
}
