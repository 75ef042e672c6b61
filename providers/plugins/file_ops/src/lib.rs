//! The file tools (Read, Write, Edit, Glob, Grep, …) as a plugin: `agentry-file-ops`'s provider, exported through the plugin
//! ABI from this crate's `cdylib` (built by `scripts/build-plugins`), for a thin agentry to load.

agentry_plugin_abi::export_plugin!(recipe: agentry_file_ops::RECIPE);
