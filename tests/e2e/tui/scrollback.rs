//! The live area (the composer, a streaming answer, a menu) is redrawn in place wherever it
//! starts, including a fresh pane's top row: typing, pasting, resizing or opening a menu leaves
//! nothing of it behind in the terminal's scrollback (tmux's `scroll-on-clear` pushes a screen
//! erased from its top-left corner into the history, so a redraw must not erase that way).

use super::{chat_sized, idle};
use crate::sandbox;
use agentry_tests::mock_model::{MockModelServer, MockReply, MockTurn};
use agentry_tests::tmux::Tmux;
use serde_json::json;
use std::time::Duration;

/// The widths every check runs at.
const WIDTHS: [u16; 3] = [80, 100, 120];

/// A 400-character message of numbered words (`w001 w002 …`), so that each can be counted.
fn long_message() -> String {
    (1..=80).map(|n| format!("w{n:03} ")).collect()
}

/// How many composers the scrollback and the screen hold: a rule line followed by the
/// input's `›` line.
fn composers(everything: &str) -> usize {
    let lines: Vec<&str> = everything.lines().collect();
    lines
        .windows(2)
        .filter(|pair| pair[0].starts_with("────") && pair[1].starts_with('›'))
        .count()
}

/// Types `text` a few characters at a time, as a person does, each piece redrawn.
fn type_slowly(tmux: &Tmux, text: &str) {
    let characters: Vec<char> = text.chars().collect();
    for piece in characters.chunks(8) {
        tmux.type_text(&piece.iter().collect::<String>());
        std::thread::sleep(Duration::from_millis(15));
    }
}

/// Fails when the scrollback holds more than one composer or `marker` more than once.
fn assert_shown_once(tmux: &Tmux, marker: &str, width: u16, when: &str) {
    let everything = tmux.everything();
    assert_eq!(
        composers(&everything),
        1,
        "{when} at {width} columns, composers in the scrollback:\n{everything}"
    );
    assert_eq!(
        everything.matches(marker).count(),
        1,
        "{when} at {width} columns, {marker:?} in the scrollback:\n{everything}"
    );
}

#[test]
fn typing_and_sending_a_long_message_leaves_one_composer_and_one_message() {
    for width in WIDTHS {
        let sb = sandbox();
        let server =
            MockModelServer::start_blocking([MockTurn::Reply(MockReply::text("Read it all."))]);
        let tmux = chat_sized(&sb, &server, &[], (width, 30));
        let message = long_message();
        type_slowly(&tmux, &message);
        tmux.wait_for_text("w080");
        assert_shown_once(&tmux, "w001", width, "typed");
        tmux.keys(&["Enter"]);
        tmux.wait_for("the answer", |s| s.contains("Read it all.") && idle(s));
        assert_shown_once(&tmux, "w001", width, "sent");
        let sent = server.requests()[0].body["messages"].to_string();
        assert!(sent.contains(message.trim_end()), "{sent}");
    }
}

#[test]
fn a_multi_line_paste_leaves_one_composer() {
    for width in WIDTHS {
        let sb = sandbox();
        let server =
            MockModelServer::start_blocking([MockTurn::Reply(MockReply::text("Pasted, read."))]);
        let tmux = chat_sized(&sb, &server, &[], (width, 30));
        let pasted: Vec<String> = (1..=12).map(|n| format!("pasted line p{n:02}")).collect();
        tmux.paste(&pasted.join("\n"));
        tmux.wait_for_text("p12");
        assert_shown_once(&tmux, "p01", width, "pasted");
        tmux.keys(&["Enter"]);
        tmux.wait_for("the answer", |s| s.contains("Pasted, read.") && idle(s));
        assert_shown_once(&tmux, "p01", width, "sent");
    }
}

#[test]
fn resizing_while_an_answer_streams_leaves_one_composer() {
    for width in WIDTHS {
        let sb = sandbox();
        let words: Vec<String> = (1..=120).map(|n| format!("a{n:03}")).collect();
        // Streamed in small pieces, the last one held back while the terminal is resized.
        let reply = MockReply {
            piece: 8,
            pause_before_last: Some(Duration::from_millis(1500)),
            ..MockReply::text(&words.join(" "))
        };
        let server = MockModelServer::start_blocking([MockTurn::Reply(reply)]);
        let tmux = chat_sized(&sb, &server, &[], (width, 30));
        tmux.type_text("Stream it");
        tmux.keys(&["Enter"]);
        tmux.wait_for_text("a110");
        tmux.resize(width - 20, 30);
        tmux.resize(width, 24);
        tmux.resize(width, 30);
        tmux.wait_for("the whole answer", |s| s.contains("a120") && idle(s));
        assert_shown_once(&tmux, "Stream it", width, "streamed and resized");
    }
}

#[test]
fn a_permission_menu_that_opens_and_closes_leaves_one_composer() {
    for width in WIDTHS {
        let sb = sandbox();
        let server = MockModelServer::start_blocking([
            MockTurn::Reply(MockReply::tool_call(
                "call_1",
                "Bash",
                json!({"command": "echo menu-closed", "description": "Say it"}),
            )),
            MockTurn::Reply(MockReply::text("Done with the menu.")),
        ]);
        let tmux = chat_sized(&sb, &server, &[], (width, 30));
        tmux.type_text("Ask me");
        tmux.keys(&["Enter"]);
        tmux.wait_for_text("Always reject Bash");
        tmux.keys(&["Down"]);
        tmux.keys(&["Up"]);
        tmux.keys(&["y"]);
        tmux.wait_for("the answer", |s| {
            s.contains("Done with the menu.") && idle(s)
        });
        assert_shown_once(&tmux, "Ask me", width, "after the menu");
        let everything = tmux.everything();
        assert_eq!(
            everything.matches("Always reject Bash").count(),
            0,
            "the closed menu stays in the scrollback:\n{everything}"
        );
    }
}
