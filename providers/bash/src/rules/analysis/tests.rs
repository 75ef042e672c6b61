use super::*;

fn parts(command: &str) -> Vec<String> {
    analyse(command)
        .parts
        .iter()
        .map(|words| words.join(" "))
        .collect()
}

fn understood(command: &str) -> bool {
    analyse(command).hidden.is_none()
}

#[test]
fn every_simple_command_is_found() {
    assert_eq!(
        parts("echo hi && rm -f victim"),
        ["echo hi", "rm -f victim"]
    );
    assert_eq!(
        parts("a | b || c; d & e\nf"),
        ["a", "b", "c", "d", "e", "f"]
    );
    assert_eq!(
        parts("echo $(rm x) `ls`"),
        ["echo $(rm x) `ls`", "rm x", "ls"]
    );
    assert_eq!(parts("(cd a && make) ; { b; }"), ["cd a", "make", "b"]);
    assert_eq!(parts("diff <(sort a) b"), ["diff <(sort a) b", "sort a"]);
    assert_eq!(parts("for f in *; do rm \"$f\"; done"), ["rm \"$f\""]);
    assert_eq!(parts("f() { rm x; }; f"), ["rm x", "f"]);
    assert_eq!(parts("FOO=1 BAR=2 make all"), ["make all"]);
    assert_eq!(
        parts("bash -c 'git status && rm x'"),
        ["git status", "rm x"]
    );
    assert_eq!(parts("echo \"$(rm x)\""), ["echo \"$(rm x)\"", "rm x"]);
    assert_eq!(parts("cat <<EOF\n$(rm x)\nEOF"), ["cat", "rm x"]);
    assert_eq!(parts("echo ${x:-$(rm x)}"), ["echo ${x:-$(rm x)}", "rm x"]);
}

