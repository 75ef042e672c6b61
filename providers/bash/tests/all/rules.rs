//! Bash's permission rules against compound commands: each command line of the table is
//! prepared by the real Bash tool and decided by the session's policy, as the executor does.

use agentry::permission::{
    CallSubject, Decision, PermissionMode, PermissionPolicy, RememberedAnswers, RuleAction,
};
use agentry::provider::Provider;
use agentry::tool::DynTool;
use agentry_bash::Shell;
use serde_json::json;
use std::path::Path;
use std::sync::Arc;

/// What the table expects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    Allow,
    Deny,
    Ask,
}

fn bash_tool() -> Arc<dyn DynTool> {
    Shell::default()
        .tools()
        .into_iter()
        .find(|tool| tool.name() == "Bash")
        .unwrap()
}

fn policy(mode: PermissionMode, rules: &[(RuleAction, &str)]) -> PermissionPolicy {
    PermissionPolicy::with_rules(mode, rules).unwrap()
}

fn decide(tool: &dyn DynTool, policy: &PermissionPolicy, command: &str) -> Expect {
    let cwd = Path::new("/work");
    let call = tool.prepare(json!({ "command": command }), cwd).unwrap();
    let locations = call.locations();
    let decision = policy.decide(
        &CallSubject {
            tool_name: "Bash",
            kind: tool.kind(),
            patterns: tool.rule_patterns(),
            call: call.as_ref(),
            locations: &locations,
            outside_workspace: locations.iter().any(|l| !l.path.starts_with(cwd)),
            cwd,
            definition: "",
        },
        &RememberedAnswers::default(),
    );
    match decision {
        Decision::Allow => Expect::Allow,
        Decision::Deny(_) => Expect::Deny,
        Decision::Ask => Expect::Ask,
    }
}

