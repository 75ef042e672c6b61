//! An example agentry plugin, as a third party writes one: an ordinary provider with ordinary
//! async tools, made from its own configuration section (`[hello] greeting = "Howdy"`), and one
//! `export_plugin!` line. Build it (`cargo build -p agentry-plugin-hello`) and load
//! `libagentry_plugin_hello.so` with `agentry run --plugin PATH`.

mod count_words;
mod settings;
mod summarize;

pub use count_words::{CountWords, CountWordsInput};
pub use settings::RECIPE;
pub use summarize::{Summarize, SummarizeInput};

use agentry_plugin::provider::{Provider, SimpleProvider};
use agentry_plugin::tool::{
    Tool, ToolCallLocation, ToolContent, ToolContext, ToolError, ToolKind, ToolOutput, ToolProgress,
};
use schemars::JsonSchema;
use serde::Deserialize;
use std::path::Path;
use std::time::Duration;

/// Writes a greeting into a file.
pub struct WriteGreeting {
    /// The word each greeting opens with (`Hello`).
    pub greeting: String,
}

impl Default for WriteGreeting {
    fn default() -> Self {
        Self {
            greeting: "Hello".to_owned(),
        }
    }
}

/// WriteGreeting's input.
#[derive(Deserialize, JsonSchema)]
pub struct GreetingInput {
    /// Who to greet (the name `panic` makes the tool panic, to show that a plugin's panic is
    /// contained).
    pub name: String,
    /// The file to write, relative to the working directory.
    pub file: String,
}

impl Tool for WriteGreeting {
    type Input = GreetingInput;
    type Output = ToolOutput;

    fn name(&self) -> &str {
        "WriteGreeting"
    }
    fn description(&self) -> String {
        "Writes a greeting for someone into a file.".to_owned()
    }
    fn kind(&self) -> ToolKind {
        ToolKind::Edit
    }
    fn title(&self, input: &GreetingInput) -> String {
        format!("Greet {} in {}", input.name, input.file)
    }
    fn locations(&self, input: &GreetingInput, cwd: &Path) -> Vec<ToolCallLocation> {
        vec![ToolCallLocation::line(cwd.join(&input.file), 1)]
    }
    async fn call(&self, input: GreetingInput, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        if input.name == "panic" {
            panic!("asked to panic");
        }
        let path = ctx.resolve_path(&input.file);
        let old_text = std::fs::read_to_string(&path).ok();
        let new_text = format!("{}, {}!\n", self.greeting, input.name);
        std::fs::write(&path, &new_text)
            .map_err(|e| ToolError::failed(format!("cannot write {}: {e}", path.display())))?;
        Ok(ToolOutput {
            content: vec![ToolContent::Diff {
                path: path.clone(),
                old_text,
                new_text,
            }],
            raw_output: None,
            for_model: Some(format!(
                "Wrote a greeting for {} to {}.",
                input.name,
                path.display()
            )),
        })
    }
}

/// Counts slowly (to show progress and cancellation across the plugin boundary).
pub struct SlowCount;

/// SlowCount's input.
#[derive(Deserialize, JsonSchema)]
pub struct CountInput {
    /// How far to count, one number every 100 ms.
    pub to: u32,
}

impl Tool for SlowCount {
    type Input = CountInput;
    type Output = String;

    fn name(&self) -> &str {
        "SlowCount"
    }
    fn description(&self) -> String {
        "Counts slowly to a number, reporting each step.".to_owned()
    }
    fn kind(&self) -> ToolKind {
        ToolKind::Think
    }
    async fn call(&self, input: CountInput, ctx: ToolContext) -> Result<String, ToolError> {
        for n in 1..=input.to {
            tokio::select! {
                () = tokio::time::sleep(Duration::from_millis(100)) => {}
                () = ctx.cancel.cancelled() => return Err(ToolError::Cancelled),
            }
            ctx.progress
                .report(ToolProgress::Content(vec![ToolContent::text(format!(
                    "counted to {n}"
                ))]));
        }
        Ok(format!("Counted to {}.", input.to))
    }
}

/// The provider this plugin exports, greeting with `greeting`.
pub fn provider(greeting: WriteGreeting) -> impl Provider {
    SimpleProvider::new(
        "hello",
        "Greetings, slow counting, word counts and summaries, from a plugin.",
    )
    .with_tool(greeting)
    .with_tool(SlowCount)
    .with_tool(CountWords)
    .with_tool(Summarize)
}

agentry_plugin_abi::export_plugin!(recipe: RECIPE);
