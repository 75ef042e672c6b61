//! The differential test of Bash's rule reader: several hundred command lines, each a construct
//! (or a combination of them) applied to `rm` and to `curl`, are run by real bash through the
//! Bash tool, in its sandbox (network off), with every `execve` traced by strace. For each, every
//! program that really started must be one of the simple commands the reader reported, or the
//! reader must have said it could not see through the line. There is no exception list.

use agentry::provider::Provider;
use agentry::testing::ToolHarness;
use agentry::tool::DynTool;
use agentry_bash::{SandboxSettings, Shell, ShellConfig, WhenUnavailable};
use serde_json::json;
use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

/// A command a construct is applied to.
struct Target {
    /// Its name.
    name: &'static str,
    /// Its arguments, as one piece of a command line.
    args: &'static str,
    /// Its path.
    path: &'static str,
    /// Its path as a glob (`/bin/r?`) and with a bracket (`/usr/bin/r[m]`).
    globs: [&'static str; 2],
    /// The whole command as a brace expansion.
    brace: &'static str,
    /// Its name split by a backslash-newline.
    split: &'static str,
}

const TARGETS: [Target; 2] = [
    Target {
        name: "rm",
        args: "victim",
        path: "/bin/rm",
        globs: ["/bin/r?", "/usr/bin/r[m]"],
        brace: "{rm,victim}",
        split: "r\\\nm",
    },
    Target {
        name: "curl",
        args: "-s http://127.0.0.1:9/",
        path: "/usr/bin/curl",
        globs: ["/usr/bin/cur?", "/usr/bin/cur[l]"],
        brace: "{curl,-s,http://127.0.0.1:9/}",
        split: "cu\\\nrl",
    },
];

/// Constructs, with `{C}` for the whole command, `{N}` its name, `{A}` its arguments and `{P}`
/// its path.
const CONSTRUCTS: &[&str] = &[
    // Chains, groups and control flow.
    "{C}",
    "echo hi && {C}",
    "true; {C}",
    "false || {C}",
    "echo | {C}",
    "{C} &\nwait",
    "({C})",
    "{ {C}; }",
    "! {C}",
    "time {C}",
    "if true; then {C}; fi",
    "if false; then :; elif true; then {C}; fi",
    "for i in 1; do {C}; done",
    "while true; do {C}; break; done",
    "until {C}; do break; done",
    "case x in x) {C};; esac",
    "select x in a; do {C}; break; done <<< 1",
    "f() { {C}; }; f",
    "function f { {C}; }; f",
    "f() ( {C} ); f",
    "command_not_found_handle() { {C}; }; no-such-program-here",
    // Substitutions, wherever a word may hold one.
    "echo $({C})",
    "echo `{C}`",
    "echo \"$({C})\"",
    "x=$({C})",
    "export y=$({C})",
    "local_test() { local z=$({C}); }; local_test",
    "cat <({C})",
    "echo hi > >({C})",
    "exec 3< <({C})",
    "cat <<< \"$({C})\"",
    "[[ -n $({C}) ]]",
    "case $({C}) in *) ;; esac",
    "for f in $({C}); do :; done",
    "echo ${x:-$({C})}",
    "echo \"${x:-$({C})}\"",
    "echo ${x:-`{C}`}",
    "echo ${x:=$({C})}",
    "echo ${x/a/$({C})}",
    "echo `echo \\`{C}\\``",
    "echo $(( $({C} | wc -l) ))",
    "echo > \"$({C})\"",
    // Here-documents.
    "cat <<EOF\n$({C})\nEOF",
    "cat <<EOF\n`{C}`\nEOF",
    "cat <<EOF\n${x:-$({C})}\nEOF",
    "cat <<EOF\n${x:-`{C}`}\nEOF",
    "cat <<-EOF\n\t$({C})\n\tEOF",
    "cat <<'EOF'\n$({C})\nEOF",
    "cat <<\"EOF\"\n`{C}`\nEOF",
    "cat <<\\EOF\n$({C})\nEOF",
    "true <<EOF\n$({C})\nEOF",
    // Expansions that run their value.
    "x='$({C})'; echo ${x@P}",
    "x='a[$({C})0]'; echo $((x))",
    "x='a[$({C})0]'; echo $[x]",
    "x='a[$({C})0]'; (( x ))",
    "x='a[$({C})0]'; [[ $x -eq 0 ]]",
    "x='a[$({C})0]'; echo ${a[x]}",
    "x='a[$({C})0]'; echo ${a[$x]}",
    "x='a[$({C})0]'; s=abc; echo ${s:x}",
    "x='a[$({C})0]'; declare -i n; n=x",
    "x='a[$({C})0]'; let n=x",
    "x='a[$({C})0]'; a=(1); unset \"$x\"",
    "x='a[$({C})0]'; test -v \"$x\"",
    "x='a[$({C})0]'; [[ -v $x ]]",
    "x='a[$({C})0]'; printf -v \"$x\" 1",
    "x='a[$({C})0]'; read \"$x\" <<< 1",
    "x='a[$({C})0]'; declare \"$x\"=1",
    "x='a[$({C})0]'; for ((i = x; i < 0; i++)); do :; done",
    "a[$({C})0]=1",
    "x='a[$({C})0]'; y=x; echo ${!y}",
    "PS4='$({C})'; set -x; true",
    // Assignments that change what a program does.
    "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0='{C}; false' git status",
    "env GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0='{C}; false' git status",
    "export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0='{C}; false'; git status",
    "GIT_CONFIG_PARAMETERS=\"'core.fsmonitor'='{C}; false'\" git status",
    "export GIT_CONFIG_PARAMETERS=\"'core.fsmonitor'='{C}; false'\"; git status",
    "git -c core.fsmonitor='{C}; false' status",
    "git -c alias.x='!{C}' x",
    "BASH_ENV=<(echo '{C}') bash -c true",
    "PATH=/nowhere:$PATH {C}",
    "export PATH=/nowhere:$PATH; {C}",
    "read PATH <<< /nowhere; {C}",
    // Command names only known when they run.
    "x={N}; $x {A}",
    "$(echo {N}) {A}",
    "\"$(echo {N})\" {A}",
    "${N:-{N}} {A}",
    "alias x='{C}'\nx",
    "shopt -s expand_aliases; alias x='{C}'\nx",
    // Quoting, escapes and paths (understood: the name is known).
    "\\{N} {A}",
    "'{N}' {A}",
    "\"{N}\" {A}",
    "$'{N}' {A}",
    "{N}'' {A}",
    "{P} {A}",
    "{N} \\\n{A}",
    "true # {C}",
    "echo '{C}'",
    // Builtins that run strings or bind names.
    "eval '{C}'",
    "trap '{C}' EXIT",
    "coproc {C}\nwait",
    "mapfile -C '{C}' -c 1 a < /etc/hostname",
    "readarray -C '{C}' -c 1 a < /etc/hostname",
    "hash -p {P} x; x {A}",
    "source <(echo '{C}')",
    ". <(echo '{C}')",
    "source /dev/stdin <<< '{C}'",
    "compgen -C '{C}' x",
    // Shells and interpreters.
    "bash -c '{C}'",
    "sh -c \"echo hi; {C}\"",
    "bash -c 'bash -c \"{C}\"'",
    "bash -lc '{C}'",
    "bash <(echo '{C}')",
    "bash /dev/stdin <<< '{C}'",
    "echo '{C}' | bash",
    "echo '{C}' | sh -s",
    "bash - <<< '{C}'",
    "perl -e 'system(\"{C}\")'",
    "awk 'BEGIN { system(\"{C}\") }'",
    "awk 'BEGIN { print | \"{C}\" }'",
    "echo x | sed 'e {C}'",
    "echo x | sed '1e {C}'",
    "echo x | sed 's/x/{C}/e'",
    // Commands run with arguments from their input.
    "echo {A} | xargs {N}",
    "echo {A} | xargs -I{} sh -c '{N} {}'",
    "find . -maxdepth 0 -exec {C} \\;",
    "find . -maxdepth 0 -exec sh -c '{C}' \\;",
    // Wrappers, known and not.
    "env {C}",
    "env -- {C}",
    "nohup {C} > /dev/null 2>&1",
    "nice {C}",
    "nice -n 5 {C}",
    "timeout 5 {C}",
    "stdbuf -o0 {C}",
    "command {C}",
    "command -p {C}",
    "exec {C}",
    "exec -a other {C}",
    "setsid {C}",
    "ionice -c 3 {C}",
    "chrt -o 0 {C}",
    "flock /tmp/agentry-corpus.lock {C}",
    "taskset -c 0 {C}",
    "strace -qq -o /dev/null {C}",
    "unshare -r {C}",
    "script -qc '{C}' /dev/null",
    "prlimit --nofile=100 {C}",
    "setarch x86_64 {C}",
    "linux64 {C}",
    "fakeroot {C}",
    "timeout 1 watch -n 0.1 -g -t {C}",
    "timeout 5 bash -c '{C}'",
    "nice env {C}",
    "env setsid {C}",
    // Characters bash and the grammar read differently.
    "echo x\r# ; {C}",
    "true\u{b}# ; {C}",
    "echo x\u{c}# ; {C}",
    "echo x \\\r\n{C}",
    // Subscripts evaluated where no `$(( ))` shows it.
    "x='b[$({C})]'; a=([x]=1); echo",
    "x='b[$({C})]'; declare a=([x]=1)",
    "x='b[$({C})]'; a+=([x]=1)",
    "x='b[$({C})]'; echo hi {a[x]}>/dev/null",
    "x='b[$({C})]'; echo hi {a[x]}<&0",
    "x='b[$({C})]'; printf -va[x] %s 1",
    // Here-document delimiters whose quotes bash removes.
    "cat <<$'EOF'\nhello\nEOF\n{C}\n$'EOF'",
    "cat <<E\"\"OF\nhello\nEOF\n{C}\nE\"\"OF",
    "cat <<E$'O'F\nhello\nEOF\n{C}\nE$'O'F",
    // ANSI-C escapes bash decodes past what rules read.
    "$'{N}\\400' {A}",
    "$'{N}\\x{100}' {A}",
    "$'\\x{}'{N} {A}",
    "$'\\UFFFFFFFF'{N} {A}",
    // Options in the spellings their programs accept.
    "trap -- '{C}' EXIT",
    "mapfile -tC '{C}' -c 1 a < /etc/hostname",
    "compgen -bC '{C}' zz",
    "env -iS'{C}'",
    "env --split-string='{C}'",
    "env --sp='{C}'",
    "echo 1 > q; sed -e'1e {C}' q",
    "p=-p; b={P}; hash \"$p\" \"$b\" zz; zz {A}",
    "shopt -s expand_aliases; q='zz={C}'; alias \"$q\"\nzz",
    "set -k; git status --short GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0='{C}; false'",
    "/usr/bin/time -o log -f x {C}",
    // Standard input however it is spelt; the current folder searched for programs.
    "bash //dev/stdin <<< '{C}'",
    "source /./dev/stdin <<< '{C}'",
    "bash /sys/../dev/stdin <<< '{C}'",
    "printf '#!/bin/sh\\n{C}\\n' > ls; chmod +x ls; unset PATH; ls",
    // A quoted `(…)` declared into an array is read again as its elements.
    "echo hi; declare -a a='($({C}))'",
    "echo hi; typeset -A r='([k]=$({C}))'",
    "a=(); declare a='([$({C})]=1)'",
    "x='($({C}))'; declare -a a=$x",
    "f() { local -a a=$1; }; f '($({C}))'",
    "builtin declare -a a='($({C}))'",
    // A here-document inside a here-document's body: bash ends the outer one first.
    "echo <<EOF\n$(echo <<'X'\nEOF\n{C}\nX\n)\nEOF",
];

/// The Bash tool's reading of `command`: the names of the programs it reported, and whether it
/// said it could not see through the line.
fn read(tool: &dyn DynTool, command: &str) -> (BTreeSet<String>, Option<String>) {
    let call = tool
        .prepare(json!({ "command": command }), Path::new("/"))
        .unwrap();
    let subjects = call.rule_subjects();
    let names = subjects
        .parts
        .iter()
        .chain(&subjects.variants)
        .filter_map(|subject| shlex::split(subject)?.into_iter().next())
        .map(|name| file_name(&name).to_owned())
        .collect();
    (names, subjects.hidden)
}

fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// The programs `strace -f -z -e trace=execve` saw started, after the first (bash itself).
fn started(trace: &str) -> Vec<String> {
    trace
        .lines()
        .filter_map(|line| {
            let (_, rest) = line.split_once("execve(\"")?;
            let (path, _) = rest.split_once('"')?;
            Some(file_name(path).to_owned())
        })
        .skip(1)
        .collect()
}

/// Every command line of the corpus, with the target applied.
fn corpus() -> Vec<String> {
    let mut lines = Vec::new();
    for target in &TARGETS {
        let whole = format!("{} {}", target.name, target.args);
        let apply = |construct: &str| {
            construct
                .replace("{C}", &whole)
                .replace("{N}", target.name)
                .replace("{A}", target.args)
                .replace("{P}", target.path)
        };
        lines.extend(CONSTRUCTS.iter().map(|construct| apply(construct)));
        // Names that are not literal words.
        for name in target.globs.iter().chain([&target.split]) {
            lines.push(format!("{name} {}", target.args));
            lines.push(format!("echo hi; {name} {}", target.args));
        }
        lines.push(target.brace.to_owned());
        lines.push(format!("echo $({})", target.brace));
        // Combinations: a wrapper around a construct, a construct around a wrapper.
        for wrapper in ["env", "nohup", "timeout 5", "setsid", "nice"] {
            for construct in ["bash -c '{C}'", "sh -c 'echo $({C})'", "bash <(echo '{C}')"] {
                lines.push(format!("{wrapper} {}", apply(construct)));
            }
        }
        for construct in ["echo $({C})", "f() { {C}; }; f", "bash -c '{C}'"] {
            for wrapper in ["env", "setsid", "flock /tmp/agentry-corpus.lock", "xargs"] {
                lines.push(construct.replace("{C}", &format!("{wrapper} {whole}")));
            }
        }
    }
    lines
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_program_a_line_starts_was_reported_or_the_reader_said_it_cannot_see() {
    assert!(
        std::process::Command::new("strace")
            .arg("-V")
            .output()
            .is_ok_and(|output| output.status.success()),
        "this test traces commands with strace (Debian's strace package; ./scripts/test installs it)"
    );
    let dir = tempfile::tempdir().unwrap();
    let shell = Shell::new(ShellConfig {
        sandbox: SandboxSettings {
            when_unavailable: WhenUnavailable::Refuse,
            ..SandboxSettings::default()
        },
        ..ShellConfig::default()
    });
    let bash = shell
        .tools()
        .into_iter()
        .find(|tool| tool.name() == "Bash")
        .unwrap();
    let harness = Arc::new(ToolHarness::new(&shell, dir.path()).unwrap());
    let lines = corpus();
    assert!(lines.len() >= 300, "{} command lines", lines.len());
    let limit = Arc::new(tokio::sync::Semaphore::new(4));
    let mut runs = tokio::task::JoinSet::new();
    for (index, line) in lines.iter().enumerate() {
        let case = dir.path().join(format!("case{index}"));
        std::fs::create_dir(&case).unwrap();
        std::fs::write(case.join("victim"), "").unwrap();
        std::fs::write(case.join("line"), line).unwrap();
        if line.contains("git ") {
            let init = std::process::Command::new("git")
                .args(["init", "-q"])
                .current_dir(&case)
                .status()
                .unwrap();
            assert!(init.success());
        }
        let harness = harness.clone();
        let limit = limit.clone();
        runs.spawn(async move {
            let _slot = limit.acquire().await.unwrap();
            // Paths in full: the calls share one shell, whose `cd` sticks.
            let case = case.display();
            let command = format!(
                "cd {case} && strace -f -qq -z -e trace=execve -o {case}/trace bash -c \"$(cat {case}/line)\" < /dev/null > {case}/output 2>&1"
            );
            let outcome = harness
                .call("Bash", json!({ "command": command, "timeout": 30_000 }))
                .await;
            (index, outcome.text())
        });
    }
    let mut failures = Vec::new();
    let mut removed = 0;
    while let Some(run) = runs.join_next().await {
        let (index, result) = run.unwrap();
        let line = &lines[index];
        let case = dir.path().join(format!("case{index}"));
        let trace = std::fs::read_to_string(case.join("trace"))
            .unwrap_or_else(|e| panic!("no trace of {line:?} ({e}): {result}"));
        assert!(
            trace.contains("execve("),
            "strace saw no bash start for {line:?}: {result}"
        );
        if !case.join("victim").exists() {
            removed += 1;
        }
        let (reported, hidden) = read(bash.as_ref(), line);
        if hidden.is_some() {
            continue;
        }
        let unreported: Vec<String> = started(&trace)
            .into_iter()
            .filter(|program| !reported.contains(program))
            .collect();
        if !unreported.is_empty() {
            failures.push(format!(
                "{line:?} started {unreported:?}, but the reader reported only {reported:?}"
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} command lines ran what the reader did not see:\n{}",
        failures.len(),
        lines.len(),
        failures.join("\n")
    );
    // The corpus is live: many of its lines really removed their victim.
    assert!(removed > 50, "only {removed} lines removed their victim");
}
