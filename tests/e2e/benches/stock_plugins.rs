//! The hidden costs of loading the stock providers as plugins, measured in one run against the
//! same providers linked: a Read of a small file and a `true` through Bash, each through the
//! executor; and the thin CLI with the stock plugins against the full binary: the files' sizes
//! and the time from starting `agentry acp` to its answer to `initialize` (medians of 20 starts,
//! and the ratio).
//!
//! The calls are timed twice, as medians of rounds that alternate linked and plugin: free on
//! the machine's cores, as a user runs them, and then with every thread on one CPU. On one CPU
//! both ways follow the same schedule, so the difference is what the boundary itself costs (the
//! JSON of the call and its output, the plugin's own bookkeeping; target: under 10 µs, as for a
//! no-op call in `cargo bench -p agentry --bench plugin`). Free, a Read also pays for where its
//! blocking read lands: the plugin's own blocking pool wakes threads on the other core, which on
//! a virtual machine costs tens of µs. A Bash call can also pay a little for the fork of a
//! process that carries two runtimes and two copies of the shared code (more page tables to
//! copy), within the noise of starting a shell.
//!
//! Measures release builds, as a user runs them; build them first:
//! `scripts/build-plugins --release` (into `target/plugins-release/`), then
//! `cargo build --release -p agentry-cli -p agentry-thin`.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use agentry::testing::ToolHarness;
use agentry_plugin_host::load;
use criterion::Criterion;
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

/// One tool called both ways, with the calls a timed round makes.
struct Case {
    tool: &'static str,
    input: Value,
    linked: ToolHarness,
    plugin: ToolHarness,
    calls_per_round: u32,
}

impl Case {
    /// Calls the tool `calls` times through `harness`.
    async fn call(&self, harness: &ToolHarness, calls: u32) {
        for _ in 0..calls {
            let outcome = harness.call(self.tool, self.input.clone()).await;
            assert!(!outcome.result.is_error, "{}", outcome.text());
        }
    }

    /// The median time per call linked and as a plugin, over rounds that alternate the two.
    fn medians(&self, runtime: &tokio::runtime::Runtime) -> (Duration, Duration) {
        const ROUNDS: usize = 15;
        let (mut linked, mut plugin) = (Vec::new(), Vec::new());
        for _ in 0..ROUNDS {
            for (harness, times) in [(&self.linked, &mut linked), (&self.plugin, &mut plugin)] {
                let started = Instant::now();
                runtime.block_on(self.call(harness, self.calls_per_round));
                times.push(started.elapsed() / self.calls_per_round);
            }
        }
        (median(linked), median(plugin))
    }
}

/// The calls measured, in `dir`.
fn cases(dir: &Path) -> [Case; 2] {
    std::fs::write(dir.join("notes.txt"), "one\ntwo\nthree\n").unwrap();
    [
        Case {
            tool: "Read",
            input: json!({"file_path": "notes.txt"}),
            linked: harness(&agentry_file_ops::FileOps::default(), dir),
            plugin: harness(&load(&plugin("file_ops")).unwrap(), dir),
            calls_per_round: 2_000,
        },
        Case {
            tool: "Bash",
            input: json!({"command": "true", "dangerouslyDisableSandbox": true}),
            linked: harness(&agentry_bash::Shell::default(), dir),
            plugin: harness(&load(&plugin("bash")).unwrap(), dir),
            calls_per_round: 40,
        },
    ]
}

/// The host's runtime, as the binary makes it on two cores.
fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// Prints the medians of `case` linked and as a plugin, the difference and the ratio.
fn print_medians(case: &Case, runtime: &tokio::runtime::Runtime, placement: &str) {
    let (linked, plugin) = case.medians(runtime);
    let micros = |d: Duration| d.as_secs_f64() * 1e6;
    println!(
        "{} {placement}, median of rounds of {} calls: linked {:.1} µs, plugin {:.1} µs: {:+.1} µs ({:.2}×)",
        case.tool,
        case.calls_per_round,
        micros(linked),
        micros(plugin),
        micros(plugin) - micros(linked),
        plugin.as_secs_f64() / linked.as_secs_f64()
    );
}

/// Puts every thread of this process, and so every thread they start, on the first CPU.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn pin_to_one_cpu() {
    // SAFETY: a zeroed cpu_set_t is the empty set; both calls get valid pointers to it.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    unsafe { libc::CPU_SET(0, &mut set) };
    for task in std::fs::read_dir("/proc/self/task").unwrap() {
        let tid: libc::pid_t = task.unwrap().file_name().to_str().unwrap().parse().unwrap();
        // SAFETY: as above; a thread that ended meanwhile only makes the call fail.
        unsafe { libc::sched_setaffinity(tid, std::mem::size_of_val(&set), &set) };
    }
}

/// The paired medians, free and then on one CPU (the boundary's own cost).
fn paired(cases: &[Case]) {
    let runtime = runtime();
    for case in cases {
        print_medians(case, &runtime, "free on the cores");
    }
    #[cfg(target_os = "linux")]
    {
        pin_to_one_cpu();
        for case in cases {
            print_medians(case, &runtime, "on one CPU");
        }
    }
}

fn calls(c: &mut Criterion, cases: &[Case]) {
    let runtime = runtime();
    for case in cases {
        let mut group = c.benchmark_group(format!("stock_{}", case.tool.to_lowercase()));
        for (name, harness) in [("linked", &case.linked), ("plugin", &case.plugin)] {
            group.bench_function(name, |b| {
                b.to_async(&runtime).iter(|| case.call(harness, 1))
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

fn main() {
    binaries();
    let dir = tempfile::tempdir().unwrap();
    let cases = cases(dir.path());
    let mut criterion = Criterion::default().configure_from_args();
    calls(&mut criterion, &cases[..]);
    criterion.final_summary();
    // Last: it pins the process to one CPU.
    paired(&cases[..]);
}
