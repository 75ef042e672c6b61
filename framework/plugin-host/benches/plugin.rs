//! Per-call overhead of the plugin boundary: the example plugin's `SlowCount {to: 0}` (which
//! returns at once) through the executor, loaded from the shared library vs linked statically,
//! in the same run. Target: the boundary adds under 10 µs per call.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use agentry::provider::SimpleProvider;
use agentry::testing::ToolHarness;
use agentry_plugin_host::load;
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;

fn plugin_boundary(c: &mut Criterion) {
    let deps = std::env::current_exe()
        .unwrap()
        .parent()
        .unwrap()
        .to_path_buf();
    let library = deps.join(format!(
        "{}agentry_plugin_hello{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    ));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let dir = std::env::temp_dir();
    let linked = ToolHarness::new(
        &SimpleProvider::new("hello", "").with_tool(agentry_plugin_hello::SlowCount),
        &dir,
    )
    .unwrap();
    let loaded = ToolHarness::new(&load(&library).unwrap(), &dir).unwrap();
    let mut group = c.benchmark_group("noop_tool_call");
    for (name, harness) in [("linked", &linked), ("plugin", &loaded)] {
        group.bench_function(name, |b| {
            b.to_async(&runtime).iter(|| async {
                let outcome = harness.call("SlowCount", json!({"to": 0})).await;
                assert!(!outcome.result.is_error, "{}", outcome.text());
            })
        });
    }
    group.finish();
}

criterion_group!(benches, plugin_boundary);
criterion_main!(benches);
