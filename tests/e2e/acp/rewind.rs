//! `/rewind` in an ACP session: the session's messages listed, then a rewind to one of them
//! that removes the file its chat wrote and cuts the conversation, without asking the model.

use super::*;

#[test]
fn rewind_lists_the_messages_then_undoes_a_chat_and_its_file() {
    let sb = sandbox();
    let server = write_then_answer(2);
    let steps = session_steps(
        &sb,
        vec![
            prompt("write the first"),
            prompt("/rewind"),
            prompt("/rewind 1"),
            prompt("write again"),
        ],
    );
    let out = acp_with_model(
        &sb,
        &server,
        &["--permission-mode", "bypass"],
        json!({"steps": steps}),
    );
    for step in 2..=5 {
        assert_eq!(out.result(step)["stopReason"], "end_turn", "step {step}");
    }
    let text = out.agent_text();
    assert!(text.contains("1. write the first"), "{text}");
    assert!(text.contains("restored greeting0.txt: removed"), "{text}");
    assert!(
        text.contains("the conversation is back to before “write the first”"),
        "{text}"
    );
    // The commands never reached the model; the chat after the rewind starts afresh.
    let requests = server.requests();
    assert_eq!(requests.len(), 4, "two chats of two requests each");
    assert_eq!(crate::user_texts(&requests[2].body), ["write again"]);
    // The second chat wrote greeting1.txt; the first one's file is gone.
    assert!(!sb.project().join("greeting0.txt").exists());
    assert!(sb.project().join("greeting1.txt").exists());
}
