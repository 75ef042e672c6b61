//! The hidden costs of loading the stock providers as plugins, measured in one run against the
//! same providers linked: a Read of a small file and a `true` through Bash, each through the
//! executor (target: the boundary adds under 10 µs per call); and the thin CLI with the stock
//! plugins against the full binary: the files' sizes and the time from starting `agentry acp`
//! to its answer to `initialize` (medians of 20 starts, and the ratio).
//!
//! Measures release builds, as a user runs them; build them first:
//! `scripts/build-plugins --release` (into `target/plugins-release/`), then
//! `cargo build --release -p agentry-cli --no-default-features && cp target/release/agentry
//! target/release/agentry-thin && cargo build --release -p agentry-cli`.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use agentry::plugins::load;
use agentry::testing::ToolHarness;
use criterion::{Criterion, criterion_group};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// `target/release`, where the binaries under test are.
fn built() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/release")
}

/// The stock plugin `name`, built by `scripts/build-plugins --release`.
fn plugin(name: &str) -> PathBuf {
    let path = built().join(format!("../plugins-release/libagentry_{name}.so"));
    assert!(
        path.exists(),
        "no {}: run scripts/build-plugins --release",
        path.display()
    );
    path
}

/// A harness (in bypass mode) over `provider`'s tools in `dir`.
fn harness(provider: &dyn agentry::provider::Provider, dir: &Path) -> ToolHarness {
    ToolHarness::new(provider, dir).unwrap()
}

fn calls(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "one\ntwo\nthree\n").unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let cases: [(&str, Value, ToolHarness, ToolHarness); 2] = [
        (
            "Read",
            json!({"file_path": "notes.txt"}),
            harness(&agentry_file_ops::FileOps::default(), dir.path()),
            harness(&load(&plugin("file_ops")).unwrap(), dir.path()),
        ),
        (
            "Bash",
            json!({"command": "true", "dangerouslyDisableSandbox": true}),
            harness(&agentry_bash::Shell::default(), dir.path()),
            harness(&load(&plugin("bash")).unwrap(), dir.path()),
        ),
    ];
    for (tool, input, linked, loaded) in &cases {
        let mut group = c.benchmark_group(format!("stock_{}", tool.to_lowercase()));
        for (name, harness) in [("linked", linked), ("plugin", loaded)] {
            group.bench_function(name, |b| {
                b.to_async(&runtime).iter(|| async {
                    let outcome = harness.call(tool, input.clone()).await;
                    assert!(!outcome.result.is_error, "{}", outcome.text());
                })
            });
        }
        group.finish();
    }
}

/// The time from starting `binary acp ARGS` to its answer to `initialize`.
fn initialize_time(binary: &Path, args: &[String], home: &Path) -> Duration {
    let started = Instant::now();
    let mut child = Command::new(binary)
        .arg("acp")
        .args(args)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_DATA_HOME", home.join(".local/share"))
        .current_dir(home)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":1}}}}"#
    )
    .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let elapsed = started.elapsed();
    assert!(line.contains("\"result\""), "{line}");
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    elapsed
}

fn median(mut figures: Vec<Duration>) -> Duration {
    figures.sort();
    figures[figures.len() / 2]
}

/// Sizes and `initialize` times of the full binary and the thin one with the stock plugins.
fn binaries() {
    let home = tempfile::tempdir().unwrap();
    let full = built().join("agentry");
    let thin = built().join("agentry-thin");
    let plugins: Vec<PathBuf> = agentry_tests::STOCK_PLUGINS
        .iter()
        .map(|name| plugin(name))
        .collect();
    let flags: Vec<String> = plugins
        .iter()
        .flat_map(|p| ["--plugin".to_owned(), p.display().to_string()])
        .collect();
    let size = |path: &Path| std::fs::metadata(path).unwrap().len();
    let plugin_bytes: u64 = plugins.iter().map(|p| size(p)).sum();
    println!(
        "size: full {} bytes; thin {} bytes + stock plugins {} bytes = {} bytes ({:.2}× the full)",
        size(&full),
        size(&thin),
        plugin_bytes,
        size(&thin) + plugin_bytes,
        (size(&thin) + plugin_bytes) as f64 / size(&full) as f64
    );
    let runs = 20;
    let mut full_times = Vec::new();
    let mut thin_times = Vec::new();
    for _ in 0..runs {
        full_times.push(initialize_time(&full, &[], home.path()));
        thin_times.push(initialize_time(&thin, &flags, home.path()));
    }
    let (full, thin) = (median(full_times), median(thin_times));
    println!(
        "acp initialize, median of {runs}: full {:.1} ms; thin with the stock plugins {:.1} ms ({:.2}× the full)",
        full.as_secs_f64() * 1e3,
        thin.as_secs_f64() * 1e3,
        thin.as_secs_f64() / full.as_secs_f64()
    );
}

criterion_group!(benches, calls);

fn main() {
    binaries();
    benches();
    Criterion::default().configure_from_args().final_summary();
}
