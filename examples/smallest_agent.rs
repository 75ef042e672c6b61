//! The smallest agent: a hosted model, no tools, one question (`OPENAI_API_KEY` from the
//! environment; `OPENAI_BASE_URL` for a compatible server).
use agentry::prelude::*;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let model = agentry_models::open("openai/gpt-4.1-mini")?;
    let agent = Agent::builder(model).build()?;
    let mut session = agent.new_session(SessionOptions::new(std::env::current_dir()?))?;
    let summary = session.prompt("Say hello in French.").await?;
    println!("{}", summary.answer());
    Ok(())
}
