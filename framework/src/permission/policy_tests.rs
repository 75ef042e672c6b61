//! The policy's decisions, one rule kind and mode at a time.
use super::*;
use crate::permission::{AnsweredCall, PermissionOptionKind, RuleOrigin};
use crate::tool::{ToolContext, ToolError, ToolOutput};
use futures::future::BoxFuture;

/// A call with locations, subjects of its own language (`word` patterns matching parts
/// equal to them), or a request to leave its confinement.
#[derive(Default)]
struct Call {
    locations: Vec<ToolCallLocation>,
    subjects: RuleSubjects,
    escalated: bool,
}

impl PreparedCall for Call {
    fn title(&self) -> String {
        String::new()
    }
    fn locations(&self) -> Vec<ToolCallLocation> {
        self.locations.clone()
    }
    fn rule_subjects(&self) -> RuleSubjects {
        self.subjects.clone()
    }
    fn matches_rule(&self, pattern: &str, subject: &str) -> bool {
        pattern == subject
    }
    fn escalation(&self) -> Option<String> {
        self.escalated.then(|| "run outside the sandbox".to_owned())
    }
    fn run(self: Box<Self>, _: ToolContext) -> BoxFuture<'static, Result<ToolOutput, ToolError>> {
        Box::pin(async { Ok(ToolOutput::default()) })
    }
}

fn policy(mode: PermissionMode, rules: &[(RuleAction, &str)]) -> PermissionPolicy {
    PermissionPolicy::with_rules(mode, rules).unwrap()
}

/// A file tool's call of `path` (canonical), in a session in `/work`.
fn decide(policy: &PermissionPolicy, name: &str, kind: ToolKind, path: &str) -> Decision {
    let patterns = match kind {
        ToolKind::Read | ToolKind::Search => RulePatterns::ReadsFiles,
        _ => RulePatterns::EditsFiles,
    };
    decide_with(policy, name, kind, patterns, path, "/work")
}

fn decide_with(
    policy: &PermissionPolicy,
    name: &str,
    kind: ToolKind,
    patterns: RulePatterns,
    path: &str,
    cwd: &str,
) -> Decision {
    let call = Call {
        locations: vec![ToolCallLocation::path(path)],
        ..Call::default()
    };
    policy.decide(
        &CallSubject {
            tool_name: name,
            kind,
            patterns,
            call: &call,
            locations: &call.locations,
            outside_workspace: !path.starts_with(cwd),
            cwd: Path::new(cwd),
            definition: "defined",
        },
        &RememberedAnswers::default(),
    )
}

/// A call of a tool with its own pattern language.
fn decide_own(policy: &PermissionPolicy, call: &Call, remembered: &RememberedAnswers) -> Decision {
    policy.decide(
        &CallSubject {
            tool_name: "Bash",
            kind: ToolKind::Execute,
            patterns: RulePatterns::Own,
            call,
            locations: &call.locations,
            outside_workspace: call
                .locations
                .iter()
                .any(|location| !location.path.starts_with("/work")),
            cwd: Path::new("/work"),
            definition: "defined",
        },
        remembered,
    )
}

fn commands(parts: &[&str]) -> Call {
    Call {
        subjects: RuleSubjects::visible(parts.iter().map(|p| p.to_string()).collect()),
        ..Call::default()
    }
}

#[test]
fn fetch_calls_ask_unless_a_rule_or_bypass_allows_them_and_plan_mode_keeps_them() {
    let ask = |mode| decide(&policy(mode, &[]), "WebFetch", ToolKind::Fetch, "/work/x");
    assert_eq!(ask(PermissionMode::Default), Decision::Ask);
    assert_eq!(ask(PermissionMode::AcceptEdits), Decision::Ask);
    assert_eq!(ask(PermissionMode::Plan), Decision::Ask);
    assert_eq!(ask(PermissionMode::Bypass), Decision::Allow);
    let allowed = policy(
        PermissionMode::Default,
        &[(RuleAction::Allow, "kind:fetch")],
    );
    assert_eq!(
        decide(&allowed, "WebFetch", ToolKind::Fetch, "/work/x"),
        Decision::Allow
    );
}

