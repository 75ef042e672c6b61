//! What chats cost: each response priced as it comes, chats and sessions summed, and the
//! session's budget kept before each request.

use super::support::*;
use agentry::AgentError;
use agentry::agent::{AgentConfig, SessionOptions};
use agentry::cost::Price;
use agentry::event::{AgentEvent, StopReason};
use agentry::model::scripted::ScriptedResponse;
use agentry::session::MemoryStore;
use serde_json::json;
use std::sync::Arc;

/// $10 a million prompt tokens, $30 a million output tokens.
fn price() -> Price {
    Price::new(10.0, 30.0)
}

fn budget(usd: f64) -> AgentConfig {
    AgentConfig {
        max_budget_usd: Some(usd),
        ..AgentConfig::default()
    }
}

/// (cost, session cost) of each usage event.
fn costs(events: &[AgentEvent]) -> Vec<(Option<f64>, Option<f64>)> {
    events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::Usage {
                cost_usd,
                session_cost_usd,
                ..
            } => Some((*cost_usd, *session_cost_usd)),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn each_response_is_priced_and_the_chat_sums_them() {
    let mut h = harness([
        with_usage(
            response([call("c1", "Look", json!({"path": "a"}))]),
            20_000,
            500,
        ),
        with_usage(ScriptedResponse::text("Done."), 21_000, 100),
    ])
    .price(price())
    .build();
    let summary = h.prompt("look").await.unwrap();
    // 20,000 × $10 + 500 × $30 = $0.215; 21,000 × $10 + 100 × $30 = $0.213.
    let events = h.events();
    let costs = costs(&events);
    assert_eq!(costs.len(), 2);
    assert!(same_dollars(costs[0].0.unwrap(), 0.215) && same_dollars(costs[0].1.unwrap(), 0.215));
    assert!(same_dollars(costs[1].0.unwrap(), 0.213) && same_dollars(costs[1].1.unwrap(), 0.428));
    assert!(same_dollars(summary.cost_usd().unwrap(), 0.428));
    let scripted = &summary.spending.by_model()["scripted"];
    assert_eq!(scripted.requests, 2);
    assert_eq!(scripted.usage.input_tokens, 41_000);
    assert!(same_dollars(
        h.session.spending().cost_usd().unwrap(),
        0.428
    ));
    assert!(
        matches!(events.last(), Some(AgentEvent::ChatEnded(s)) if s.cost_usd() == summary.cost_usd())
    );
}

#[tokio::test]
async fn an_unpriced_model_is_counted_in_tokens_and_said_to_be_unpriced() {
    let mut h = harness([with_usage(ScriptedResponse::text("Hi."), 1_000, 10)]).build();
    let summary = h.prompt("hi").await.unwrap();
    assert_eq!(summary.cost_usd(), None, "never priced at zero");
    assert_eq!(summary.spending.unpriced_models(), ["scripted"]);
    assert_eq!(summary.spending.usage().input_tokens, 1_000);
    assert_eq!(costs(&h.events()), [(None, None)]);
}

#[tokio::test]
async fn the_turn_ends_cleanly_before_the_request_that_would_pass_the_budget() {
    // The first response costs $0.58; the next request's prompt (the system prompt and tools
    // alone are more than 100 tokens, $0.001) would pass $0.5805.
    let mut h = harness([
        with_usage(
            response([
                agentry::model::scripted::ScriptStep::Text("Looking first.".into()),
                call("c1", "Look", json!({"path": "a"})),
            ]),
            55_000,
            1_000,
        ),
        ScriptedResponse::text("never asked for"),
    ])
    .price(price())
    .config(budget(0.5805))
    .build();
    let summary = h.prompt("look").await.unwrap();
    assert_eq!(summary.stop_reason, StopReason::MaxBudget);
    assert_eq!(
        h.model.requests().len(),
        1,
        "the second request was not made"
    );
    assert_eq!(
        h.log.entries(),
        ["start a", "end a"],
        "the call that was asked for ran"
    );
    assert_eq!(
        summary.answer(),
        "Looking first.",
        "the answer so far is kept"
    );
    assert!(same_dollars(summary.cost_usd().unwrap(), 0.58));
    let notice = h
        .events()
        .into_iter()
        .find_map(|event| match event {
            AgentEvent::Notice { message } if message.contains("budget") => Some(message),
            _ => None,
        })
        .expect("the stop is explained");
    assert!(notice.contains("$0.5800 of its $0.58"), "{notice}");
}

#[tokio::test]
async fn a_resumed_session_counts_what_it_spent_before_against_its_budget() {
    let store = Arc::new(MemoryStore::default());
    let mut h = harness([with_usage(ScriptedResponse::text("First."), 50_000, 0)])
        .price(price())
        .config(budget(0.5001))
        .store(store)
        .build();
    let first = h.prompt("first").await.unwrap();
    assert_eq!(first.stop_reason, StopReason::EndTurn);
    let id = h.session.id().clone();
    let mut resumed = h
        .agent
        .resume_session(&id, SessionOptions::new(h.dir.path()))
        .unwrap();
    assert!(same_dollars(resumed.spending().cost_usd().unwrap(), 0.5));
    let content = vec![agentry::tool::ContentBlock::text("second")];
    let second = resumed
        .prompt_with(content, &Default::default(), &h.io())
        .await
        .unwrap();
    assert_eq!(second.stop_reason, StopReason::MaxBudget);
    assert_eq!(h.model.requests().len(), 1, "no request past the budget");
}

#[tokio::test]
async fn a_budget_with_a_model_that_has_no_price_fails_closed() {
    let mut h = harness([ScriptedResponse::text("never asked for")])
        .config(budget(5.0))
        .build();
    let error = h.prompt("hi").await.unwrap_err();
    assert!(matches!(error, AgentError::Unpriced { .. }), "{error}");
    assert!(
        error.to_string().contains("`scripted` has no price"),
        "{error}"
    );
    assert!(h.model.requests().is_empty());
}

/// Asks the session's model a side question, as WebFetch does.
struct AskAside;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Question {
    /// The question.
    question: String,
}

impl agentry::tool::Tool for AskAside {
    type Input = Question;
    type Output = String;

    fn name(&self) -> &str {
        "AskAside"
    }
    fn description(&self) -> String {
        "Asks the model a side question.".to_owned()
    }
    fn kind(&self) -> agentry::tool::ToolKind {
        // Runs unasked: the test is of its cost, not its permission.
        agentry::tool::ToolKind::Read
    }
    async fn call(
        &self,
        input: Question,
        ctx: agentry::tool::ToolContext,
    ) -> Result<String, agentry::tool::ToolError> {
        let side = ctx.host.side_questions.clone().expect("side questions");
        let answer = side
            .ask(agentry::tool::SideQuestion {
                system: "Answer briefly.".to_owned(),
                question: input.question,
                model: None,
                max_tokens: None,
            })
            .await
            .map_err(agentry::tool::ToolError::failed)?;
        Ok(answer.text)
    }
}

#[tokio::test]
async fn side_questions_count_toward_the_chat_and_its_budget() {
    // The chat's first response costs $0.1; the tool's side question $0.5; within $1 the next
    // request is made, and the chat's cost holds all three.
    let responses = || {
        vec![
            with_usage(
                response([call("c1", "AskAside", json!({"question": "why?"}))]),
                10_000,
                0,
            ),
            with_usage(ScriptedResponse::text("because"), 50_000, 0),
            with_usage(ScriptedResponse::text("Done."), 10_000, 0),
        ]
    };
    let mut h = harness(responses())
        .price(price())
        .config(budget(1.0))
        .tool(agentry::tool::erase(AskAside))
        .build();
    let summary = h.prompt("ask").await.unwrap();
    assert_eq!(summary.stop_reason, StopReason::EndTurn);
    assert!(
        same_dollars(summary.cost_usd().unwrap(), 0.7),
        "{:?}",
        summary.spending
    );
    assert_eq!(summary.spending.by_model()["scripted"].requests, 3);
    // Within $0.05, the first response already passed it: the side question is refused before
    // it is asked (the tool fails, saying why), and so is the next request.
    let mut h = harness(responses())
        .price(price())
        .config(budget(0.05))
        .tool(agentry::tool::erase(AskAside))
        .build();
    let summary = h.prompt("ask").await.unwrap();
    assert_eq!(summary.stop_reason, StopReason::MaxBudget);
    assert_eq!(
        h.model.requests().len(),
        1,
        "neither the side question nor the next request"
    );
    assert!(same_dollars(summary.cost_usd().unwrap(), 0.1));
    let events = serde_json::to_string(&h.events()).unwrap();
    assert!(events.contains("would go past it"), "{events}");
}
