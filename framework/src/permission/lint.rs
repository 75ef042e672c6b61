//! Rules that look right and do nothing: a rule naming no tool, a path pattern on a tool without
//! paths, a pattern that does not parse, `/etc/x` where `//etc/x` was surely meant. Front-ends
//! report them at start-up, so that users learn of them before they count on them.

use crate::permission::path_pattern::{PatternBase, literal_root_prefix, resolve};
use crate::permission::{PermissionPolicy, PermissionRule, RuleTarget};
use crate::tool::{DynTool, RulePatterns};
use serde::Serialize;
use std::path::Path;

/// A rule that can never match, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RuleWarning {
    /// The rule as written (`Read(/etc/passwd)`).
    pub rule: String,
    /// Its action (`allow`, `deny`, `ask`).
    pub action: &'static str,
    /// Where it came from.
    pub source: String,
    /// Why it can never match, and what was likely meant.
    pub problem: String,
}

impl std::fmt::Display for RuleWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the {} rule `{}` (from {}) can never match: {}",
            self.action, self.rule, self.source, self.problem
        )
    }
}

/// The rules of `policy` that can never match any of `tools` in a session in `cwd`.
pub fn check_rules<'a>(
    policy: &PermissionPolicy,
    tools: impl IntoIterator<Item = &'a dyn DynTool> + Clone,
    cwd: &Path,
) -> Vec<RuleWarning> {
    let home = dirs::home_dir();
    policy
        .rules
        .iter()
        .filter_map(|rule| {
            let problem = problem(rule, tools.clone(), cwd, home.as_deref())?;
            Some(RuleWarning {
                rule: rule.target.to_string(),
                action: rule.action.as_str(),
                source: rule.origin.to_string(),
                problem,
            })
        })
        .collect()
}

/// Why `rule` can never match, if it cannot.
fn problem<'a>(
    rule: &PermissionRule,
    tools: impl IntoIterator<Item = &'a dyn DynTool>,
    cwd: &Path,
    home: Option<&Path>,
) -> Option<String> {
    let RuleTarget::Tool { name, pattern } = &rule.target else {
        return None;
    };
    // A request a tool receives (`Sampling(SERVER)`), whose pattern is a glob of who asks.
    if crate::permission::REQUESTS
        .iter()
        .any(|(request, _)| request == name)
    {
        let pattern = pattern.as_deref()?;
        return globset::Glob::new(pattern)
            .err()
            .map(|e| format!("`{pattern}` is not a glob: {e}"));
    }
    let tools: Vec<&dyn DynTool> = tools.into_iter().collect();
    let named = tools
        .iter()
        .find(|tool| tool.name() == name || tool.aliases().contains(name));
    let family = tools
        .iter()
        .find(|tool| tool.rule_patterns().family() == Some(name.as_str()));
    // MCP servers' tools (`mcp__server__tool`) may join after start-up (a server that starts
    // slowly, one an editor hands over): they are not known to be missing.
    if named.is_none() && family.is_none() && name.starts_with("mcp__") {
        return None;
    }
    let Some(tool) = named.or(family) else {
        let mut names: Vec<&str> = tools.iter().map(|tool| tool.name()).collect();
        names.sort_unstable();
        return Some(format!(
            "no tool is called `{name}` (the tools are {})",
            names.join(", ")
        ));
    };
    let pattern = pattern.as_deref()?;
    match tool.rule_patterns() {
        RulePatterns::None => Some(format!(
            "{name} takes no pattern, so `{name}({pattern})` matches no call; write `{name}` for every call"
        )),
        RulePatterns::Own => tool.check_rule_pattern(pattern).err(),
        RulePatterns::ReadsFiles | RulePatterns::EditsFiles | RulePatterns::Paths => {
            path_problem(rule, pattern, cwd, home)
        }
    }
}