#[test]
fn paths_outside_the_workspace_ask_even_for_reads_except_in_bypass() {
    let default = PermissionPolicy::default();
    assert_eq!(
        decide(&default, "Read", ToolKind::Read, "/outside/x"),
        Decision::Ask
    );
    assert_eq!(
        decide(&default, "Read", ToolKind::Read, "/work/x"),
        Decision::Allow
    );
    let bypass = policy(PermissionMode::Bypass, &[]);
    assert_eq!(
        decide(&bypass, "Read", ToolKind::Read, "/outside/x"),
        Decision::Allow
    );
    let allowed = policy(
        PermissionMode::Default,
        &[(RuleAction::Allow, "Read(//outside/**)")],
    );
    assert_eq!(
        decide(&allowed, "Read", ToolKind::Read, "/outside/x"),
        Decision::Allow
    );
}

#[test]
fn each_mode_has_its_defaults() {
    use Decision::*;
    let expectations = [
        (PermissionMode::Default, [Allow, Ask, Ask, Ask]),
        (PermissionMode::AcceptEdits, [Allow, Allow, Allow, Ask]),
        (PermissionMode::Bypass, [Allow, Allow, Allow, Allow]),
    ];
    let kinds = [
        ToolKind::Read,
        ToolKind::Edit,
        ToolKind::Move,
        ToolKind::Execute,
    ];
    for (mode, expected) in expectations {
        let policy = policy(mode, &[]);
        let got: Vec<_> = kinds
            .iter()
            .map(|&k| decide(&policy, "T", k, "/work/a"))
            .collect();
        assert_eq!(got, expected, "mode {mode}");
    }
    let plan = policy(PermissionMode::Plan, &[(RuleAction::Allow, "Write")]);
    assert_eq!(decide(&plan, "Read", ToolKind::Read, "/work/a"), Allow);
    assert!(
        matches!(decide(&plan, "Write", ToolKind::Edit, "/work/a"), Deny(m) if m.contains("plan mode"))
    );
}

#[test]
fn rules_match_by_name_pattern_and_kind_with_deny_first() {
    let policy = policy(
        PermissionMode::Default,
        &[
            (RuleAction::Allow, "Write(src/**)"),
            (RuleAction::Deny, "Write(src/secret/**)"),
            (RuleAction::Ask, "kind:fetch"),
        ],
    );
    assert_eq!(
        decide(&policy, "Write", ToolKind::Edit, "/work/src/a.rs"),
        Decision::Allow
    );
    assert!(matches!(
        decide(&policy, "Write", ToolKind::Edit, "/work/src/secret/k"),
        Decision::Deny(m) if m.contains("`Write(src/secret/**)` (from the agent's code)")
    ));
    assert_eq!(
        decide(&policy, "Write", ToolKind::Edit, "/work/lib/x"),
        Decision::Ask
    );
    assert_eq!(
        decide(&policy, "Fetch", ToolKind::Fetch, "/work/x"),
        Decision::Ask
    );
}

#[test]
fn relative_path_rules_start_at_the_sessions_folder_and_root_rules_at_their_files() {
    let deny = policy(
        PermissionMode::Bypass,
        &[(RuleAction::Deny, "Read(secret/**)")],
    );
    let read = |policy: &PermissionPolicy, path, cwd| {
        decide_with(
            policy,
            "Read",
            ToolKind::Read,
            RulePatterns::ReadsFiles,
            path,
            cwd,
        )
    };
    assert!(matches!(
        read(&deny, "/work/secret/key.txt", "/work"),
        Decision::Deny(_)
    ));
    assert_eq!(
        read(&deny, "/elsewhere/secret/key.txt", "/work"),
        Decision::Allow
    );
    assert!(matches!(
        read(&deny, "/other/secret/key.txt", "/other"),
        Decision::Deny(_)
    ));
    let mut from_file = deny.clone();
    from_file.rules = vec![
        PermissionRule::parse(RuleAction::Deny, "Read(/secret/**)")
            .unwrap()
            .from_origin(RuleOrigin::file(
                "/project/.agentry/config.toml",
                "/project",
            )),
    ];
    assert!(matches!(
        read(&from_file, "/project/secret/key.txt", "/project/sub"),
        Decision::Deny(m) if m.contains("/project/.agentry/config.toml")
    ));
    assert_eq!(
        read(&from_file, "/project/sub/secret/key.txt", "/project/sub"),
        Decision::Allow
    );
}

