//! Sub-agents run from a tool call: nested loops whose events join the chat's one stream.

use super::support::*;
use agentry::agent::AgentConfig;
use agentry::event::{AgentEvent, Role, StopReason};
use agentry::ids::ToolCallId;
use agentry::model::ModelRequest;
use agentry::model::scripted::{ScriptedModel, ScriptedResponse};
use agentry::session::{MemoryStore, SessionStore};
use agentry::subagent::{SubAgentSpec, SubAgents};
use agentry::tool::{Tool, ToolContext, ToolError, ToolKind, erase};
use serde_json::json;
use std::collections::HashMap;
use std::sync::Arc;

/// Runs a sub-agent whose model is one of the test's scripted models.
struct Delegate {
    models: HashMap<&'static str, Arc<ScriptedModel>>,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct DelegateInput {
    /// Which scripted model the sub-agent uses.
    agent: String,
    /// Its task.
    prompt: String,
    /// The tools it may call.
    tools: Option<Vec<String>>,
}

impl Tool for Delegate {
    type Input = DelegateInput;
    type Output = String;

    fn name(&self) -> &str {
        "Delegate"
    }
    fn description(&self) -> String {
        "Hands a task to a sub-agent.".to_owned()
    }
    fn kind(&self) -> ToolKind {
        ToolKind::Think
    }
    async fn call(&self, input: DelegateInput, ctx: ToolContext) -> Result<String, ToolError> {
        let runner = SubAgents::of(&ctx).ok_or_else(|| ToolError::failed("no sub-agents"))?;
        let mut spec = SubAgentSpec::new(format!("You are sub-agent {}.", input.agent));
        spec.model = self
            .models
            .get(input.agent.as_str())
            .map(|model| model.clone() as Arc<dyn agentry::model::Model>);
        spec.tools = input.tools;
        let outcome = runner.run(&ctx, spec, input.prompt).await?;
        Ok(format!("{} said: {}", input.agent, outcome.answer))
    }
}

fn delegate(models: &[(&'static str, &Arc<ScriptedModel>)]) -> Arc<dyn agentry::tool::DynTool> {
    erase(Delegate {
        models: models
            .iter()
            .map(|(name, model)| (*name, Arc::clone(model)))
            .collect(),
    })
}

/// (role, parent call, loop) of every turn started, in order.
fn turns(events: &[AgentEvent]) -> Vec<(Role, Option<String>, String)> {
    events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::TurnStarted {
                role,
                parent_fork_tool_call_id,
                loop_id,
                ..
            } => Some((
                *role,
                parent_fork_tool_call_id.as_ref().map(ToolCallId::to_string),
                loop_id.clone(),
            )),
            _ => None,
        })
        .collect()
}

fn tool_names(request: &ModelRequest) -> Vec<String> {
    request.tools.iter().map(|t| t.name.clone()).collect()
}

#[tokio::test]
async fn a_sub_agent_runs_its_own_loop_and_its_answer_is_the_tool_result() {
    let child = Arc::new(ScriptedModel::new([
        response([call("look", "Look", json!({"path": "notes.md"}))]),
        ScriptedResponse::text("notes.md holds three notes"),
    ]));
    let store = Arc::new(MemoryStore::default());
    let mut h = harness([
        response([call(
            "d1",
            "Delegate",
            json!({"agent": "a", "prompt": "Read notes.md", "tools": ["Look"]}),
        )]),
        ScriptedResponse::text("Done."),
    ])
    .tool(delegate(&[("a", &child)]))
    .store(store.clone())
    .build();
    let summary = h.prompt("Summarise the notes").await.unwrap();
    assert_eq!(summary.stop_reason, StopReason::EndTurn);
    let events = h.events();
    let d1 = Some("d1".to_owned());
    assert_eq!(
        turns(&events),
        [
            (Role::User, None, "root".to_owned()),
            (Role::Assistant, None, "root".to_owned()),
            (Role::User, d1.clone(), "loop_d1".to_owned()),
            (Role::Assistant, d1.clone(), "loop_d1".to_owned()),
            (Role::Assistant, d1.clone(), "loop_d1".to_owned()),
            (Role::Assistant, None, "root".to_owned()),
        ]
    );
    // One chat: the sub-agent's chat boundaries stay inside it.
    let chat_events = events
        .iter()
        .filter(|e| matches!(e, AgentEvent::ChatStarted { .. } | AgentEvent::ChatEnded(_)))
        .count();
    assert_eq!(chat_events, 2);
    // The sub-agent saw its own system prompt, history and tools.
    let asked = &child.requests()[0];
    assert!(
        asked.system.starts_with("You are sub-agent a."),
        "{}",
        asked.system
    );
    assert_eq!(
        asked.messages,
        [agentry::model::Message::user_text("Read notes.md")]
    );
    assert_eq!(tool_names(asked), ["Look"]);
    assert_eq!(
        results_sent(&h.model, 1),
        [(
            "d1".to_owned(),
            false,
            "a said: notes.md holds three notes".to_owned()
        )]
    );
    assert_eq!(h.log.entries(), ["start notes.md", "end notes.md"]);
    // Stored with the session, parent links and all.
    let stored = store.load(h.session.id()).unwrap();
    assert_eq!(turns(&stored.events), turns(&events));
    assert_eq!(
        store.list().unwrap().len(),
        1,
        "the sub-agent has no session of its own"
    );
}

