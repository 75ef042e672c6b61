//! The prompt in cache-friendly order: sessions in different folders send the model the same
//! system prompt and tools, and the same conversation, but for the environment block at its
//! head; on the wire (OpenAI and Anthropic), that block comes after the system prompt and the
//! tools, as the first text of the first user message.

use super::support::*;
use agentry::model::scripted::ScriptedResponse;
use agentry::model::{Message, ModelRequest};
use agentry_models::anthropic::messages_body;
use agentry_models::openai::chat_body;
use serde_json::Value;

/// The first model request of a session in a fresh folder of its own (with an `AGENTS.md`).
async fn first_request(instructions: &str) -> (ModelRequest, std::path::PathBuf) {
    let mut h = harness([ScriptedResponse::text("Hello!")])
        .instruction_files()
        .build();
    std::fs::write(h.dir.path().join("AGENTS.md"), instructions).unwrap();
    h.prompt("Hi").await.unwrap();
    let request = h.model.requests().remove(0);
    (request, h.dir.path().to_path_buf())
}

/// A wire body's messages split into the first part of the first one (the environment block's
/// text) and the rest.
fn split_first_text(mut messages: Value) -> (String, Value) {
    let first = &mut messages[0]["content"];
    let environment = first[0]["text"].as_str().unwrap().to_owned();
    first.as_array_mut().unwrap().remove(0);
    (environment, messages)
}

/// An agent built on the framework has no identity and reads no instruction files unless it is
/// given them: a folder's `AGENTS.md` and `CLAUDE.md` stay out of its requests.
#[tokio::test]
async fn an_agent_reads_no_instruction_files_and_has_no_base_prompt_unless_given() {
    let mut h = harness([ScriptedResponse::text("Hello!")]).build();
    std::fs::write(h.dir.path().join("AGENTS.md"), "Use tabs.").unwrap();
    std::fs::write(h.dir.path().join("CLAUDE.md"), "Use spaces.").unwrap();
    h.prompt("Hi").await.unwrap();
    let request = h.model.requests().remove(0);
    let sent = serde_json::to_string(&request.conversation()).unwrap() + &request.system;
    assert!(
        !sent.contains("Use tabs.") && !sent.contains("Use spaces."),
        "{sent}"
    );
    assert!(!sent.to_lowercase().contains("agentry"), "{sent}");
}

#[tokio::test]
async fn two_folders_send_the_same_request_up_to_the_environment_block() {
    let (a, folder_a) = first_request("Use tabs.").await;
    let (b, folder_b) = first_request("Use spaces.").await;
    assert_ne!(folder_a, folder_b);

    // What the model client is given: the same system prompt, tools and messages.
    assert_eq!(a.system, b.system);
    assert!(!a.system.contains(&folder_a.display().to_string()));
    assert!(!a.system.contains("Date:"));
    assert_eq!(a.tools, b.tools);
    assert_eq!(a.messages, b.messages);
    let environment = a.environment.clone().unwrap();
    assert!(environment.starts_with("# Environment\nWorking directory: "));
    assert!(environment.contains(&folder_a.display().to_string()));
    assert!(environment.contains("Use tabs."));
    assert!(b.environment.unwrap().contains("Use spaces."));

    // The conversation the model reads starts with the block, then the user's message.
    let conversation = a.conversation();
    let Message::User { content } = &conversation[0] else {
        panic!("the conversation starts with {:?}", conversation[0]);
    };
    assert_eq!(content.len(), 2, "{content:?}");
    assert_eq!(content[0], agentry::tool::ContentBlock::text(environment));

    // OpenAI Chat Completions: system message and tools alike; the first user message differs
    // only in its first part.
    let (chat_a, chat_b) = (
        chat_body("m", &a, None),
        chat_body("m", &first_request("Use tabs.").await.0, None),
    );
    assert_eq!(chat_a["messages"][0], chat_b["messages"][0]);
    assert_eq!(chat_a["tools"], chat_b["tools"]);
    let (env_a, rest_a) = split_first_text(Value::Array(
        chat_a["messages"].as_array().unwrap()[1..].to_vec(),
    ));
    let (env_b, rest_b) = split_first_text(Value::Array(
        chat_b["messages"].as_array().unwrap()[1..].to_vec(),
    ));
    assert_ne!(env_a, env_b, "each folder's block names it");
    assert_eq!(rest_a, rest_b);

    // Anthropic Messages: tools, then system, then messages; only the block differs.
    let other = first_request("Use spaces.").await.0;
    let (anthropic_a, anthropic_b) = (
        messages_body("m", &a, 1024),
        messages_body("m", &other, 1024),
    );
    assert_eq!(anthropic_a["system"], anthropic_b["system"]);
    assert_eq!(anthropic_a["tools"], anthropic_b["tools"]);
    let (env_a, rest_a) = split_first_text(anthropic_a["messages"].clone());
    let (env_b, rest_b) = split_first_text(anthropic_b["messages"].clone());
    assert!(env_a.contains("Use tabs.") && env_b.contains("Use spaces."));
    assert_eq!(rest_a, rest_b);
}

#[test]
fn a_conversation_that_does_not_start_with_the_user_gets_the_block_as_its_own_message() {
    let request = ModelRequest {
        system: String::new(),
        messages: vec![Message::Assistant {
            content: Vec::new(),
            origin: None,
        }],
        tools: Vec::new(),
        environment: Some("# Environment".to_owned()),
        max_output_tokens: None,
    };
    let conversation = request.conversation();
    assert_eq!(conversation.len(), 2);
    assert!(matches!(&conversation[0], Message::User { content } if content.len() == 1));
    let plain = ModelRequest {
        environment: None,
        ..request.clone()
    };
    assert_eq!(plain.conversation().as_ref(), plain.messages.as_slice());
}