#[test]
fn read_and_edit_rules_apply_to_every_tool_that_reads_or_edits_files() {
    let policy = policy(
        PermissionMode::Bypass,
        &[
            (RuleAction::Deny, "Read(secrets/**)"),
            (RuleAction::Deny, "Edit(locked/**)"),
        ],
    );
    for tool in ["Read", "Grep", "Glob"] {
        assert!(
            matches!(
                decide(&policy, tool, ToolKind::Search, "/work/secrets"),
                Decision::Deny(_)
            ),
            "{tool} of the folder itself"
        );
        assert_eq!(
            decide(&policy, tool, ToolKind::Search, "/work"),
            Decision::Allow
        );
    }
    for tool in ["Write", "Edit", "MultiEdit", "NotebookEdit"] {
        assert!(
            matches!(
                decide(&policy, tool, ToolKind::Edit, "/work/locked/a.txt"),
                Decision::Deny(_)
            ),
            "{tool}"
        );
    }
    // A tool outside the families answers only to its own name.
    let other = decide_with(
        &policy,
        "Upload",
        ToolKind::Read,
        RulePatterns::Paths,
        "/work/secrets/x",
        "/work",
    );
    assert_eq!(other, Decision::Allow);
}

#[test]
fn a_deny_rule_matches_any_part_and_allow_rules_must_cover_every_part() {
    let rules = [
        (RuleAction::Allow, "git status"),
        (RuleAction::Allow, "echo"),
        (RuleAction::Deny, "rm"),
    ]
    .map(|(action, part)| (action, format!("Bash({part})")));
    let rules: Vec<_> = rules.iter().map(|(a, t)| (*a, t.as_str())).collect();
    let policy = policy(PermissionMode::Default, &rules);
    let none = RememberedAnswers::default();
    assert_eq!(
        decide_own(&policy, &commands(&["git status", "echo"]), &none),
        Decision::Allow
    );
    assert_eq!(
        decide_own(&policy, &commands(&["git status", "ls"]), &none),
        Decision::Ask
    );
    assert!(matches!(
        decide_own(&policy, &commands(&["echo", "rm"]), &none),
        Decision::Deny(m) if m.contains("`Bash(rm)`")
    ));
    assert_eq!(decide_own(&policy, &commands(&[]), &none), Decision::Ask);
}

#[test]
fn what_no_rule_can_see_is_never_allowed_by_a_rule_while_a_pattern_guards_the_tool() {
    let hidden = Call {
        subjects: RuleSubjects {
            parts: vec!["echo".to_owned()],
            hidden: Some("eval".to_owned()),
            ..RuleSubjects::default()
        },
        ..Call::default()
    };
    let none = RememberedAnswers::default();
    let guarded = policy(
        PermissionMode::Bypass,
        &[(RuleAction::Allow, "Bash"), (RuleAction::Deny, "Bash(rm)")],
    );
    assert_eq!(decide_own(&guarded, &hidden, &none), Decision::Ask);
    let always = RememberedAnswers {
        allowed: ["Bash".to_owned()].into(),
        definitions: [("Bash".to_owned(), "defined".to_owned())].into(),
        ..RememberedAnswers::default()
    };
    assert_eq!(decide_own(&guarded, &hidden, &always), Decision::Ask);
    let by_pattern = policy(
        PermissionMode::Default,
        &[(RuleAction::Allow, "Bash(echo)")],
    );
    assert_eq!(decide_own(&by_pattern, &hidden, &none), Decision::Ask);
    let outright = policy(PermissionMode::Default, &[(RuleAction::Allow, "Bash")]);
    assert_eq!(decide_own(&outright, &hidden, &none), Decision::Allow);
}

