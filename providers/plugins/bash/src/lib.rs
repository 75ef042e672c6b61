//! The shell tools (Bash in a PTY, TaskOutput, TaskStop) as a plugin: `agentry-bash`'s provider, exported through the plugin
//! ABI from this crate's `cdylib` (built by `scripts/build-plugins`), for a thin agentry to load.

agentry_plugin_abi::export_plugin!(recipe: agentry_bash::RECIPE);