#[tokio::test]
async fn sub_agents_of_one_response_run_at_once_and_their_events_stay_apart() {
    let slow = |name: &str| {
        Arc::new(ScriptedModel::new([
            response([call(
                &format!("look_{name}"),
                "Look",
                json!({"path": name, "millis": 400}),
            )]),
            ScriptedResponse::text(format!("{name} done")),
        ]))
    };
    let (a, b) = (slow("a"), slow("b"));
    let mut h = harness([
        response([
            call("da", "Delegate", json!({"agent": "a", "prompt": "a"})),
            call("db", "Delegate", json!({"agent": "b", "prompt": "b"})),
        ]),
        ScriptedResponse::text("both done"),
    ])
    .tool(delegate(&[("a", &a), ("b", &b)]))
    .build();
    h.prompt("go").await.unwrap();
    // Both started before either ended.
    let log = h.log.entries();
    assert_eq!(
        &log[..2].iter().filter(|e| e.starts_with("start")).count(),
        &2,
        "{log:?}"
    );
    let events = h.events();
    // Each sub-agent's tool call belongs to a turn of its own loop.
    let loop_of_turn: HashMap<String, String> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::TurnStarted {
                turn_id, loop_id, ..
            } => Some((turn_id.to_string(), loop_id.clone())),
            _ => None,
        })
        .collect();
    for (call_id, expected) in [("look_a", "loop_da"), ("look_b", "loop_db")] {
        let turn = events
            .iter()
            .find_map(|e| match e {
                AgentEvent::ToolCall(s) if s.tool_call_id.as_str() == call_id => {
                    Some(s.turn_id.to_string())
                }
                _ => None,
            })
            .unwrap();
        assert_eq!(loop_of_turn[&turn], expected);
    }
    let sent = results_sent(&h.model, 1);
    assert_eq!(sent[0].2, "a said: a done");
    assert_eq!(sent[1].2, "b said: b done");
}

#[tokio::test]
async fn nested_sub_agents_chain_their_parents_and_the_depth_limit_refuses_deeper_ones() {
    let grandchild = Arc::new(ScriptedModel::new([
        response([call(
            "too_deep",
            "Delegate",
            json!({"agent": "c", "prompt": "deeper"}),
        )]),
        ScriptedResponse::text("grandchild gave up"),
    ]));
    let child = Arc::new(ScriptedModel::new([
        response([call(
            "d2",
            "Delegate",
            json!({"agent": "grandchild", "prompt": "go on"}),
        )]),
        ScriptedResponse::text("child done"),
    ]));
    let mut h = harness([
        response([call(
            "d1",
            "Delegate",
            json!({"agent": "child", "prompt": "go"}),
        )]),
        ScriptedResponse::text("root done"),
    ])
    .tool(delegate(&[("child", &child), ("grandchild", &grandchild)]))
    .config(AgentConfig {
        max_fork_depth: 2,
        ..AgentConfig::default()
    })
    .build();
    h.prompt("go").await.unwrap();
    let events = h.events();
    let loops: Vec<(Option<String>, String)> = turns(&events)
        .into_iter()
        .map(|(_, parent, loop_id)| (parent, loop_id))
        .collect();
    assert!(loops.contains(&(Some("d2".to_owned()), "loop_d2".to_owned())));
    assert!(loops.contains(&(Some("d1".to_owned()), "loop_d1".to_owned())));
    assert!(!loops.iter().any(|(_, l)| l == "loop_too_deep"));
    let refused = final_update(&events, "too_deep");
    assert_eq!(refused.status, Some(agentry::event::ToolCallStatus::Failed));
    let told = grandchild.requests()[1].messages.last().cloned().unwrap();
    let agentry::model::Message::ToolResults { results } = told else {
        panic!("no tool results");
    };
    assert!(
        results[0]
            .text()
            .contains("sub-agents may nest 2 deep and this one would be 3 deep"),
        "{}",
        results[0].text()
    );
    assert_eq!(child.requests()[1].messages.len(), 3);
}

