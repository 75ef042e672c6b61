//! The `WebFetch` tool through the executor: the prompt answered by a model that reads the page,
//! the session's model by default, pages kept for the session, long pages cut with a marker,
//! refusals as failed calls the model can read, and `WebFetch(domain:…)` permission rules.

use crate::site;
use agentry::model::named::NamedModels;
use agentry::model::scripted::{ScriptedModel, ScriptedResponse};
use agentry::model::side::SessionModel;
use agentry::model::{Message, Model, ModelError};
use agentry::permission::{PermissionMode, PermissionPolicy, PermissionRule, RuleAction};
use agentry::provider::SimpleProvider;
use agentry::testing::ToolHarness;
use agentry::tool::ContentBlock;
use agentry::tool::SideQuestions;
use agentry_webfetch::WebFetch;
use serde_json::json;
use std::sync::Arc;

/// Side questions as a chat offers them: the session's model (which answers nothing) and
/// `model` by the name `small`, as the configuration's `[webfetch] model` names it.
fn answering_with_small(model: Arc<ScriptedModel>) -> Arc<dyn SideQuestions> {
    let named = NamedModels::new(move |name| match name {
        "small" => Ok(model.clone() as Arc<dyn Model>),
        other => Err(ModelError::Config(format!("no model `{other}` here"))),
    });
    let session = Arc::new(ScriptedModel::new([]));
    Arc::new(SessionModel::new(session).with_named(Some(Arc::new(named))))
}

fn provider(tool: WebFetch) -> SimpleProvider {
    SimpleProvider::new("webfetch", "").with_tool(tool)
}

/// The text of the one question each request to `model` asked.
fn questions(model: &ScriptedModel) -> Vec<String> {
    model
        .requests()
        .iter()
        .map(|request| match &request.messages[..] {
            [Message::User { content }] => content
                .iter()
                .filter_map(|block| match block {
                    ContentBlock::Text { text } => Some(text.clone()),
                    _ => None,
                })
                .collect(),
            other => panic!("one user message, not {other:?}"),
        })
        .collect()
}

/// The model's answer in a WebFetch result, after the line that says where it comes from.
fn answer_of(text: &str) -> &str {
    text.split_once("\n\n").map_or(text, |(_, answer)| answer)
}

#[tokio::test]
async fn the_prompt_is_answered_from_the_page_by_the_configured_model_and_the_page_is_kept() {
    let site = site::start().await;
    let model = Arc::new(ScriptedModel::new([
        ScriptedResponse::text("Each value has one owner."),
        ScriptedResponse::text("Moves and borrows."),
    ]));
    let tool = WebFetch::new(site::fetcher(site::settings()), Some("small".into()));
    let dir = tempfile::tempdir().unwrap();
    let harness = ToolHarness::new(&provider(tool), dir.path())
        .unwrap()
        .with_side_questions(answering_with_small(model.clone()));
    let url = site.url("/article");
    let first = harness
        .call(
            "WebFetch",
            json!({"url": url, "prompt": "Who owns a value?"}),
        )
        .await;
    assert!(!first.result.is_error, "{}", first.text());
    assert_eq!(answer_of(&first.text()), "Each value has one owner.");
    let raw = first.final_update().unwrap().raw_output.clone().unwrap();
    assert_eq!(raw["status"], 200);
    assert_eq!(raw["cached"], false);
    assert_eq!(raw["content_type"], "text/html; charset=utf-8");
    assert!(
        first.text().starts_with("[What a model read in ") && first.text().contains("untrusted"),
        "the main agent is told the answer comes from untrusted content: {}",
        first.text()
    );
    let asked = &questions(&model)[0];
    assert!(
        asked.contains("# Ownership") && asked.contains("Request: Who owns a value?"),
        "{asked}"
    );
    // The page is fenced by a marker made after it was fetched: it cannot close the fence.
    let fence = asked
        .split("<untrusted-page-")
        .nth(1)
        .and_then(|rest| rest.split('>').next())
        .expect("a fence");
    let closing = format!("</untrusted-page-{fence}>");
    assert_eq!(
        asked.matches(&closing).count(),
        2,
        "named, then closing: {asked}"
    );
    assert!(
        asked.rfind(&closing).unwrap() < asked.find("Request: Who owns a value?").unwrap(),
        "{asked}"
    );
    assert!(!asked.contains("secret-script"), "{asked}");
    // The same URL again: from the session's pages, not the site.
    let second = harness
        .call(
            "WebFetch",
            json!({"url": url, "prompt": "What are the list items?"}),
        )
        .await;
    assert_eq!(answer_of(&second.text()), "Moves and borrows.");
    let raw = second.final_update().unwrap().raw_output.clone().unwrap();
    assert_eq!(raw["cached"], true);
    assert!(questions(&model)[1].contains("# Ownership"));
}

