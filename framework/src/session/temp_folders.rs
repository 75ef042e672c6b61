//! Sessions' temporary folders left behind: an agent that was killed never removed its
//! sessions' folders, so the next one sweeps them.

use crate::tool::TEMP_FOLDER_PREFIX;
use std::path::Path;

/// Removes the sessions' temporary folders (in the system's temporary folder) left by agents that
/// no longer run: killed ones never removed theirs. Returns how many were removed. Only on Linux,
/// where a process's liveness is read from `/proc`; elsewhere nothing is removed.
pub fn remove_stale_temp_folders() -> usize {
    if !Path::new("/proc/self").exists() {
        return 0;
    }
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return 0;
    };
    entries
        .filter_map(Result::ok)
        .filter(|entry| {
            let name = entry.file_name();
            let owner = name
                .to_str()
                .and_then(|name| name.strip_prefix(TEMP_FOLDER_PREFIX))
                .and_then(|rest| rest.split_once('-'))
                .and_then(|(pid, _)| pid.parse::<u32>().ok());
            owner.is_some_and(|pid| !Path::new(&format!("/proc/{pid}")).exists())
        })
        .filter(|entry| std::fs::remove_dir_all(entry.path()).is_ok())
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool::SessionState;

    #[test]
    fn temp_folders_of_agents_that_are_gone_are_removed_and_live_ones_kept() {
        let mut gone = std::process::Command::new("true").spawn().unwrap();
        let gone_pid = gone.id();
        gone.wait().unwrap();
        let stale = std::env::temp_dir().join(format!("{TEMP_FOLDER_PREFIX}{gone_pid}-test"));
        std::fs::create_dir_all(stale.join("inside")).unwrap();
        let state = SessionState::default();
        let live = state.temp_dir().unwrap();
        assert!(
            live.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(&format!("{TEMP_FOLDER_PREFIX}{}-", std::process::id()))
        );
        assert!(remove_stale_temp_folders() >= 1);
        assert!(!stale.exists(), "the dead agent's folder is removed");
        assert!(live.exists(), "a live agent's folder is kept");
        drop(state);
        assert!(!live.exists(), "a session removes its own folder");
    }
}