#[test]
fn quoting_and_escapes_give_the_words_bash_runs() {
    assert_eq!(parts(r"r\m -f x"), ["rm -f x"]);
    assert_eq!(parts(r#""rm" -f 'a b'"#), ["rm -f a b"]);
    assert_eq!(parts("'r'm x"), ["rm x"]);
    assert_eq!(parts(r"$'\x72m' x"), ["rm x"]);
}

#[test]
fn wrappers_paths_and_redirections() {
    let sudo = analyse("sudo rm x");
    assert_eq!(sudo.parts, [vec!["sudo", "rm", "x"], vec!["rm", "x"]]);
    let nohup = analyse("nohup /bin/rm x > log 2>&1");
    assert_eq!(nohup.parts, [vec!["/bin/rm", "x"]]);
    assert_eq!(
        nohup.writes,
        ["nohup.out", "log"],
        "nohup writes nohup.out when its output is a terminal's"
    );
    assert!(
        nohup
            .variants
            .contains(&vec!["rm".to_owned(), "x".to_owned()])
    );
    assert!(nohup.variants.contains(&vec![
        "nohup".to_owned(),
        "/bin/rm".to_owned(),
        "x".to_owned()
    ]));
    assert_eq!(analyse("ls > /dev/null 2>&1").writes, Vec::<String>::new());
    let find = analyse("find . -exec rm {} \\;");
    assert_eq!(
        find.parts,
        [
            vec!["find", ".", "-exec", "rm", "{}", ";"],
            vec!["rm", "{}"]
        ]
    );
    assert!(find.hidden.is_some(), "find -exec runs what it finds");
}

#[test]
fn every_way_of_writing_a_file_is_a_write() {
    for (command, file) in [
        ("echo pw > out.txt", "out.txt"),
        ("echo pw >> out.txt", "out.txt"),
        ("echo pw >&out.txt", "out.txt"),
        ("ls >& f", "f"),
        ("ls &> f", "f"),
        ("ls &>> f", "f"),
        ("ls >| f", "f"),
        ("ls 2> f", "f"),
        ("exec {fd}>f", "f"),
        ("cat <<< secret > f", "f"),
        ("echo > 2", "2"),
        ("echo > ~/.bashrc", "~/.bashrc"),
        ("(echo x > f)", "f"),
        ("echo $(echo x > f)", "f"),
        ("bash -c 'echo x > f'", "f"),
    ] {
        assert_eq!(analyse(command).writes, [file], "{command}");
    }
    for not_a_write in ["ls >&2", "ls 2>&1", "ls >&-", "cat < f", "ls > /dev/null"] {
        assert_eq!(
            analyse(not_a_write).writes,
            Vec::<String>::new(),
            "{not_a_write}"
        );
    }
    for unknown in [
        "echo x > $f",
        "echo x > *.txt",
        "echo x > ~other/f",
        "echo x >& $f",
        "cat <> f",
    ] {
        assert!(!understood(unknown), "{unknown}");
    }
    assert!(!understood("cd sub && echo x > f"), "relative after cd");
    assert!(understood("cd sub && echo x > /tmp/f"));
}

#[test]
fn what_no_rule_can_see_is_not_understood() {
    for hidden in [
        "eval 'rm x'",
        "$CMD x",
        "$(echo rm) x",
        "bash -c \"$S\"",
        "echo rm x | bash",
        "PATH=/tmp ls",
        "export PATH=/tmp; ls",
        "echo (",
        "env -S 'rm x'",
        // Assignments that change what the program does.
        "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0='rm -f victim; false' git status",
        "env GIT_CONFIG_COUNT=1 git status",
        "export GIT_CONFIG_PARAMETERS=x; git status",
        "GIT_CONFIG_PARAMETERS=x git status",
        "FOO=1 ls",
        "HOME=/tmp/x; git status",
        "declare -x A=1",
        "read PATH <<< /tmp; ls",
        "printf -v IFS x",
        // Substitutions the grammar reads differently, or runs on evaluation.
        "git status <<EOF\n`rm -f victim`\nEOF",
        "cat <<-EOF\n\t$(rm victim)\n\tEOF",
        "echo ${x:-`rm -f victim`}",
        "echo ${x:=$(rm -f victim)}",
        "echo `echo \\`rm -f victim\\``",
        "x='$(rm -f victim)'; git status ${x@P}",
        "x='a[$(rm -f victim)0]'; git status $((x))",
        "echo $[x]",
        "(( x ))",
        "for ((i=0; i<3; i++)); do echo; done",
        "[[ $x -eq 1 ]]",
        "[[ -v a[x] ]]",
        "a[x]=1",
        "declare -i n=x",
        "unset 'a[$(rm x)]'",
        "echo ${!x}",
        "echo ${a[i]}",
        // Command names that are not what they look like.
        "r\\\nm victim",
        "/bin/r? victim",
        "/usr/bin/r[m] victim",
        "{rm,victim}",
        "$\"rm\" victim",
        // Builtins that run strings or bind names.
        "coproc rm victim",
        "mapfile -C 'rm victim' -c 1 a < f",
        "hash -p /bin/rm x; x victim",
        "trap 'rm victim' EXIT",
        // Shells and interpreters reading a script no rule sees.
        "bash <(echo 'rm victim')",
        "bash /dev/stdin <<< 'rm victim'",
        ". <(echo 'rm victim')",
        "source /dev/stdin",
        "python3 -c 'import os'",
        "perl -e 'unlink q(victim)'",
        "sed 'e rm victim' f",
        "awk 'BEGIN { system(\"rm victim\") }'",
        // Commands run with arguments only running shows.
        "ls | xargs rm",
        "ls | xargs sh -c 'rm \"$0\"'",
        "find . -exec rm {} +",
        // Wrappers whose arguments rules do not follow.
        "flock /tmp/l rm victim",
        "taskset -c 0 rm victim",
        "script -qc 'rm victim' /dev/null",
        "watch -n1 rm victim",
        "unshare -r rm victim",
    ] {
        assert!(!understood(hidden), "{hidden:?} should not be understood");
    }
    for seen in [
        "echo $HOME",
        "ls -la",
        "git commit -m \"$(date)\"",
        "LANG=C sort f",
        "for f in *.txt; do wc -l \"$f\"; done",
        "n=3; echo $n ${#n} ${n:-0} $((1 + 2))",
        "[[ -f x && $a == b ]]",
        "[[ ${#a} -gt 0 ]]",
        "cat <<'EOF'\n$(rm x) `rm x`\nEOF",
        "cat <<EOF\n$HOME ${x} $(date)\nEOF",
        "sed -n 's/a/b/p' f",
        "awk '{ print $1 }' f",
        "python3 -m pytest",
        "bash script.sh",
        "read -r line < f",
        "ls \\\n  -la",
    ] {
        assert!(
            understood(seen),
            "{seen:?} should be understood: {:?}",
            analyse(seen).hidden
        );
    }
}

#[test]
fn words_of_programs_that_may_run_them_are_possible_commands() {
    let possible = |command: &str| -> Vec<String> {
        analyse(command)
            .possible
            .iter()
            .map(|words| words.join(" "))
            .collect()
    };
    assert!(possible("cpulimit -l 50 -- rm victim").contains(&"rm victim".to_owned()));
    assert!(possible("somewrapper /bin/rm victim").contains(&"rm victim".to_owned()));
    assert!(possible("tool --run=rm victim").contains(&"rm victim".to_owned()));
    assert!(possible("ssh host 'cd /; rm victim'").contains(&"rm victim".to_owned()));
    assert!(possible("echo rm victim").is_empty(), "echo runs nothing");
    assert!(possible("ls rm").is_empty());
    // Any word of an argument may start what the program runs (`vim -c '!rm x'`,
    // `sqlite3 '.shell rm x'`), so a message naming a command is asked about beside a deny
    // rule on it: a question too many, never a command unseen.
    assert!(possible("git commit -m 'drop the rm call'").contains(&"rm call".to_owned()));
    assert!(possible("vim -es -c '!r\"\"m victim'").contains(&"rm victim".to_owned()));
    assert!(possible("sqlite3 :memory: '.shell rm victim'").contains(&"rm victim".to_owned()));
    assert!(
        possible("make --eval='$(shell rm victim)' -f x").contains(&"rm victim -f x".to_owned())
    );
}

#[test]
fn a_line_the_grammar_would_take_long_to_read_is_not_read() {
    let line = format!("cat <<EOF\n{}\nEOF\n", "$(echo x) ".repeat(12_000));
    let analysis = analyse(&line);
    assert_eq!(
        analysis.hidden.as_deref(),
        Some("the command line takes too long to read")
    );
    let many = "cat <<EOF\nx\nEOF\n".repeat(65);
    assert_eq!(
        analyse(&many).hidden.as_deref(),
        Some("more here-documents than rules read")
    );
}