#[test]
fn remembered_answers_override_the_mode_but_not_deny_rules() {
    let mut remembered = RememberedAnswers::default();
    let by_name = |tool_name| AnsweredCall {
        tool_name,
        rules: None,
        definition: "defined",
    };
    remembered.remember(by_name("Bash"), PermissionOptionKind::AllowAlways);
    remembered.remember(by_name("Write"), PermissionOptionKind::RejectAlways);
    remembered.remember(by_name("Edit"), PermissionOptionKind::AllowOnce);
    let deny_bash = policy(PermissionMode::Bypass, &[(RuleAction::Deny, "Bash")]);
    let call = Call::default();
    let subject = |tool_name, kind, definition| CallSubject {
        tool_name,
        kind,
        patterns: RulePatterns::for_kind(kind),
        call: &call,
        locations: &[],
        outside_workspace: false,
        cwd: Path::new("/work"),
        definition,
    };
    assert!(matches!(
        deny_bash.decide(&subject("Bash", ToolKind::Execute, "defined"), &remembered),
        Decision::Deny(_)
    ));
    assert!(
        matches!(deny_bash.decide(&subject("Write", ToolKind::Edit, "defined"), &remembered), Decision::Deny(m) if m.contains("rest of this session"))
    );
    let default = PermissionPolicy::default();
    assert_eq!(
        default.decide(&subject("Bash", ToolKind::Execute, "defined"), &remembered),
        Decision::Allow
    );
    assert_eq!(
        default.decide(
            &subject("Bash", ToolKind::Execute, "redefined"),
            &remembered
        ),
        Decision::Ask,
        "an answer about a tool holds for the definition it was given for"
    );
    assert_eq!(
        default.decide(&subject("Edit", ToolKind::Edit, "defined"), &remembered),
        Decision::Ask
    );
}

#[test]
fn always_allowing_a_command_allows_its_rules_not_the_tool() {
    let mut remembered = RememberedAnswers::default();
    let rules = vec!["Bash(git status:*)".to_owned()];
    remembered.remember(
        AnsweredCall {
            tool_name: "Bash",
            rules: Some(&rules),
            definition: "defined",
        },
        PermissionOptionKind::AllowAlways,
    );
    let default = PermissionPolicy::default();
    assert_eq!(
        decide_own(&default, &commands(&["git status:*"]), &remembered),
        Decision::Allow
    );
    assert_eq!(
        decide_own(&default, &commands(&["rm -rf /"]), &remembered),
        Decision::Ask
    );
    let hidden = Call {
        subjects: RuleSubjects {
            parts: vec!["git status:*".to_owned()],
            hidden: Some("eval".to_owned()),
            ..RuleSubjects::default()
        },
        ..Call::default()
    };
    assert_eq!(decide_own(&default, &hidden, &remembered), Decision::Ask);
}

#[test]
fn answers_given_in_another_folder_are_forgotten() {
    let mut remembered = RememberedAnswers {
        allowed: ["Bash(ls:*)".to_owned()].into(),
        ..RememberedAnswers::default()
    };
    remembered.keep_for_folder(Path::new("/work"));
    remembered.keep_for_folder(Path::new("/work"));
    assert!(!remembered.allowed.is_empty(), "the same folder keeps them");
    remembered.keep_for_folder(Path::new("/home/u"));
    assert!(remembered.allowed.is_empty());
    assert_eq!(remembered.folder.as_deref(), Some(Path::new("/home/u")));
}

