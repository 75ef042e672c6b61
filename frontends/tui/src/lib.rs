//! # agentry-tui
//!
//! agentry's interactive terminal, drawn inline in the terminal's own scrollback. This first
//! part renders what the conversation shows: Markdown ([`markdown`]) with highlighted code
//! ([`highlight`]), wrapped to the terminal's width ([`wrap`]), and edits as coloured line diffs
//! ([`diff`]).

pub mod diff;
pub mod highlight;
pub mod markdown;
pub mod wrap;
