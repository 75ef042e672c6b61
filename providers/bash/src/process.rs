//! A command in a pseudo-terminal, in its own session (so its pid is its process group id),
//! sandboxed when given a confinement: its output arrives in bounded chunks read on a plain
//! thread, its exit status on another.

use crate::sandbox::{Confinement, Enforcement, run_confined};
use portable_pty::{CommandBuilder, PtySize, native_pty_system};
use std::io::Read;
use std::path::Path;
use tokio::sync::{mpsc, oneshot};

/// The environment every command gets on top of agentry's own.
const ENVIRONMENT: [(&str, &str); 4] = [
    ("TERM", "dumb"),
    ("NO_COLOR", "1"),
    ("PAGER", "cat"),
    ("GIT_PAGER", "cat"),
];

/// A running command.
pub(crate) struct Running {
    /// The process group (the child is its session leader).
    pub group: i32,
    /// Output as it is read (the channel is bounded, so a fast writer waits for the reader).
    pub output: mpsc::Receiver<Vec<u8>>,
    /// The exit code once the child has exited and been reaped (`None`: killed by a signal).
    pub exit: oneshot::Receiver<Option<i32>>,
    /// Why the command runs unsandboxed although it was to be confined (a kernel without
    /// Landlock whose settings say to warn).
    pub unsandboxed: Option<String>,
    /// Kept open while the command runs: dropping the master hangs up the terminal.
    _master: Box<dyn portable_pty::MasterPty + Send>,
}

/// The most bytes one argument of a program may hold (Linux's `MAX_ARG_STRLEN`, 32 pages):
/// the script is one.
const MAX_ARGUMENT_BYTES: usize = 32 * 4096;

/// Starts `bash -c SCRIPT` in `cwd`, within `confinement` if there is one.
pub(crate) fn spawn(
    script: &str,
    cwd: &Path,
    confinement: Option<&Confinement>,
) -> Result<Running, String> {
    if script.len() >= MAX_ARGUMENT_BYTES {
        return Err(format!(
            "the command is {} bytes, more than the {MAX_ARGUMENT_BYTES} one program argument may \
             hold: write the script to a file with Write and run that file with bash",
            script.len()
        ));
    }
    let pty = native_pty_system()
        .openpty(PtySize {
            rows: 50,
            cols: 200,
            pixel_width: 0,
            pixel_height: 0,
        })
        .map_err(|e| format!("cannot open a terminal: {e}"))?;
    let mut command = CommandBuilder::new("bash");
    command.args(["-c", script]);
    command.cwd(cwd);
    for (name, value) in ENVIRONMENT {
        command.env(name, value);
    }
    let slave = pty.slave;
    let (started, unsandboxed) = match confinement {
        None => {
            let started = slave.spawn_command(command);
            drop(slave);
            (started, None)
        }
        Some(confinement) => {
            let (started, enforcement) =
                run_confined(confinement, move || slave.spawn_command(command))
                    .map_err(|e| e.to_string())?;
            let unsandboxed = match enforcement {
                Enforcement::Enforced => None,
                Enforcement::Unavailable(reason) => Some(reason),
            };
            (started, unsandboxed)
        }
    };
    // The slave side is closed here (the confined thread's closure took it): only the child
    // holds it now, so the reader sees EOF when the child's side closes.
    let mut child = started.map_err(|e| format!("cannot start bash: {e}"))?;
    let group = child
        .process_id()
        .and_then(|pid| i32::try_from(pid).ok())
        .ok_or("the command has no process id")?;
    let mut reader = pty
        .master
        .try_clone_reader()
        .map_err(|e| format!("cannot read the terminal: {e}"))?;
    let (chunks, output) = mpsc::channel(16);
    std::thread::spawn(move || {
        let mut buffer = vec![0u8; 64 * 1024];
        loop {
            match reader.read(&mut buffer) {
                // EOF, or EIO once every slave handle is closed.
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if chunks.blocking_send(buffer[..n].to_vec()).is_err() {
                        break;
                    }
                }
            }
        }
    });
    let (exited, exit) = oneshot::channel();
    std::thread::spawn(move || {
        let code = child
            .wait()
            .ok()
            .and_then(|status| status.signal().is_none().then(|| status.exit_code() as i32));
        let _ = exited.send(code);
    });
    Ok(Running {
        group,
        output,
        exit,
        unsandboxed,
        _master: pty.master,
    })
}
