//! What reaches the model besides tool results — notices, images or notes in their place — and
//! the session's temporary folder and tool aliases, through whole chats.

use super::support::*;
use agentry::model::Message;
use agentry::model::scripted::ScriptedResponse;
use agentry::permission::PermissionOptionKind::{AllowOnce, RejectOnce};
use agentry::permission::PermissionPolicy;
use agentry::tool::ContentBlock;
use agentry::tool::{ToolError, ToolKind, erase, tool_fn};
use serde_json::json;

/// The text blocks of a user message.
fn user_texts(message: &Message) -> Vec<String> {
    match message {
        Message::User { content } => content
            .iter()
            .filter_map(|block| match block {
                ContentBlock::Text { text } => Some(text.clone()),
                _ => None,
            })
            .collect(),
        other => panic!("not a user message: {other:?}"),
    }
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Nothing {}

#[tokio::test]
async fn notices_reach_the_next_request_once_and_withdrawn_ones_never() {
    let post = tool_fn(
        "Post",
        "Leaves notices.",
        ToolKind::Other,
        |_: Nothing, ctx| async move {
            let notices = ctx.state.notices();
            notices.post("job", "job 1 finished");
            notices.post("stale", "never seen");
            notices.withdraw("stale");
            Ok::<_, ToolError>("posted".to_owned())
        },
    );
    let mut h = harness([
        response([call("p1", "Post", json!({}))]),
        ScriptedResponse::text("noted"),
        ScriptedResponse::text("again"),
    ])
    .tool(erase(post))
    .answers(Answers::with([AllowOnce]))
    .build();
    h.session
        .state()
        .notices()
        .post("app", "the user changed config.toml");
    h.prompt("go").await.unwrap();
    let requests = h.model.requests();
    // Waiting before the chat: added to the user's message.
    assert_eq!(
        user_texts(&requests[0].messages[0]),
        [
            "go",
            "<system-reminder>\nthe user changed config.toml\n</system-reminder>"
        ]
    );
    // Posted by a tool: a reminder after its result.
    let second = &requests[1].messages;
    assert!(matches!(
        second[second.len() - 2],
        Message::ToolResults { .. }
    ));
    assert_eq!(
        user_texts(&second[second.len() - 1]),
        ["<system-reminder>\njob 1 finished\n</system-reminder>"]
    );
    // Delivered once: the next chat's request carries no new reminder, and the history keeps
    // what the model saw.
    h.prompt("more").await.unwrap();
    let third = &h.model.requests()[2].messages;
    assert_eq!(user_texts(third.last().unwrap()), ["more"]);
    assert!(
        third
            .iter()
            .filter(|m| matches!(m, Message::User { .. }))
            .flat_map(user_texts)
            .all(|text| !text.contains("never seen"))
    );
}

#[tokio::test]
async fn reading_the_sessions_temp_folder_needs_no_permission_outside_the_workspace_does() {
    let outside = tempfile::tempdir().unwrap();
    let outside_file = outside.path().join("b.txt");
    let mut h = harness(Vec::new())
        .policy(PermissionPolicy::default())
        .answers(Answers::with([RejectOnce]))
        .build();
    let temp = h.session.state().temp_dir().unwrap();
    h.model.push_responses([
        response([
            call("in_temp", "Look", json!({"path": temp.join("a.txt")})),
            call("outside", "Look", json!({"path": outside_file})),
        ]),
        ScriptedResponse::text("read"),
    ]);
    h.prompt("read both").await.unwrap();
    // Only the call outside both the workspace and the temp folder was asked about (and, with
    // nobody answering yes, refused).
    assert_eq!(h.answers.asked_tools(), ["Look"]);
    let asked = h.answers.asked.lock().unwrap()[0]
        .tool_call
        .tool_call_id
        .clone();
    assert_eq!(asked.as_str(), "outside");
    assert!(
        h.log
            .entries()
            .contains(&format!("start {}", temp.join("a.txt").display()))
    );
}

struct Renamed;

impl agentry::tool::Tool for Renamed {
    type Input = Nothing;
    type Output = String;

    fn name(&self) -> &str {
        "TaskOutput"
    }
    fn description(&self) -> String {
        "Reads a task's output.".to_owned()
    }
    fn kind(&self) -> ToolKind {
        ToolKind::Read
    }
    fn aliases(&self) -> Vec<String> {
        vec!["BashOutput".to_owned()]
    }
    async fn call(&self, _: Nothing, _: agentry::tool::ToolContext) -> Result<String, ToolError> {
        Ok("output".to_owned())
    }
}

#[tokio::test]
async fn a_tool_answers_to_its_aliases_which_are_never_offered() {
    let mut h = harness([
        response([call("old", "BashOutput", json!({}))]),
        ScriptedResponse::text("done"),
    ])
    .tool(erase(Renamed))
    .build();
    h.prompt("read").await.unwrap();
    let offered: Vec<String> = h.model.requests()[0]
        .tools
        .iter()
        .map(|tool| tool.name.clone())
        .collect();
    assert!(offered.contains(&"TaskOutput".to_owned()));
    assert!(!offered.contains(&"BashOutput".to_owned()));
    assert_eq!(
        results_sent(&h.model, 1),
        [("old".to_owned(), false, "output".to_owned())]
    );
    let events = h.events();
    assert_eq!(
        final_update(&events, "old").status,
        Some(agentry::event::ToolCallStatus::Completed)
    );
}

/// A tool whose result holds an image.
struct Shot;

impl agentry::tool::Tool for Shot {
    type Input = Nothing;
    type Output = agentry::tool::ToolOutput;

    fn name(&self) -> &str {
        "Shot"
    }
    fn description(&self) -> String {
        "Takes a picture.".to_owned()
    }
    fn kind(&self) -> ToolKind {
        ToolKind::Read
    }
    async fn call(
        &self,
        _: Nothing,
        _: agentry::tool::ToolContext,
    ) -> Result<agentry::tool::ToolOutput, ToolError> {
        Ok(agentry::tool::ToolOutput {
            content: vec![
                agentry::tool::ToolContent::text("a picture"),
                agentry::tool::ToolContent::Content {
                    content: ContentBlock::Image {
                        data: "iVBORw0KGgo=".into(),
                        mime_type: "image/png".into(),
                    },
                },
            ],
            ..Default::default()
        })
    }
}

/// The blocks of the tool results the model got in its second request.
fn second_results(h: &Harness) -> Vec<ContentBlock> {
    match h.model.requests()[1].messages.last() {
        Some(Message::ToolResults { results }) => results[0].content.clone(),
        other => panic!("not tool results: {other:?}"),
    }
}

#[tokio::test]
async fn images_reach_a_model_that_takes_them_and_a_note_replaces_them_for_one_that_does_not() {
    let script = || {
        [
            response([call("s", "Shot", json!({}))]),
            ScriptedResponse::text("seen"),
        ]
    };
    let mut seeing = harness(script()).tool(erase(Shot)).build();
    seeing.prompt("look").await.unwrap();
    assert!(matches!(
        second_results(&seeing).as_slice(),
        [ContentBlock::Text { .. }, ContentBlock::Image { .. }]
    ));

    let mut blind = harness(script()).tool(erase(Shot)).text_only().build();
    blind.prompt("look").await.unwrap();
    assert_eq!(
        second_results(&blind),
        [
            ContentBlock::Text {
                text: "a picture".into()
            },
            ContentBlock::Text {
                text: "[an image (image/png) was left out: this model does not take images]".into()
            }
        ]
    );
    // The history keeps the image, for a model that takes images later.
    assert!(blind.session.history().iter().any(|message| matches!(
        message,
        Message::ToolResults { results } if results[0].content.iter().any(|b| matches!(b, ContentBlock::Image { .. }))
    )));
}
