//! `agentry completions SHELL` and `agentry man`: made from the command line's own definitions,
//! so they always match the binary.

use crate::cli::Cli;
use crate::exit::{CliError, Exit};
use clap::CommandFactory;
use std::io::Write;
use std::path::Path;

/// Prints `shell`'s completion script for agentry.
pub fn completions(shell: clap_complete::Shell) -> Result<Exit, CliError> {
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "agentry", &mut script);
    print(&script)
}

/// Prints agentry's manual page, in roff; or, with `out_dir`, writes it there with a page for
/// each subcommand.
pub fn man(out_dir: Option<&Path>) -> Result<Exit, CliError> {
    if let Some(dir) = out_dir {
        std::fs::create_dir_all(dir).map_err(CliError::usage)?;
        clap_mangen::generate_to(Cli::command(), dir).map_err(CliError::usage)?;
        return Ok(Exit::EndTurn);
    }
    let mut page = Vec::new();
    clap_mangen::Man::new(Cli::command())
        .render(&mut page)
        .map_err(CliError::internal)?;
    print(&page)
}

/// Writes `bytes` to standard output (a closed pipe is not an error: `| head` is).
fn print(bytes: &[u8]) -> Result<Exit, CliError> {
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        Ok(()) => Ok(Exit::EndTurn),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(Exit::EndTurn),
        Err(e) => Err(CliError::internal(e)),
    }
}
