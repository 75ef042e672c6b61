//! The terminal's modes while the chat runs: raw input (keys one by one, Ctrl-C as a key),
//! bracketed paste, and the keyboard protocol that tells Shift-Enter from Enter where the
//! terminal has it. Restored when dropped, and on a panic.

use crossterm::event::{
    DisableBracketedPaste, EnableBracketedPaste, KeyboardEnhancementFlags,
    PopKeyboardEnhancementFlags, PushKeyboardEnhancementFlags,
};
use crossterm::execute;
use crossterm::terminal::{disable_raw_mode, enable_raw_mode, supports_keyboard_enhancement};
use std::io::stdout;

/// The terminal in raw mode until dropped.
pub struct RawMode {
    enhanced: bool,
}

impl RawMode {
    /// Enters raw mode and turns bracketed paste (and key disambiguation) on.
    pub fn enter() -> std::io::Result<Self> {
        enable_raw_mode()?;
        let enhanced = supports_keyboard_enhancement().unwrap_or(false);
        execute!(stdout(), EnableBracketedPaste)?;
        if enhanced {
            execute!(
                stdout(),
                PushKeyboardEnhancementFlags(KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES)
            )?;
        }
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            restore(enhanced);
            previous(info);
        }));
        Ok(Self { enhanced })
    }
}

impl Drop for RawMode {
    fn drop(&mut self) {
        restore(self.enhanced);
    }
}

fn restore(enhanced: bool) {
    if enhanced {
        let _ = execute!(stdout(), PopKeyboardEnhancementFlags);
    }
    let _ = execute!(stdout(), DisableBracketedPaste, crossterm::cursor::Show);
    let _ = disable_raw_mode();
}
