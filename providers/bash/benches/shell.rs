//! Bash through agentry's executor against the shell spawned directly, in the same run:
//! - `true` through the Bash tool vs `sh -c true` (medians, overhead in ms, ratio), and the
//!   sandbox's cost: the tool sandboxed (the default) vs with `sandbox = "off"`;
//! - a command printing 200 MB through the tool (a PTY, output kept bounded) vs the same command
//!   writing to /dev/null, with the peak RSS of this process after it.
//!
//! Prints its figures; exits non-zero only when it cannot run.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use agentry::testing::ToolHarness;
use agentry_bash::{SandboxMode, SandboxSettings, Shell, ShellConfig};
use serde_json::json;
use std::time::{Duration, Instant};

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// The peak resident set size of this process, in MiB.
fn peak_rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

fn direct(shell: &str, command: &str) -> Duration {
    let started = Instant::now();
    let status = std::process::Command::new(shell)
        .args(["-c", command])
        .status()
        .unwrap();
    assert!(status.success());
    started.elapsed()
}

#[tokio::main]
async fn main() {
    // `cargo bench` passes `--bench`; this binary has no options of its own.
    let dir = tempfile::tempdir().unwrap();
    let harness = ToolHarness::new(&Shell::default(), dir.path()).unwrap();
    let unsandboxed = ToolHarness::new(
        &Shell::new(ShellConfig {
            sandbox: SandboxSettings {
                mode: SandboxMode::Off,
                ..SandboxSettings::default()
            },
            ..ShellConfig::default()
        }),
        dir.path(),
    )
    .unwrap();
    let runs = 30;
    let (mut tool, mut sh, mut bash, mut off) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..3 {
        harness.call("Bash", json!({"command": "true"})).await;
        unsandboxed.call("Bash", json!({"command": "true"})).await;
    }
    for _ in 0..runs {
        let started = Instant::now();
        let outcome = harness.call("Bash", json!({"command": "true"})).await;
        assert!(!outcome.result.is_error, "{}", outcome.text());
        tool.push(started.elapsed());
        let started = Instant::now();
        unsandboxed.call("Bash", json!({"command": "true"})).await;
        off.push(started.elapsed());
        sh.push(direct("sh", "true"));
        bash.push(direct("bash", "true"));
    }
    let (tool, sh, bash, off) = (median(tool), median(sh), median(bash), median(off));
    println!(
        "bash/true: Bash tool median {:.2} ms, `sh -c true` median {:.2} ms, overhead {:.2} ms, ratio {:.2}x ({runs} runs each, alternating)",
        ms(tool),
        ms(sh),
        ms(tool) - ms(sh),
        ms(tool) / ms(sh)
    );
    println!(
        "bash/true: for reference, `bash -c true` (the shell the tool runs) median {:.2} ms: the tool's own overhead over it is {:.2} ms",
        ms(bash),
        ms(tool) - ms(bash)
    );
    println!(
        "bash/sandbox: sandboxed (Landlock + seccomp) median {:.2} ms vs sandbox off {:.2} ms: the sandbox costs {:.2} ms a command, ratio {:.2}x",
        ms(tool),
        ms(off),
        ms(tool) - ms(off),
        ms(tool) / ms(off)
    );

    let big = "head -c 200000000 /dev/zero | tr '\\0' x";
    let rss_before = peak_rss_mib();
    let (mut tool, mut shell) = (Vec::new(), Vec::new());
    for _ in 0..3 {
        let started = Instant::now();
        let outcome = harness.call("Bash", json!({"command": big})).await;
        assert!(
            outcome.text().contains("characters omitted"),
            "{}",
            outcome.text()
        );
        tool.push(started.elapsed());
        shell.push(direct("sh", &format!("{big} > /dev/null")));
    }
    let (tool, shell) = (median(tool), median(shell));
    println!(
        "bash/200MB: Bash tool median {:.0} ms ({:.0} MB/s), direct to /dev/null median {:.0} ms, ratio {:.2}x",
        ms(tool),
        200.0 / tool.as_secs_f64(),
        ms(shell),
        ms(tool) / ms(shell)
    );
    println!(
        "bash/200MB: peak RSS of the process {:.1} MiB (before the 200 MB runs: {:.1} MiB; bound: 64 MiB)",
        peak_rss_mib(),
        rss_before
    );
}
