//! Rewinding from the terminal: Esc twice on an empty prompt, the message picked, files and
//! conversation restored, the message back in the prompt.

use super::{chat, idle};
use crate::sandbox;
use agentry_tests::mock_model::{MockModelServer, MockReply, MockTurn};
use serde_json::json;

#[test]
fn esc_twice_rewinds_a_chat_and_puts_its_message_back_in_the_prompt() {
    let sb = sandbox();
    sb.write("project/notes.txt", "first\n");
    let server = MockModelServer::start_blocking([
        MockTurn::Reply(MockReply::tool_call(
            "b",
            "Bash",
            json!({"command": "echo second > notes.txt && echo made > made.txt", "description": "Change the notes"}),
        )),
        MockTurn::Reply(MockReply::text("Changed.")),
    ]);
    let tmux = chat(&sb, &server, &["--permission-mode", "bypass"], &[]);
    tmux.type_text("change the notes");
    tmux.keys(&["Enter"]);
    tmux.wait_for("the answer", |s| s.contains("Changed.") && idle(s));
    let notes = sb.project().join("notes.txt");
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "second\n");

    // Two presses, as a person makes them (in one write, a terminal reads them as one).
    tmux.keys(&["Escape"]);
    std::thread::sleep(std::time::Duration::from_millis(150));
    tmux.keys(&["Escape"]);
    let picker = tmux.wait_for_text("Rewind to before which message?");
    assert!(picker.contains("change the notes"), "{picker}");
    tmux.keys(&["Enter"]);
    tmux.wait_for_text("Files and conversation");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("the rewind", |s| s.contains("Rewound") && idle(s));
    assert!(screen.contains("restored notes.txt: rewritten"), "{screen}");
    assert!(screen.contains("restored made.txt: removed"), "{screen}");
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "first\n");
    assert!(!sb.project().join("made.txt").exists());
    // The message is back in the prompt, to edit and send again.
    assert!(
        screen
            .lines()
            .any(|l| l.starts_with('›') && l.contains("change the notes")),
        "{screen}"
    );

    // Nothing is left to rewind.
    tmux.keys(&["C-c"]);
    tmux.type_text("/rewind");
    tmux.keys(&["Enter"]);
    tmux.wait_for_text("Nothing to rewind yet.");
}
