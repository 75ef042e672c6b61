//! Executor overhead: one no-op tool call through announce (parse + validate) → permission
//! (auto allow) → in_progress → run → completed. Target: under 20 µs median per call.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use agentry::event::AgentEvent;
use agentry::executor::{CallResult, CallScope, Executor};
use agentry::model::{ToolArguments, ToolCallRequest};
use agentry::permission::{PermissionPolicy, RejectWhenAsked};
use agentry::provider::{SimpleProvider, ToolRegistry};
use agentry::tool::{ClientServices, SessionState, Tool, ToolContext, ToolError, ToolKind};
use criterion::{Criterion, criterion_group, criterion_main};
use schemars::JsonSchema;
use serde::Deserialize;
use std::sync::Arc;

#[derive(Deserialize, JsonSchema)]
struct NoopInput {
    /// Ignored.
    #[allow(dead_code)]
    path: String,
}

struct Noop;

impl Tool for Noop {
    type Input = NoopInput;
    type Output = String;
    fn name(&self) -> &str {
        "Noop"
    }
    fn description(&self) -> String {
        "Does nothing.".into()
    }
    fn kind(&self) -> ToolKind {
        ToolKind::Read
    }
    async fn call(&self, _input: NoopInput, _ctx: ToolContext) -> Result<String, ToolError> {
        Ok(String::new())
    }
}

fn executor_overhead(c: &mut Criterion) {
    let mut registry = ToolRegistry::new();
    registry
        .register(Arc::new(SimpleProvider::new("bench", "").with_tool(Noop)))
        .unwrap();
    let executor = Executor::new(Arc::new(registry));
    let scope = CallScope {
        session_id: "s".into(),
        turn_id: "t".into(),
        cwd: std::env::temp_dir(),
        workspace_roots: vec![std::env::temp_dir()],
        client: ClientServices::default(),
        host: Default::default(),
        state: SessionState::default(),
        policy: PermissionPolicy::default(),
        remembered: Arc::default(),
        events: Arc::new(|event: AgentEvent| {
            std::hint::black_box(event);
        }),
        permissions: Arc::new(RejectWhenAsked),
        cancel: Default::default(),
        extensions: Default::default(),
        hooks: None,
        before_change: None,
    };
    let request = ToolCallRequest {
        id: "c".into(),
        name: "Noop".into(),
        arguments: ToolArguments::parse(r#"{"path": "src/main.rs"}"#),
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    c.bench_function("executor/noop_call", |b| {
        b.to_async(&runtime).iter(|| async {
            let pending = executor.announce(request.clone(), &scope);
            let result = executor.run(pending, &scope).await;
            assert!(matches!(&result, CallResult::Done(done) if !done.is_error));
            result
        })
    });
}

criterion_group!(benches, executor_overhead);
criterion_main!(benches);
