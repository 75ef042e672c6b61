//! A real terminal for the interactive chat: tmux (a server of the test's own, on its own
//! socket), driven with `send-keys` and read with `capture-pane`.

use std::path::Path;
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

static NEXT: AtomicUsize = AtomicUsize::new(0);

/// A tmux server with one window running one command; killed when dropped.
pub struct Tmux {
    socket: String,
}

impl Tmux {
    /// Starts `program args` in `cwd` with exactly the environment `env`, in a `width` ×
    /// `height` terminal. When the program ends, the window says `[exited CODE]` and stays.
    pub fn start(
        program: &Path,
        args: &[&str],
        env: &[(String, String)],
        cwd: &Path,
        (width, height): (u16, u16),
    ) -> Self {
        let socket = format!(
            "agentry-test-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let mut line = vec!["env".to_owned(), "-i".to_owned()];
        line.extend(env.iter().map(|(k, v)| quote(&format!("{k}={v}"))));
        line.push(quote(&program.display().to_string()));
        line.extend(args.iter().map(|a| quote(a)));
        let script = format!("{}; echo \"[exited $?]\"; sleep 3600", line.join(" "));
        let tmux = Self { socket };
        let started = tmux.tmux(&[
            "new-session",
            "-d",
            "-x",
            &width.to_string(),
            "-y",
            &height.to_string(),
            "-c",
            &cwd.display().to_string(),
            &script,
        ]);
        assert!(started.status.success(), "tmux did not start: {started:?}");
        tmux
    }

    fn tmux(&self, args: &[&str]) -> Output {
        Command::new("tmux")
            .args(["-L", &self.socket, "-f", "/dev/null"])
            .args(args)
            .output()
            .expect("tmux runs")
    }

    /// Sends keys as tmux names them (`Enter`, `C-c`, `Down`, `y`).
    pub fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "0"];
        args.extend_from_slice(keys);
        assert!(self.tmux(&args).status.success());
    }

    /// Types text literally.
    pub fn type_text(&self, text: &str) {
        assert!(
            self.tmux(&["send-keys", "-t", "0", "-l", text])
                .status
                .success()
        );
    }

    /// Pastes `text` as a terminal does, in bracketed-paste markers when the program asked
    /// for them.
    pub fn paste(&self, text: &str) {
        assert!(self.tmux(&["set-buffer", "--", text]).status.success());
        assert!(
            self.tmux(&["paste-buffer", "-p", "-t", "0"])
                .status
                .success()
        );
    }

    /// Resizes the terminal.
    pub fn resize(&self, width: u16, height: u16) {
        let resized = self.tmux(&[
            "resize-window",
            "-t",
            "0",
            "-x",
            &width.to_string(),
            "-y",
            &height.to_string(),
        ]);
        assert!(resized.status.success(), "{resized:?}");
    }

    /// Lets programs in the pane set tmux's paste buffers with OSC 52, as a terminal that
    /// gives them the clipboard does.
    pub fn accept_clipboard(&self) {
        let set = self.tmux(&["set-option", "-g", "set-clipboard", "on"]);
        assert!(set.status.success(), "{set:?}");
    }

    /// tmux's paste buffers, one line each (what OSC 52 would have written).
    pub fn buffers(&self) -> String {
        String::from_utf8_lossy(&self.tmux(&["list-buffers"]).stdout).into_owned()
    }

    /// The visible screen, each line's trailing spaces and the trailing empty lines removed.
    pub fn screen(&self) -> String {
        self.capture(&["capture-pane", "-p", "-t", "0"])
    }

    /// The screen with its colours and styles as escape sequences.
    pub fn styled_screen(&self) -> String {
        self.capture(&["capture-pane", "-p", "-e", "-t", "0"])
    }

    /// The scrollback and the screen.
    pub fn everything(&self) -> String {
        self.capture(&["capture-pane", "-p", "-S", "-", "-t", "0"])
    }

    fn capture(&self, args: &[&str]) -> String {
        let captured = self.tmux(args);
        let text = String::from_utf8_lossy(&captured.stdout);
        let lines: Vec<&str> = text.lines().map(str::trim_end).collect();
        lines.join("\n").trim_end().to_owned()
    }

    /// Waits until the screen satisfies `ready` (within 20 s) and returns it; fails with the
    /// screen otherwise.
    pub fn wait_for(&self, what: &str, ready: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let screen = self.screen();
            if ready(&screen) {
                return screen;
            }
            assert!(
                Instant::now() < deadline,
                "waited for {what}; the screen is:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Waits for `text` on the screen.
    pub fn wait_for_text(&self, text: &str) -> String {
        self.wait_for(text, |screen| screen.contains(text))
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.tmux(&["kill-server"]);
    }
}

/// `text` quoted for `sh`.
fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}
