//! Runs one Glob or Grep call through agentry's executor and prints what the model would read.
//! The benchmark script (`scripts/bench-tools`) times it against `rg` on the same tree.
//!
//! ```text
//! search grep PATTERN DIR [content|files_with_matches|count] [-i]
//! search glob PATTERN DIR
//! ```

use agentry::testing::ToolHarness;
use agentry_file_ops::FileOps;
use serde_json::json;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: search grep PATTERN DIR [MODE] [-i] | search glob PATTERN DIR";
    let (tool, pattern, dir) = match args.as_slice() {
        [tool, pattern, dir, ..] => (tool.as_str(), pattern.clone(), dir.clone()),
        _ => anyhow::bail!(usage),
    };
    let harness = ToolHarness::new(&FileOps::default(), &dir)?;
    let input = match tool {
        "grep" => json!({
            "pattern": pattern,
            "path": dir,
            "output_mode": args.get(3).filter(|m| !m.starts_with('-')).map_or("files_with_matches", String::as_str),
            "-i": args.iter().any(|a| a == "-i"),
        }),
        "glob" => json!({"pattern": pattern, "path": dir}),
        _ => anyhow::bail!(usage),
    };
    let outcome = harness
        .call(if tool == "grep" { "Grep" } else { "Glob" }, input)
        .await;
    println!("{}", outcome.text());
    anyhow::ensure!(!outcome.result.is_error, "the call failed");
    Ok(())
}