/// Why a path pattern can never match: it does not parse, or it is a `/path` whose folder is
/// missing under the rule's root while it exists from the filesystem's root.
fn path_problem(
    rule: &PermissionRule,
    pattern: &str,
    cwd: &Path,
    home: Option<&Path>,
) -> Option<String> {
    let root = rule.origin.root.as_deref().unwrap_or(cwd);
    let base = PatternBase {
        cwd,
        root: Some(root),
        home,
    };
    if let Err(problem) = resolve(pattern, base) {
        return Some(problem);
    }
    let prefix = literal_root_prefix(pattern)?;
    let absolute = Path::new("/").join(prefix);
    (!root.join(prefix).exists() && absolute.exists()).then(|| {
        format!(
            "`/{prefix}` starts from {} (the folder of the rule's file), where there is no {prefix}; \
             for the absolute path {} write `/{pattern}`",
            root.display(),
            absolute.display(),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::permission::{PermissionMode, RuleAction, RuleOrigin};
    use crate::tool::{Tool, ToolContext, ToolError, ToolKind, erase};
    use schemars::JsonSchema;
    use serde::Deserialize;
    use std::sync::Arc;

    #[derive(Deserialize, JsonSchema)]
    struct Nothing {}

    struct Named(&'static str, ToolKind, RulePatterns);

    impl Tool for Named {
        type Input = Nothing;
        type Output = String;
        fn name(&self) -> &str {
            self.0
        }
        fn description(&self) -> String {
            String::new()
        }
        fn kind(&self) -> ToolKind {
            self.1
        }
        fn rule_patterns(&self) -> RulePatterns {
            self.2
        }
        fn check_rule_pattern(&self, pattern: &str) -> Result<(), String> {
            match pattern.starts_with("domain:") {
                true => Ok(()),
                false => Err(format!("`{pattern}` is not `domain:NAME`")),
            }
        }
        async fn call(&self, _: Nothing, _: ToolContext) -> Result<String, ToolError> {
            Ok(String::new())
        }
    }

    #[test]
    fn rules_that_can_never_match_are_named_with_why() {
        let project = tempfile::tempdir().unwrap();
        let root = project.path().canonicalize().unwrap();
        std::fs::create_dir(root.join("src")).unwrap();
        let tools: Vec<Arc<dyn DynTool>> = vec![
            erase(Named("Read", ToolKind::Read, RulePatterns::ReadsFiles)),
            erase(Named("Grep", ToolKind::Search, RulePatterns::ReadsFiles)),
            erase(Named("WebFetch", ToolKind::Fetch, RulePatterns::Own)),
            erase(Named("TodoWrite", ToolKind::Think, RulePatterns::None)),
        ];
        let origin = RuleOrigin::file(root.join(".agentry/config.toml"), &root);
        let rules = [
            "Read(/src/**)",
            "Read(/etc/passwd)",
            "Read(//etc/passwd)",
            "Reed(src/**)",
            "TodoWrite(x)",
            "TodoWrite",
            "WebFetch(example.com)",
            "WebFetch(domain:example.com)",
            "Read(src/[oops)",
            "kind:read",
            "mcp__github__create_issue",
            "Sampling(docs)",
            "Sampling",
            "Sampling(docs-[oops)",
        ]
        .map(|target| {
            PermissionRule::parse(RuleAction::Deny, target)
                .unwrap()
                .from_origin(origin.clone())
        });
        let policy = PermissionPolicy::new(PermissionMode::Default, rules.to_vec());
        let warnings = check_rules(&policy, tools.iter().map(|t| t.as_ref()), &root);
        let flagged: Vec<&str> = warnings.iter().map(|w| w.rule.as_str()).collect();
        assert_eq!(
            flagged,
            [
                "Read(/etc/passwd)",
                "Reed(src/**)",
                "TodoWrite(x)",
                "WebFetch(example.com)",
                "Read(src/[oops)",
                "Sampling(docs-[oops)"
            ]
        );
        let text = warnings[0].to_string();
        assert!(text.contains("write `//etc/passwd`"), "{text}");
        assert!(text.contains(".agentry/config.toml"), "{text}");
        assert!(
            warnings[1]
                .problem
                .contains("Grep, Read, TodoWrite, WebFetch")
        );
        assert!(warnings[3].problem.contains("domain:NAME"));
    }
}
