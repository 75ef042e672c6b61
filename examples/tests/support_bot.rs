//! The support bot of `examples/support_bot.rs`, run as its users run it against a mock of the
//! OpenAI API on 127.0.0.1, from a developer's checkout: a folder with `CLAUDE.md` and
//! `AGENTS.md`, a home folder with `~/.claude/CLAUDE.md`. What it sends the model is its own:
//! its identity and tools, none of the stock agent's and none of those files.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use agentry_tests::mock_model::{MockModelServer, MockReply, MockTurn};
use serde_json::json;
use std::path::PathBuf;
use std::process::Command;

/// The example's binary, which `cargo test` builds beside the tests.
fn support_bot() -> PathBuf {
    let deps = std::env::current_exe().unwrap();
    let profile = deps.parent().unwrap().parent().unwrap();
    profile.join("examples").join("support_bot")
}

#[test]
fn the_support_bot_sends_its_own_identity_and_tools_and_nothing_of_the_users_files() {
    let server = MockModelServer::start_blocking([
        MockTurn::Reply(MockReply::tool_call(
            "call_1",
            "LookupOrder",
            json!({"order_id": 1043}),
        )),
        MockTurn::Reply(MockReply::tool_call(
            "call_2",
            "RequestRefund",
            json!({"order_id": 1043, "reason": "the cups arrived broken"}),
        )),
        MockTurn::Reply(MockReply::text(
            "I'm sorry the cups arrived broken: I've requested a refund for order 1043.",
        )),
    ]);
    let checkout = tempfile::tempdir().unwrap();
    std::fs::create_dir(checkout.path().join(".git")).unwrap();
    let secrets = [
        ("CLAUDE.md", "PROJECT-CLAUDE-NOTE use the staging database"),
        ("AGENTS.md", "PROJECT-AGENTS-NOTE run make deploy"),
        ("CLAUDE.local.md", "PROJECT-LOCAL-NOTE my token is in .env"),
    ];
    for (name, text) in secrets {
        std::fs::write(checkout.path().join(name), text).unwrap();
    }
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir(home.path().join(".claude")).unwrap();
    let users_note = "USERS-PRIVATE-NOTE I work for a competitor";
    std::fs::write(home.path().join(".claude/CLAUDE.md"), users_note).unwrap();
    let data = tempfile::tempdir().unwrap();

    let output = Command::new(support_bot())
        .args([
            "openai/gpt-4.1-mini",
            "My espresso cups (order 1043) arrived broken, can I get a refund?",
        ])
        .current_dir(checkout.path())
        .env("HOME", home.path())
        .env("SUPPORT_BOT_DATA", data.path())
        .env("OPENAI_API_KEY", "sk-support-bot-test")
        .env("OPENAI_BASE_URL", format!("{}/v1", server.url()))
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let answer = String::from_utf8_lossy(&output.stdout);
    assert!(
        answer.contains("requested a refund for order 1043"),
        "{answer}"
    );

    let requests = server.requests();
    assert_eq!(requests.len(), 3, "a lookup, a refund, the answer");
    for request in &requests {
        let body = request.body.to_string();
        let headers = format!("{:?}", request.headers);
        for sent in [&body, &headers] {
            assert!(!sent.to_lowercase().contains("agentry"), "{sent}");
            for (_, text) in secrets {
                assert!(!sent.contains(text), "{sent}");
            }
            assert!(!sent.contains(users_note), "{sent}");
        }
        assert!(
            body.contains("support assistant of Northwind Coffee"),
            "{body}"
        );
        assert!(body.contains("LookupOrder") && body.contains("RequestRefund"));
    }
    let last = requests.last().unwrap().body.to_string();
    assert!(last.contains("Refund requested for order 1043"), "{last}");
    assert!(
        data.path().join("sessions.db").is_file(),
        "the session is kept in the bot's own folder"
    );
}
