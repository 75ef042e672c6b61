//! A custom agent in under 50 lines, on the framework without its optional parts: a tool, a
//! scripted model (to run offline), an in-memory store, events.
use agentry::model::scripted::{ScriptedModel, ScriptedResponse};
use agentry::prelude::*;
use std::sync::Arc;
/// Counts the words of a text.
struct WordCount;
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct WordCountInput {
    /// The text whose words to count.
    text: String,
}
impl Tool for WordCount {
    type Input = WordCountInput;
    type Output = String;
    fn name(&self) -> &str {
        "WordCount"
    }
    fn description(&self) -> String {
        "Counts the words of a text.".into()
    }
    fn kind(&self) -> ToolKind {
        ToolKind::Think
    }
    async fn call(&self, input: WordCountInput, _: ToolContext) -> Result<String, ToolError> {
        Ok(input.text.split_whitespace().count().to_string())
    }
}
#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let model = ScriptedModel::new([
        ScriptedResponse::tool_call("WordCount", serde_json::json!({"text": "one two three"})),
        ScriptedResponse::text("Your text has 3 words."),
    ]);
    let tools = SimpleProvider::new("words", "Text tools.").with_tool(WordCount);
    let store = Arc::new(MemoryStore::new());
    let agent = Agent::builder(Arc::new(model)).store(store);
    let agent = agent.provider(tools).build()?;
    let mut session = agent.new_session(SessionOptions::new(std::env::current_dir()?))?;
    let io = ChatIo::new(|event: AgentEvent| {
        if let AgentEvent::ToolCall(call) = event {
            println!("tool: {} ({})", call.title, call.kind);
        }
    });
    let prompt = vec![ContentBlock::text("How many words are in 'one two three'?")];
    let summary = session
        .prompt_with(prompt, &ChatOptions::default(), &io)
        .await?;
    println!("{} ({})", summary.answer(), summary.stop_reason);
    Ok(())
}