fn check(policy: &PermissionPolicy, table: &[(&str, Expect)]) {
    let tool = bash_tool();
    let wrong: Vec<String> = table
        .iter()
        .filter_map(|(command, expected)| {
            let got = decide(tool.as_ref(), policy, command);
            (got != *expected).then(|| format!("{command:?}: expected {expected:?}, got {got:?}"))
        })
        .collect();
    assert!(
        wrong.is_empty(),
        "{} wrong:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

#[test]
fn seventy_command_lines_against_a_small_rule_set() {
    use Expect::*;
    let policy = policy(
        PermissionMode::Default,
        &[
            (RuleAction::Allow, "Bash(git status:*)"),
            (RuleAction::Allow, "Bash(echo:*)"),
            (RuleAction::Allow, "Bash(ls:*)"),
            (RuleAction::Allow, "Bash(cat:*)"),
            (RuleAction::Allow, "Bash(npm run * --silent)"),
            (RuleAction::Deny, "Bash(rm:*)"),
            (RuleAction::Deny, "Bash(git push:*)"),
            (RuleAction::Deny, "Bash(curl:*)"),
            (RuleAction::Ask, "Bash(git commit:*)"),
        ],
    );
    let table = [
        // Allowed: each simple command is covered.
        ("git status", Allow),
        ("git status --short", Allow),
        ("echo hi", Allow),
        ("ls -la", Allow),
        ("ls -la | cat -n", Allow),
        ("echo hi && ls", Allow),
        ("git status && echo done", Allow),
        ("echo hi;", Allow),
        ("echo \"a && rm -f victim\"", Allow),
        ("echo 'rm -f victim'", Allow),
        ("echo rm\\ -f\\ victim", Allow),
        ("echo hi > /dev/null 2>&1", Allow),
        ("ls 2>&1 | cat", Allow),
        ("npm run build --silent", Allow),
        ("echo $HOME", Allow),
        ("ls $(echo .)", Allow),
        // nohup writes nohup.out: an edit the default mode asks about.
        ("nohup ls", Ask),
        ("time ls -la", Allow),
        ("cat <<'EOF'\n$(rm -f victim)\nEOF", Allow),
        // Denied: some simple command, however written, is denied.
        ("rm -f victim", Deny),
        ("echo hi && rm -f victim", Deny),
        ("echo hi; rm -f victim", Deny),
        ("false || rm -f victim", Deny),
        ("echo hi | rm -f victim", Deny),
        ("echo hi & rm -f victim", Deny),
        ("echo hi\nrm -f victim", Deny),
        ("echo $(rm -f victim)", Deny),
        ("echo `rm -f victim`", Deny),
        ("echo \"$(rm -f victim)\"", Deny),
        ("(rm -f victim)", Deny),
        ("{ rm -f victim; }", Deny),
        ("if true; then rm -f victim; fi", Deny),
        ("for f in a b; do rm -f \"$f\"; done", Deny),
        ("while false; do rm -f victim; done", Deny),
        ("f() { rm -f victim; }; f", Deny),
        ("diff <(rm -f victim) x", Deny),
        ("cat <<EOF\n$(rm -f victim)\nEOF", Deny),
        ("/bin/rm -f victim", Deny),
        ("/usr/bin/env rm -f victim", Deny),
        ("env FOO=1 rm -f victim", Deny),
        ("FOO=1 BAR=2 rm -f victim", Deny),
        ("sudo rm -f victim", Deny),
        ("sudo -u root rm -f victim", Deny),
        ("nohup rm -f victim > /dev/null &", Deny),
        ("time rm -f victim", Deny),
        ("command rm -f victim", Deny),
        ("exec rm -f victim", Deny),
        ("timeout 5 rm -f victim", Deny),
        ("cat list | xargs rm -f", Deny),
        ("cat list | xargs -I{} rm -f {}", Deny),
        ("find . -name victim -exec rm -f {} \\;", Deny),
        ("bash -c 'rm -f victim'", Deny),
        ("sh -c \"echo hi && rm -f victim\"", Deny),
        ("bash -lc 'bash -c \"rm -f victim\"'", Deny),
        ("r\\m -f victim", Deny),
        ("\"rm\" -f victim", Deny),
        ("'r'm -f victim", Deny),
        ("$'rm' -f victim", Deny),
        ("$'\\x72m' -f victim", Deny),
        ("\\rm -f victim", Deny),
        ("ls && git push origin main", Deny),
        ("git push", Deny),
        ("curl -s http://127.0.0.1:9/", Deny),
        // Asked: something is not covered, or cannot be seen past a deny rule.
        ("eval 'rm -f victim'", Ask),
        ("$CMD -f victim", Ask),
        ("$(echo rm) -f victim", Ask),
        ("echo rm -f victim | bash", Ask),
        ("bash -c \"$SCRIPT\"", Ask),
        ("PATH=/tmp ls", Ask),
        ("export PATH=/tmp; ls", Ask),
        ("echo (", Ask),
        ("git commit -m wip", Ask),
        ("echo hi && git commit -m wip", Ask),
        ("echo hi > out.txt", Ask),
        ("npm run build", Ask),
        ("git statusx", Ask),
        ("lsof", Ask),
        ("echo $(whoami)", Ask),
        ("/bin/ls", Ask),
        ("sudo ls", Ask),
        ("env -S 'rm -f victim'", Ask),
        ("FOO=1 ls", Ask),
    ];
    assert!(table.len() >= 60);
    check(&policy, &table);
}

#[test]
fn a_deny_rule_beside_allowing_all_of_bash_holds_against_chains() {
    use Expect::*;
    let policy = policy(
        PermissionMode::Default,
        &[
            (RuleAction::Allow, "Bash"),
            (RuleAction::Deny, "Bash(rm:*)"),
        ],
    );
    check(
        &policy,
        &[
            ("echo hi && rm -f victim", Deny),
            ("echo hi", Allow),
            ("ls | wc -l", Allow),
            ("eval 'rm -f victim'", Ask),
        ],
    );
    // Without a pattern to step around, allowing all of Bash allows what cannot be seen.
    let all = self::policy(PermissionMode::Default, &[(RuleAction::Allow, "Bash")]);
    check(&all, &[("eval 'rm -f victim'", Allow)]);
}

/// The reproductions that once removed `victim` unasked under the README's own example rules.
#[test]
fn what_an_allow_rule_cannot_see_through_is_asked_about() {
    use Expect::*;
    let policy = policy(
        PermissionMode::Default,
        &[
            (RuleAction::Allow, "Bash(git status:*)"),
            (RuleAction::Allow, "Bash(echo:*)"),
        ],
    );
    let victim = "rm -f victim";
    let table: Vec<(String, Expect)> = [
        format!("GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0='{victim}; false' git status"),
        format!("env GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0='{victim}; false' git status"),
        format!("export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0='{victim}; false'; git status"),
        format!("GIT_CONFIG_PARAMETERS=\"'core.fsmonitor'='{victim}; false'\" git status"),
        format!("git status <<EOF\n`{victim}`\nEOF"),
        format!("echo ${{x:-`{victim}`}}"),
        format!("echo ${{x:=$({victim})}}"),
        format!("echo `echo \\`{victim}\\``"),
        format!("x='$({victim})'; git status ${{x@P}}"),
        format!("x='a[$({victim})0]'; git status $((x))"),
        "echo pw >&out.txt".to_owned(),
        "echo pw &>out.txt".to_owned(),
        "echo pw >|out.txt".to_owned(),
        "git status >& f".to_owned(),
    ]
    .into_iter()
    .map(|command| (command, Ask))
    .collect();
    let table: Vec<(&str, Expect)> = table.iter().map(|(c, e)| (c.as_str(), *e)).collect();
    check(&policy, &table);
}

/// The command lines of `forms` that `policy` lets Bash run without asking.
fn run_unasked(policy: &PermissionPolicy, forms: impl Iterator<Item = String>) -> Vec<String> {
    let tool = bash_tool();
    forms
        .filter(|form| decide(tool.as_ref(), policy, form) == Expect::Allow)
        .collect()
}

/// Asserts that none of `forms` (written with `rm`) runs unasked past a deny rule on `rm` beside
/// allowing all of Bash, nor past one on `curl` with `curl` in their place.
fn assert_never_unasked_past_a_deny_rule(forms: &[&str]) {
    for denied in ["rm", "curl"] {
        let policy = policy(
            PermissionMode::Default,
            &[
                (RuleAction::Allow, "Bash"),
                (RuleAction::Deny, &format!("Bash({denied}:*)")),
            ],
        );
        let unasked = run_unasked(&policy, forms.iter().map(|form| form.replace("rm", denied)));
        assert!(
            unasked.is_empty(),
            "run unasked past Bash({denied}:*): {unasked:#?}"
        );
    }
}

/// Forms that once got past a deny rule beside allowing all of Bash: each is refused or
/// asked about, never run unasked.
#[test]
fn a_deny_rule_holds_against_what_the_reader_cannot_see_through() {
    assert_never_unasked_past_a_deny_rule(&[
        "r\\\nm victim",
        "/bin/r? victim",
        "/usr/bin/r[m] victim",
        "{rm,victim}",
        "coproc rm victim",
        "mapfile -C 'rm victim' -c 1 a < /etc/hostname",
        "readarray -C 'rm victim' -c 1 a < /etc/hostname",
        "hash -p /bin/rm x; x victim",
        "bash <(echo 'rm victim')",
        "bash /dev/stdin <<< 'rm victim'",
        ". <(echo 'rm victim')",
        "source /dev/stdin <<< 'rm victim'",
        "echo victim | xargs -I{} sh -c 'rm {}'",
        "setsid rm victim",
        "ionice -c 3 rm victim",
        "chrt -o 0 rm victim",
        "flock /tmp/lock rm victim",
        "taskset -c 0 rm victim",
        "strace -o /dev/null rm victim",
        "unshare -r rm victim",
        "watch -n 1 rm victim",
        "script -qc 'rm victim' /dev/null",
        "nsenter -t 1 rm victim",
        "prlimit --nofile=100 rm victim",
        "setarch x86_64 rm victim",
        "fakeroot rm victim",
        "cpulimit -l 50 -- rm victim",
        "somewrapper --quiet rm victim",
        "python3 -c 'import os; os.remove(\"victim\")'",
        "sed 'e rm victim' /etc/hostname",
        "awk 'BEGIN { system(\"rm victim\") }'",
        "x=rm; $x victim",
        "trap 'rm victim' EXIT",
        "eval 'rm victim'",
    ]);
}

/// What a second attack got past allow rules, as a hostile model: characters bash and the
/// grammar read differently, subscripts evaluated out of sight, here-document delimiters whose
/// quotes bash removes, escapes decoded past what the reader knows, descriptor variables, and
/// builtins given their options in other spellings. None runs unasked.
#[test]
fn allow_rules_never_cover_what_a_second_attack_hid_in_a_line() {
    let policy = policy(
        PermissionMode::Default,
        &[
            (RuleAction::Allow, "Bash(git status:*)"),
            (RuleAction::Allow, "Bash(echo:*)"),
            (RuleAction::Allow, "Bash(ls:*)"),
            (RuleAction::Allow, "Bash(cat:*)"),
        ],
    );
    let forms = [
        "echo x\r# ; rm victim",
        "echo x\u{b}# ; rm victim",
        "echo x\u{c}# ; rm victim",
        "echo x \\\r\nrm victim",
        "x='b[$(rm victim)]'; a=([x]=1); echo",
        "x='b[$(rm victim)]'; declare a=([x]=1); echo",
        "x='b[$(rm victim)]'; a+=([x+0]=1); echo",
        "x=HOME=10; a=([x]=1); git status --short",
        "x='b[$(rm victim)]'; echo hi {a[x]}>/dev/null",
        "echo hi {HOME}>/dev/null; git status --short",
        "echo hi {fd}>/dev/null {PATH}>/dev/null; git status",
        "cat <<$'EOF'\nhello\nEOF\nrm victim\n$'EOF'",
        "cat <<$\"EOF\"\nhello\nEOF\nrm victim\n$\"EOF\"",
        "cat <<E$'O'F\nhello\nEOF\nrm victim\nE$'O'F",
        "cat <<E\"\"OF\nhello\nEOF\nrm victim\nE\"\"OF",
        "unset PATH; ls",
        "cat < /dev/tcp/127.0.0.1/9",
        "/usr/bin/time -a -o .git/config -f x echo hi; git status --short",
        "echo x > /proc/self/cwd/zz",
    ];
    let unasked = run_unasked(&policy, forms.iter().map(|form| form.to_string()));
    assert!(unasked.is_empty(), "run unasked: {unasked:#?}");
}

/// The same attack's forms past a deny rule beside allowing all of Bash.
#[test]
fn a_deny_rule_holds_against_a_second_attack() {
    assert_never_unasked_past_a_deny_rule(&[
        "true\u{b}# ; rm victim",
        "x='b[$(rm victim)]'; a=([x]=1)",
        "$'\\x{72}m' victim",
        "/bin/$'\\x{72}m' victim",
        "$'rm\\400' victim",
        "$'rm\\x{100}' victim",
        "$'r\\UFFFFFFFFm' victim",
        "r$'\\x{}'m victim",
        "trap -- 'x=rm; $x victim' EXIT",
        "trap -- \"$c\" EXIT",
        "mapfile -tC 'x=rm; $x' -c 1 a <<< victim",
        "compgen -bC 'x=rm; $x victim' zz",
        "env -iS'r\"\"m victim'",
        "env --split='rm victim'",
        "env --sp='rm victim'",
        "echo 1 > q; sed -e'1e x=rm; $x victim' q",
        "x='b[$(rm victim)]'; printf -va[x] %s 1",
        "p=-p; b=/usr/bin/rm; hash \"$p\" \"$b\" zz; zz victim",
        "shopt -s expand_aliases; q='zz=rm victim'; alias \"$q\"\nzz",
        "set -k; git status --short GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0='x=rm; $x victim; false'",
        "bash //dev/stdin <<< 'rm victim'",
        "source /./dev/stdin <<< 'rm victim'",
        "bash /sys/../dev/stdin <<< 'rm victim'",
        "python3 //dev/stdin <<< 'import os'",
    ]);
}

/// What a third attack got past rules: a quoted `(…)` given to a declaration (read again as an
/// array's elements), a here-document inside a here-document's body (bash ends the outer one
/// where the grammar does not), and programs that run a command from inside an argument
/// (`vim -c '!rm x'`, `sqlite3 '.shell rm x'`, `--checkpoint-action=exec=rm x`).
#[test]
fn rules_hold_against_a_third_attack() {
    let policy = policy(
        PermissionMode::Default,
        &[
            (RuleAction::Allow, "Bash(git status:*)"),
            (RuleAction::Allow, "Bash(echo:*)"),
        ],
    );
    let hidden_in_a_line = [
        "echo hi; declare -a a='($(rm victim))'",
        "echo hi; declare -a a+='($(rm victim))'",
        "echo hi; readonly -a r='($(rm victim))'",
        "echo hi; typeset -A r='([k]=$(rm victim))'",
        "echo hi; declare -A m='([$(rm victim)]=1)'",
        "a=(); declare a='([$(rm victim)]=1)'; echo hi",
        "x='($(rm victim))'; declare -a a=$x; echo",
        "x='($(rm victim))'; declare -a a=\"$x\"; echo",
        "f() { local -a a=$1; }; echo",
        "declare -a a=$'($(rm victim))'; echo",
        "builtin declare -a a='($(rm victim))'",
        "command declare -a a='($(rm victim))'",
        "\"declare\" -a a='($(rm victim))'",
        "echo <<EOF\n$(echo <<'X'\nEOF\nrm victim\nX\n)\nEOF",
        "echo <<-EOF\n$(echo <<'X'\n\tEOF\nrm victim\nX\n)\nEOF",
    ];
    let unasked = run_unasked(
        &policy,
        hidden_in_a_line.iter().map(|form| form.to_string()),
    );
    assert!(unasked.is_empty(), "run unasked: {unasked:#?}");
    assert_never_unasked_past_a_deny_rule(&hidden_in_a_line);
    assert_never_unasked_past_a_deny_rule(&[
        "vim -es -c '!rm victim' -c q",
        "echo x | ed -s '!rm victim'",
        "ed -s s.json <<< '!rm victim'",
        "sqlite3 :memory: '.shell rm victim'",
        "tar cf /dev/null victim --checkpoint=1 --checkpoint-action=exec='rm victim'",
        "zip -q z.zip s.json -T -TT='rm victim'",
        "make --eval='$(shell rm victim)' -f /dev/null",
        "git ls-remote --upload-pack='rm victim;false' .",
        "git -C . ls-remote --upload-pack='x=r; ${x}m victim; false' .",
    ]);
    // Declarations that only set words, and bodies that end where both read them, stay
    // understood.
    check(
        &policy,
        &[
            ("declare -a a=(1 2); echo ${a[0]}", Expect::Allow),
            ("declare x=plain; echo $x", Expect::Allow),
            ("echo <<EOF\nline\nEOF", Expect::Allow),
        ],
    );
}

/// A program run before a redirection, or beside it, may make the file it names a link first
/// (`git apply` of a patch that adds one, `tar x`, a script): the write asks, even where Bash
/// is allowed; one known to keep paths, or one that only runs after the write, does not.
#[test]
fn a_write_beside_a_program_that_may_make_links_asks() {
    use Expect::*;
    let bash_allowed = policy(PermissionMode::AcceptEdits, &[(RuleAction::Allow, "Bash")]);
    check(
        &bash_allowed,
        &[
            ("git apply p.diff; echo x >> link", Ask),
            ("tar xf t.tar && echo x > notes.txt", Ask),
            ("./make-links.sh; echo x > notes.txt", Ask),
            ("echo x > notes.txt | patch -p1 < p.diff", Ask),
            (
                "{ git apply p.diff; } > notes.txt; echo x >> other.txt",
                Ask,
            ),
            ("echo x > link & git apply p.diff", Ask),
            (
                "for i in 1 2; do echo x >> link; git apply p.diff; done",
                Ask,
            ),
            ("f() { echo x >> link; }; git apply p.diff; f", Ask),
            ("echo $(git apply p.diff) > link", Ask),
            ("cargo build > build.log 2>&1", Allow),
            ("echo $$ > pid.txt; exec sleep 30", Allow),
            ("echo x > notes.txt && git apply p.diff", Allow),
            ("cat a.txt > notes.txt; ls", Allow),
            ("mkdir -p out && echo x > out/notes.txt", Allow),
        ],
    );
}

/// Writes no `Edit(…)` rule can name — to a variable's file, after a `cd`, through a link the
/// line makes, in another spelling of a protected path — ask, even where all of Bash is
/// allowed.
#[test]
fn a_write_no_rule_can_name_asks_even_where_bash_is_allowed() {
    use Expect::*;
    let guarded = policy(
        PermissionMode::Default,
        &[
            (RuleAction::Allow, "Bash"),
            (RuleAction::Deny, "Edit(protected/**)"),
        ],
    );
    check(
        &guarded,
        &[
            ("f=protected/a0; echo x > $f", Ask),
            ("echo x > \"$PWD\"/protected/a0", Ask),
            ("echo x > ~+/protected/a0", Ask),
            ("cd protected && echo x > a1", Ask),
            ("ln -s protected/a0 l0; echo x > l0", Ask),
            ("eval 'echo x > protected/a0'", Ask),
            ("echo x > $'\\x{70}rotected/a1'", Ask),
            ("echo x > protected/a0", Deny),
            ("echo x > notes.txt", Allow),
        ],
    );
    let bash_allowed = policy(PermissionMode::Default, &[(RuleAction::Allow, "Bash")]);
    check(
        &bash_allowed,
        &[
            ("f=.git/config; echo '[alias]' >> $f", Ask),
            ("echo x >> $'.gi\\x{74}/config'", Ask),
            ("echo x > $'.envrc\\400'", Ask),
            ("echo x > .git/config", Ask),
            ("echo x > notes.txt", Allow),
        ],
    );
    let edits = policy(
        PermissionMode::AcceptEdits,
        &[(RuleAction::Allow, "Bash(echo:*)")],
    );
    check(
        &edits,
        &[
            ("echo x >> $'.gi\\x{74}/config'", Ask),
            ("echo '[core]'\u{b}# >> .git/config", Ask),
            ("nohup echo pwned", Allow),
            ("echo x > notes.txt", Allow),
        ],
    );
}
