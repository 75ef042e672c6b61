//! The command line itself: help and the subcommands still to come.

use crate::sandbox;

#[test]
fn help_lists_every_subcommand_and_the_exit_codes() {
    let out = sandbox().run(&["--help"]);
    assert_eq!(out.code, Some(0));
    for sub in ["run", "sessions", "acp", "serve", "mcp", "providers"] {
        assert!(
            out.stdout.lines().any(|l| l.trim_start().starts_with(sub)),
            "{sub} missing from:\n{}",
            out.stdout
        );
    }
    assert!(out.stdout.contains("130  the turn was cancelled"));
}
