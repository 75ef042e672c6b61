//! The session's rules for requests a tool receives during its call, named as a rule names
//! them (`Sampling(docs)`: the MCP server `docs` asking to use the session's model). A `deny`
//! rule refuses; an `ask` rule asks; an `allow` rule lets the request through; without one,
//! `bypass` mode lets it through and every other mode asks. A rule's pattern is a glob of the
//! subject (`Sampling(*)`, `Sampling(docs-*)`); none, or `*` for every tool, matches every
//! subject.

use crate::permission::{PermissionMode, PermissionPolicy, PermissionRule, RuleAction, RuleTarget};
use crate::tool::{RequestDecision, RequestRules};
use futures::future::BoxFuture;

/// The requests rules name, with what each is.
pub const REQUESTS: [(&str, &str); 1] = [(
    "Sampling",
    "an MCP server asking to use the session's model (`Sampling(SERVER)`)",
)];

impl PermissionPolicy {
    /// What the rules and the mode say of `request` from `subject`.
    pub fn decide_request(&self, request: &str, subject: &str) -> RequestDecision {
        let matching = |action| {
            self.rules
                .iter()
                .find(|rule| rule.action == action && names(rule, request, subject))
        };
        if let Some(rule) = matching(RuleAction::Deny) {
            return RequestDecision::Deny(format!(
                "{request}({subject}) is denied by the permission rule {rule}"
            ));
        }
        if matching(RuleAction::Ask).is_some() {
            return RequestDecision::Ask;
        }
        if matching(RuleAction::Allow).is_some() || self.mode == PermissionMode::Bypass {
            return RequestDecision::Allow;
        }
        RequestDecision::Ask
    }
}

/// Whether `rule` is about `request` from `subject`.
fn names(rule: &PermissionRule, request: &str, subject: &str) -> bool {
    match &rule.target {
        RuleTarget::Any => true,
        RuleTarget::Tool { name, pattern } if name == request => match pattern {
            None => true,
            Some(pattern) => globset::Glob::new(pattern)
                .map(|glob| glob.compile_matcher().is_match(subject))
                .unwrap_or(false),
        },
        _ => false,
    }
}

/// A session's policy as the [`RequestRules`] its tools' calls are offered.
pub struct SessionRequestRules(pub PermissionPolicy);

impl RequestRules for SessionRequestRules {
    fn decide(&self, request: &str, subject: &str) -> BoxFuture<'static, RequestDecision> {
        let decision = self.0.decide_request(request, subject);
        Box::pin(async move { decision })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(mode: PermissionMode, rules: &[(RuleAction, &str)]) -> PermissionPolicy {
        PermissionPolicy::with_rules(mode, rules).unwrap()
    }

    #[test]
    fn a_servers_sampling_is_allowed_denied_or_asked_as_the_rules_say() {
        use RuleAction::{Allow, Ask, Deny};
        let default = PermissionMode::Default;
        let decide = |policy: &PermissionPolicy, server| policy.decide_request("Sampling", server);
        let allowed = policy(default, &[(Allow, "Sampling(docs)")]);
        assert_eq!(decide(&allowed, "docs"), RequestDecision::Allow);
        assert_eq!(
            decide(&allowed, "docs2"),
            RequestDecision::Ask,
            "another server"
        );
        assert_eq!(decide(&allowed, "doc"), RequestDecision::Ask);
        let globbed = policy(default, &[(Allow, "Sampling(docs-*)")]);
        assert_eq!(decide(&globbed, "docs-eu"), RequestDecision::Allow);
        assert_eq!(decide(&globbed, "docs"), RequestDecision::Ask);
        let every = policy(default, &[(Allow, "Sampling")]);
        assert_eq!(decide(&every, "anything"), RequestDecision::Allow);
        let not_a_tool_rule = policy(default, &[(Allow, "mcp__docs__*"), (Allow, "kind:fetch")]);
        assert_eq!(
            decide(&not_a_tool_rule, "docs"),
            RequestDecision::Ask,
            "allowing a server's tools is not allowing it the model"
        );
        let denied = policy(default, &[(Allow, "*"), (Deny, "Sampling(docs)")]);
        assert!(
            matches!(decide(&denied, "docs"), RequestDecision::Deny(why) if why.contains("Sampling(docs)"))
        );
        assert_eq!(
            decide(&denied, "other"),
            RequestDecision::Allow,
            "`*` allows all"
        );
        let asked = policy(PermissionMode::Bypass, &[(Ask, "Sampling(docs)")]);
        assert_eq!(decide(&asked, "docs"), RequestDecision::Ask);
        assert_eq!(
            decide(&asked, "other"),
            RequestDecision::Allow,
            "bypass mode"
        );
        assert_eq!(
            decide(&policy(PermissionMode::AcceptEdits, &[]), "docs"),
            RequestDecision::Ask
        );
    }
}
