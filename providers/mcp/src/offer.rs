//! [`Offer`]: what a server offers, as it listed it.

/// What a server offers, as last listed: its description, tools and prompts.
#[derive(Default, Clone)]
pub(crate) struct Offer {
    pub(crate) description: String,
    pub(crate) tools: Vec<rmcp::model::Tool>,
    pub(crate) prompts: Vec<rmcp::model::Prompt>,
}