#[test]
fn an_escalated_call_asks_despite_allow_rules_and_answers_unless_denied_or_bypassed() {
    let allowed = RememberedAnswers {
        allowed: ["Bash".to_owned()].into(),
        definitions: [("Bash".to_owned(), "defined".to_owned())].into(),
        ..RememberedAnswers::default()
    };
    let escalated = Call {
        escalated: true,
        ..commands(&["make"])
    };
    let decide = |policy: PermissionPolicy| decide_own(&policy, &escalated, &allowed);
    assert_eq!(
        decide(policy(
            PermissionMode::AcceptEdits,
            &[(RuleAction::Allow, "Bash")]
        )),
        Decision::Ask
    );
    assert_eq!(decide(policy(PermissionMode::Bypass, &[])), Decision::Allow);
    assert!(matches!(
        decide(policy(
            PermissionMode::Bypass,
            &[(RuleAction::Deny, "Bash")]
        )),
        Decision::Deny(_)
    ));
}

#[test]
fn the_rules_suggested_allow_exactly_the_call() {
    let in_cwd = Call {
        locations: vec![ToolCallLocation::path("/work/src/lib.rs")],
        ..Call::default()
    };
    fn subject<'a>(
        call: &'a Call,
        patterns: RulePatterns,
        locations: &'a [ToolCallLocation],
    ) -> CallSubject<'a> {
        CallSubject {
            tool_name: "Write",
            kind: ToolKind::Edit,
            patterns,
            call,
            locations,
            outside_workspace: false,
            cwd: Path::new("/work"),
            definition: "defined",
        }
    }
    let rules = allow_rules(&subject(
        &in_cwd,
        RulePatterns::EditsFiles,
        &in_cwd.locations,
    ));
    assert_eq!(rules, ["Write(./src/lib.rs)"]);
    let outside = [ToolCallLocation::path("/etc/hosts")];
    let rules = allow_rules(&subject(&in_cwd, RulePatterns::EditsFiles, &outside));
    assert_eq!(rules, ["Write(//etc/hosts)"]);
    let policy = PermissionPolicy::new(
        PermissionMode::Default,
        rules
            .iter()
            .map(|rule| PermissionRule::parse(RuleAction::Allow, rule).unwrap())
            .collect(),
    );
    assert_eq!(
        policy.decide(
            &subject(&in_cwd, RulePatterns::EditsFiles, &outside),
            &RememberedAnswers::default()
        ),
        Decision::Allow
    );
    let commands = Call {
        subjects: RuleSubjects {
            suggestions: vec!["git status:*".to_owned(), "git status:*".to_owned()],
            ..RuleSubjects::default()
        },
        ..Call::default()
    };
    let mut bash = subject(&commands, RulePatterns::Own, &[]);
    bash.tool_name = "Bash";
    assert_eq!(allow_rules(&bash), ["Bash(git status:*)"]);
}

#[test]
fn a_rule_naming_an_mcp_server_covers_its_tools_and_no_other() {
    let policy = policy(
        PermissionMode::Default,
        &[
            (RuleAction::Deny, "mcp__github"),
            (RuleAction::Allow, "mcp__docs__*"),
        ],
    );
    let call = Call::default();
    let decide = |tool_name| {
        policy.decide(
            &CallSubject {
                tool_name,
                kind: ToolKind::Other,
                patterns: RulePatterns::None,
                call: &call,
                locations: &[],
                outside_workspace: false,
                cwd: Path::new("/work"),
                definition: "defined",
            },
            &RememberedAnswers::default(),
        )
    };
    assert!(matches!(
        decide("mcp__github__create_issue"),
        Decision::Deny(_)
    ));
    assert_eq!(decide("mcp__githubx__create_issue"), Decision::Ask);
    assert_eq!(decide("mcp__docs__search"), Decision::Allow);
    assert_eq!(decide("mcp__docsearch__x"), Decision::Ask);
    // The server `docs__x` names its tools `mcp__docs_x__…` (no `__` in a server's part).
    assert_eq!(decide("mcp__docs_x__y"), Decision::Ask);
}

