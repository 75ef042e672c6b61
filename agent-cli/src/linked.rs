//! The tool providers linked into this binary: one cargo feature each.

use agentry::settings::Recipe;

/// The names of the providers linked into this binary, in the order they are offered.
pub fn linked_names() -> Vec<&'static str> {
    recipes().iter().map(|recipe| recipe.name).collect()
}

/// How each provider linked into this binary is made (one cargo feature each).
pub fn recipes() -> Vec<Recipe> {
    vec![
        #[cfg(feature = "file-ops")]
        agentry_file_ops::RECIPE,
        #[cfg(feature = "bash")]
        agentry_bash::RECIPE,
        #[cfg(feature = "builtin")]
        agentry_builtin::RECIPE,
        #[cfg(feature = "webfetch")]
        agentry_webfetch::RECIPE,
        #[cfg(feature = "search")]
        agentry_search::RECIPE,
        #[cfg(feature = "http-tools")]
        agentry_http_tools::RECIPE,
        #[cfg(feature = "fork")]
        agentry_fork::RECIPE,
        #[cfg(feature = "skill")]
        agentry_skill::RECIPE,
        #[cfg(feature = "mcp")]
        agentry_mcp::RECIPE,
    ]
}