#[tokio::test]
async fn cancelling_the_chat_stops_the_sub_agents_running_tool() {
    let child = Arc::new(ScriptedModel::new([response([call(
        "slow",
        "Look",
        json!({"path": "big", "millis": 30_000}),
    )])]));
    let mut h = harness([response([call(
        "d1",
        "Delegate",
        json!({"agent": "a", "prompt": "read big"}),
    )])])
    .tool(delegate(&[("a", &child)]))
    .build();
    let cancel = h.cancel.clone();
    let log = h.log.clone();
    tokio::spawn(async move {
        while !log.entries().contains(&"start big".to_owned()) {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        cancel.cancel();
    });
    let summary = h.prompt("go").await.unwrap();
    assert_eq!(summary.stop_reason, StopReason::Cancelled);
    assert_eq!(h.log.entries(), ["start big", "cancelled big"]);
}

#[tokio::test]
async fn a_sub_agent_naming_an_unknown_tool_is_a_clear_tool_error() {
    let child = Arc::new(ScriptedModel::new([]));
    let mut h = harness([
        response([call(
            "d1",
            "Delegate",
            json!({"agent": "a", "prompt": "x", "tools": ["Look", "Teleport"]}),
        )]),
        ScriptedResponse::text("ok"),
    ])
    .tool(delegate(&[("a", &child)]))
    .build();
    h.prompt("go").await.unwrap();
    let sent = results_sent(&h.model, 1);
    assert!(sent[0].1);
    assert!(
        sent[0]
            .2
            .contains("names tools that do not exist: Teleport"),
        "{}",
        sent[0].2
    );
    assert!(child.requests().is_empty());
}

#[tokio::test]
async fn a_subagent_stop_hook_makes_the_sub_agent_go_on_and_the_stop_hook_runs_for_the_chat() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("hooks.log");
    let settings: agentry_stock::hooks::HookSettings = serde_json::from_value(json!({
            "SubagentStop": [{"hooks": [{"type": "command", "command": format!(
                "input=$(cat); echo subagent >> '{log}'; case \"$input\" in \
                 *'\"stop_hook_active\":true'*) exit 0;; esac; echo 'check your work' >&2; exit 2",
                log = log.display())}]}],
            "Stop": [{"hooks": [{"type": "command",
                "command": format!("cat > /dev/null; echo stop >> '{}'", log.display())}]}],
    }))
    .unwrap();
    let child = Arc::new(ScriptedModel::new([
        ScriptedResponse::text("first try"),
        ScriptedResponse::text("checked"),
    ]));
    let mut h = harness([
        response([call(
            "d1",
            "Delegate",
            json!({"agent": "a", "prompt": "Do it", "tools": []}),
        )]),
        ScriptedResponse::text("Done."),
    ])
    .tool(delegate(&[("a", &child)]))
    .hooks(Arc::new(agentry_stock::hooks::SettingsHooks::new(settings)))
    .build();
    let summary = h.prompt("Delegate it").await.unwrap();
    assert_eq!(summary.result, "Done.");
    assert_eq!(child.requests().len(), 2);
    let again = serde_json::to_string(&child.requests()[1].messages).unwrap();
    assert!(
        again.contains("Stop hook feedback:\\ncheck your work"),
        "{again}"
    );
    assert_eq!(
        results_sent(&h.model, 1),
        [("d1".to_owned(), false, "a said: checked".to_owned())]
    );
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        "subagent\nsubagent\nstop\n"
    );
}

#[tokio::test]
async fn a_sub_agents_spending_counts_toward_the_calling_chat_and_its_budget() {
    let price = agentry::cost::Price::new(10.0, 30.0);
    // The sub-agent's first response costs $1; its next request, and the calling chat's,
    // would pass the $0.9 budget.
    let child = Arc::new(
        ScriptedModel::new([
            with_usage(
                response([call("look", "Look", json!({"path": "a"}))]),
                100_000,
                0,
            ),
            ScriptedResponse::text("never asked for"),
        ])
        .with_price(price),
    );
    let mut h = harness([
        with_usage(
            response([call(
                "d1",
                "Delegate",
                json!({"agent": "a", "prompt": "look"}),
            )]),
            1_000,
            0,
        ),
        ScriptedResponse::text("never asked for either"),
    ])
    .price(price)
    .config(AgentConfig {
        max_budget_usd: Some(0.9),
        ..AgentConfig::default()
    })
    .tool(delegate(&[("a", &child)]))
    .build();
    let summary = h.prompt("delegate").await.unwrap();
    assert_eq!(summary.stop_reason, StopReason::MaxBudget);
    assert_eq!(child.requests().len(), 1);
    assert_eq!(h.model.requests().len(), 1);
    // $0.01 of the calling chat's and $1 of the sub-agent's.
    assert!(same_dollars(summary.cost_usd().unwrap(), 1.01));
    assert_eq!(summary.spending.by_model()["scripted"].requests, 2);
    assert_eq!(
        summary.usage.input_tokens, 1_000,
        "the chat's own loop's tokens"
    );
    // The sub-agent's response reported the session's cost so far, the caller's included.
    let session_costs: Vec<f64> = h
        .events()
        .iter()
        .filter_map(|event| match event {
            AgentEvent::Usage {
                session_cost_usd, ..
            } => *session_cost_usd,
            _ => None,
        })
        .collect();
    assert_eq!(session_costs.len(), 2);
    assert!(same_dollars(session_costs[1], 1.01), "{session_costs:?}");
}
