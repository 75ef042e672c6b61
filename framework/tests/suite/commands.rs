//! A slash command's prompt given to a session: its calls run before it is sent, never asking,
//! each output in its place; the tools it allows hold for its chat; a call that fails or may
//! not run stops it before the model is asked anything.

use super::support::*;
use agentry::AgentError;
use agentry::agent::ChatOptions;
use agentry::commands::{CommandCall, CommandPrompt, PromptPart};
use agentry::event::{AgentEvent, Role};
use agentry::model::Message;
use agentry::model::scripted::ScriptedResponse;
use agentry::permission::PermissionOptionKind::RejectOnce;
use agentry::tool::ContentBlock;
use serde_json::json;

fn text(text: &str) -> PromptPart {
    PromptPart::Content(ContentBlock::text(text))
}

fn call(tool: &str, path: &str, if_failed: Option<&str>) -> PromptPart {
    PromptPart::Call(CommandCall {
        tool: tool.to_owned(),
        input: json!({"path": path}),
        if_failed: if_failed.map(str::to_owned),
    })
}

/// The text of the user's messages in the model's first request.
fn first_prompt(h: &Harness) -> String {
    h.model.requests()[0]
        .messages
        .iter()
        .filter_map(|message| match message {
            Message::User { content } => Some(agentry::model::text_of(content)),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn a_commands_calls_fill_its_prompt_and_its_allowed_tools_hold_for_the_chat() {
    let mut h = harness(vec![
        response([super::support::call("c1", "Run", json!({"path": "build"}))]),
        ScriptedResponse::text("done"),
        response([super::support::call("c2", "Run", json!({"path": "again"}))]),
        ScriptedResponse::text("refused"),
    ])
    .answers(Answers::with([RejectOnce]))
    .build();
    let prompt = CommandPrompt {
        parts: vec![
            text("Looked: "),
            call("Look", "a", None),
            text("; changed: "),
            call("Change", "b", Some("(not changed)")),
        ],
        allowed_tools: vec!["Run".to_owned()],
        source: None,
    };
    let io = h.io();
    let summary = h
        .session
        .prompt_with(prompt, &ChatOptions::default(), &io)
        .await
        .unwrap();
    assert_eq!(summary.result, "done");
    // Look reads and runs unasked; Change would ask, and a command's call is never asked
    // about: its text takes its place. The model's Run is allowed by the command.
    assert!(
        first_prompt(&h).contains("Looked: Look done with a; changed: (not changed)"),
        "{}",
        first_prompt(&h)
    );
    assert_eq!(
        h.answers.asked_tools(),
        Vec::<String>::new(),
        "nobody was asked"
    );
    assert_eq!(
        h.log.entries(),
        ["start a", "end a", "start build", "end build"]
    );
    // The command's calls ran in a turn of the user's, before the message.
    let events = h.events();
    let user_turns = events
        .iter()
        .filter(|event| {
            matches!(
                event,
                AgentEvent::TurnStarted {
                    role: Role::User,
                    ..
                }
            )
        })
        .count();
    assert_eq!(user_turns, 2, "{events:?}");

    // The next chat is the session's own again: Run asks (and is refused).
    h.prompt("again").await.unwrap();
    assert_eq!(h.answers.asked_tools(), ["Run"]);
    assert!(!h.log.entries().contains(&"start again".to_owned()));
}

#[tokio::test]
async fn a_call_that_fails_or_a_rule_that_is_not_one_stops_the_command_unsent() {
    for (prompt, said) in [
        (
            CommandPrompt {
                parts: vec![text("Changed: "), call("Change", "b", None)],
                ..CommandPrompt::default()
            },
            "Change `Change b`, which it runs before its prompt is sent, did not succeed",
        ),
        (
            CommandPrompt {
                parts: vec![text("Ran: "), call("Nope", "b", None)],
                ..CommandPrompt::default()
            },
            "Nope `Nope`",
        ),
        (
            CommandPrompt {
                parts: vec![text("Run: "), call("Run", "b", None)],
                allowed_tools: vec!["Run(unclosed".to_owned()],
                source: None,
            },
            "it allows `Run(unclosed`, which is not a permission rule",
        ),
    ] {
        let mut h = harness(vec![ScriptedResponse::text("never")])
            .answers(Answers::with([RejectOnce]))
            .build();
        let io = h.io();
        let failure = h
            .session
            .prompt_with(prompt, &ChatOptions::default(), &io)
            .await
            .unwrap_err();
        assert!(
            matches!(&failure, AgentError::CommandNotRun(why) if why.contains(said)),
            "{failure}"
        );
        assert!(h.model.requests().is_empty(), "the model was never asked");
        assert!(
            h.log.entries().is_empty(),
            "nothing ran: {:?}",
            h.log.entries()
        );
        assert!(h.session.history().is_empty());
    }
}