#[test]
fn read_denials_cover_what_read_deny_rules_and_the_tools_own_deny_rules_name() {
    let policy = policy(
        PermissionMode::Default,
        &[
            (RuleAction::Deny, "Read(secrets/**)"),
            (RuleAction::Deny, "Grep(*.key)"),
            (RuleAction::Deny, "Write(x/**)"),
            (RuleAction::Ask, "Read(asked/**)"),
        ],
    );
    let denials = policy.read_denials("Grep", Path::new("/work"));
    assert!(denials.covers(Path::new("/work/secrets/a.txt")));
    assert!(denials.covers(Path::new("/work/deep/id.key")));
    assert!(!denials.covers(Path::new("/work/x/a")));
    assert!(!denials.covers(Path::new("/work/asked/a")));
    assert!(
        !policy
            .read_denials("Glob", Path::new("/work"))
            .covers(Path::new("/work/id.key"))
    );
}

/// A command line of `parts` whose redirections write `files`.
fn writing(parts: &[&str], files: &[&str]) -> Call {
    Call {
        locations: files
            .iter()
            .map(|file| ToolCallLocation::path(*file))
            .collect(),
        subjects: RuleSubjects {
            locations_are_writes: true,
            ..RuleSubjects::visible(parts.iter().map(|p| p.to_string()).collect())
        },
        ..Call::default()
    }
}

#[test]
fn a_command_lines_writes_are_judged_as_edits() {
    let none = RememberedAnswers::default();
    let echo = [(RuleAction::Allow, "Bash(echo)")];
    let default = policy(PermissionMode::Default, &echo);
    let accept_edits = policy(PermissionMode::AcceptEdits, &echo);
    let out = writing(&["echo"], &["/work/out.txt"]);
    assert_eq!(decide_own(&default, &out, &none), Decision::Ask);
    assert_eq!(decide_own(&accept_edits, &out, &none), Decision::Allow);
    let edit_allowed = policy(
        PermissionMode::Default,
        &[
            (RuleAction::Allow, "Bash(echo)"),
            (RuleAction::Allow, "Edit(out.txt)"),
        ],
    );
    assert_eq!(decide_own(&edit_allowed, &out, &none), Decision::Allow);
    let outside = writing(&["echo"], &["/etc/cron.d/x"]);
    assert_eq!(decide_own(&accept_edits, &outside, &none), Decision::Ask);
    let edit_denied = policy(
        PermissionMode::Bypass,
        &[
            (RuleAction::Allow, "Bash"),
            (RuleAction::Deny, "Edit(.env)"),
        ],
    );
    assert!(matches!(
        decide_own(&edit_denied, &writing(&["echo"], &["/work/sub/.env"]), &none),
        Decision::Deny(m) if m.contains("Edit(.env)")
    ));
    let edit_asked = policy(
        PermissionMode::Bypass,
        &[(RuleAction::Ask, "Write(docs/**)")],
    );
    assert_eq!(
        decide_own(
            &edit_asked,
            &writing(&["echo"], &["/work/docs/a.md"]),
            &none
        ),
        Decision::Ask
    );
    assert_eq!(
        allow_rules(&CallSubject {
            tool_name: "Bash",
            kind: ToolKind::Execute,
            patterns: RulePatterns::Own,
            call: &out,
            locations: &out.locations,
            outside_workspace: false,
            cwd: Path::new("/work"),
            definition: "defined",
        }),
        ["Edit(./out.txt)"]
    );
}

