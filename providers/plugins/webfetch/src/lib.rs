//! WebFetch as a plugin: `agentry-webfetch`'s provider, exported through the plugin
//! ABI from this crate's `cdylib` (built by `scripts/build-plugins`), for a thin agentry to load.

agentry_plugin_abi::export_plugin!(recipe: agentry_webfetch::RECIPE);
