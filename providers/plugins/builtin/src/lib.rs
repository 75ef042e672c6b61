//! The built-in tools (the task list, questions, …) as a plugin: `agentry-builtin`'s provider, exported through the plugin
//! ABI from this crate's `cdylib` (built by `scripts/build-plugins`), for a thin agentry to load.

agentry_plugin_abi::export_plugin!(recipe: agentry_builtin::RECIPE);