#[tokio::test]
async fn without_a_configured_model_the_sessions_answers_and_long_pages_are_cut() {
    let site = site::start().await;
    let session_model = Arc::new(ScriptedModel::new([ScriptedResponse::text("Mostly x.")]));
    let tool = WebFetch::new(site::fetcher(site::settings()), None).with_max_content_chars(1_000);
    let dir = tempfile::tempdir().unwrap();
    let harness = ToolHarness::new(&provider(tool), dir.path())
        .unwrap()
        .with_session_model(session_model.clone());
    let out = harness
        .call(
            "WebFetch",
            json!({"url": site.url("/huge"), "prompt": "What is it?"}),
        )
        .await;
    assert_eq!(answer_of(&out.text()), "Mostly x.");
    let asked = &questions(&session_model)[0];
    assert!(
        asked.contains("[… cut: the page has 65536 characters; the first 1000 are shown]"),
        "{asked}"
    );
    assert!(asked.contains("cut short"), "{asked}");
    assert!(asked.len() < 2_000, "{} characters", asked.len());
}

#[tokio::test]
async fn refusals_and_fetch_failures_are_failed_calls_the_model_reads() {
    let site = site::start().await;
    let model = Arc::new(ScriptedModel::new([]));
    let tool = WebFetch::new(site::fetcher(site::settings()), Some("small".into()));
    let dir = tempfile::tempdir().unwrap();
    let harness = ToolHarness::new(&provider(tool), dir.path())
        .unwrap()
        .with_side_questions(answering_with_small(model.clone()));
    for (url, says) in [
        (
            "http://169.254.169.254/latest/meta-data/".to_owned(),
            "link-local",
        ),
        (site.url("/to-private-name"), "not a public address"),
        (site.url("/logo.png"), "image/png"),
        (site.url("/missing"), "answered 404"),
        ("not a url".to_owned(), "invalid URL"),
    ] {
        let out = harness
            .call("WebFetch", json!({"url": url, "prompt": "?"}))
            .await;
        assert!(out.result.is_error, "{url}");
        assert!(out.text().contains(says), "{url}: {}", out.text());
    }
    assert!(model.requests().is_empty(), "no page, no question");
}

#[tokio::test]
async fn a_domain_rule_allows_that_domain_and_its_subdomains_only() {
    let site = site::start().await;
    let model = Arc::new(ScriptedModel::new([ScriptedResponse::text("ok")]));
    let tool = WebFetch::new(site::fetcher(site::settings()), Some("small".into()));
    let dir = tempfile::tempdir().unwrap();
    let policy = PermissionPolicy::new(
        PermissionMode::Default,
        vec![PermissionRule::parse(RuleAction::Allow, "WebFetch(domain:site.test)").unwrap()],
    );
    // Questions are rejected by the harness: only the rule lets a call run.
    let harness = ToolHarness::new(&provider(tool), dir.path())
        .unwrap()
        .with_side_questions(answering_with_small(model))
        .with_policy(policy);
    let allowed = harness
        .call(
            "WebFetch",
            json!({"url": site.url("/notes.txt"), "prompt": "?"}),
        )
        .await;
    assert!(!allowed.result.is_error, "{}", allowed.text());
    let other = harness
        .call(
            "WebFetch",
            json!({"url": "https://docs.rs/", "prompt": "?"}),
        )
        .await;
    assert!(other.result.is_error, "asked, and the harness rejects");
    assert!(other.text().contains("reject"), "{}", other.text());
}

#[tokio::test]
async fn a_configured_model_that_cannot_be_opened_fails_the_call_with_the_reason() {
    let site = site::start().await;
    let tool = WebFetch::new(site::fetcher(site::settings()), Some("large".into()));
    let dir = tempfile::tempdir().unwrap();
    let harness = ToolHarness::new(&provider(tool), dir.path())
        .unwrap()
        .with_side_questions(answering_with_small(Arc::new(ScriptedModel::new([]))));
    let out = harness
        .call(
            "WebFetch",
            json!({"url": site.url("/article"), "prompt": "?"}),
        )
        .await;
    assert!(out.result.is_error);
    assert!(
        out.text().contains("cannot open the model `large`")
            && out.text().contains("no model `large` here"),
        "{}",
        out.text()
    );
}

#[test]
fn the_tool_as_the_model_sees_it() {
    let tool = WebFetch::new(site::fetcher(site::settings()), None);
    for (name, shown) in agentry::testing::tool_definitions(Arc::new(provider(tool))).unwrap() {
        insta::with_settings!({sort_maps => true, prepend_module_to_snapshot => false}, {
            insta::assert_json_snapshot!(name, shown);
        });
    }
}