#[test]
fn writing_a_protected_file_asks_in_every_mode_but_bypass_whatever_allows_it() {
    let none = RememberedAnswers::default();
    for path in [
        "/work/.agentry/config.toml",
        "/work/.claude/settings.json",
        "/work/.mcp.json",
        "/work/.git/hooks/pre-commit",
    ] {
        for mode in [PermissionMode::AcceptEdits, PermissionMode::Default] {
            let allowed = policy(
                mode,
                &[(RuleAction::Allow, "Edit"), (RuleAction::Allow, "Bash")],
            );
            assert_eq!(
                decide(&allowed, "Write", ToolKind::Edit, path),
                Decision::Ask,
                "{path}"
            );
            assert_eq!(
                decide_own(&allowed, &writing(&["echo"], &[path]), &none),
                Decision::Ask,
                "{path}"
            );
        }
        let bypass = policy(PermissionMode::Bypass, &[]);
        assert_eq!(
            decide(&bypass, "Write", ToolKind::Edit, path),
            Decision::Allow
        );
    }
    assert_eq!(
        decide(
            &policy(PermissionMode::AcceptEdits, &[]),
            "Write",
            ToolKind::Edit,
            "/work/src/lib.rs"
        ),
        Decision::Allow
    );
}

#[test]
fn a_deny_rule_matching_what_a_program_may_run_asks() {
    let none = RememberedAnswers::default();
    let may_run = Call {
        subjects: RuleSubjects {
            possible: vec!["rm".to_owned()],
            ..RuleSubjects::visible(vec!["setsid".to_owned()])
        },
        ..Call::default()
    };
    let guarded = policy(
        PermissionMode::Bypass,
        &[(RuleAction::Allow, "Bash"), (RuleAction::Deny, "Bash(rm)")],
    );
    assert_eq!(decide_own(&guarded, &may_run, &none), Decision::Ask);
    let unguarded = policy(PermissionMode::Default, &[(RuleAction::Allow, "Bash")]);
    assert_eq!(decide_own(&unguarded, &may_run, &none), Decision::Allow);
}

/// `ln .git/config notes.txt` in one call, `>> notes.txt` in the next: a file with other names
/// is written through all of them, which no rule naming it can see.
#[cfg(unix)]
#[test]
fn a_write_in_place_to_a_file_with_other_names_asks() {
    let dir = tempfile::tempdir().unwrap();
    let root = agentry_plugin::paths::canonical_path(dir.path());
    std::fs::write(root.join("notes.txt"), "").unwrap();
    std::fs::write(root.join("config"), "").unwrap();
    let edits_here = format!("Edit(/{}/**)", root.display());
    let policy = policy(
        PermissionMode::Default,
        &[
            (RuleAction::Allow, "Bash(echo)"),
            (RuleAction::Allow, &edits_here),
        ],
    );
    let none = RememberedAnswers::default();
    let notes = root.join("notes.txt").display().to_string();
    let appending = writing(&["echo"], &[&notes]);
    assert_eq!(decide_own(&policy, &appending, &none), Decision::Allow);
    std::fs::hard_link(root.join("config"), root.join("linked")).unwrap();
    let linked = root.join("linked").display().to_string();
    assert_eq!(
        decide_own(&policy, &writing(&["echo"], &[&linked]), &none),
        Decision::Ask
    );
    assert_eq!(decide_own(&policy, &appending, &none), Decision::Allow);
}

/// A program's argument that builds a command when it runs (`vim -c '!x=r; ${x}m …'`) asks
/// wherever a Bash deny or ask rule could have named it, and leaves allow rules as they are
/// where none exists.
#[test]
fn arguments_that_may_run_an_unseen_command_ask_beside_a_deny_rule() {
    let none = RememberedAnswers::default();
    let call = Call {
        subjects: RuleSubjects {
            arguments_unseen: Some("an argument of `vim` may run a command".to_owned()),
            ..RuleSubjects::visible(vec!["vim -c x".to_owned()])
        },
        ..Call::default()
    };
    let guarded = policy(
        PermissionMode::Default,
        &[
            (RuleAction::Allow, "Bash"),
            (RuleAction::Deny, "Bash(rm:*)"),
        ],
    );
    assert_eq!(decide_own(&guarded, &call, &none), Decision::Ask);
    let allowed = policy(
        PermissionMode::Default,
        &[(RuleAction::Allow, "Bash(vim -c x)")],
    );
    assert_eq!(decide_own(&allowed, &call, &none), Decision::Allow);
}
