//! The prompts `agentry mcp serve` offers: the prompt templates of its folders, listed a page
//! at a time and filled in on `prompts/get`.

use crate::content::mcp_block;
use agentry_stock::templates::{PromptTemplate, TemplateError, TemplateFolder, load_templates};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rmcp::ErrorData;
use rmcp::model::{
    GetPromptResult, ListPromptsResult, Prompt, PromptArgument, PromptMessage, Role,
};
use serde_json::Value;
use std::collections::BTreeMap;

/// The template folders, read afresh on every request (edits count at once).
#[derive(Debug, Clone)]
pub(crate) struct Catalog {
    folders: Vec<TemplateFolder>,
    page_size: usize,
}

impl Catalog {
    pub(crate) fn new(folders: Vec<TemplateFolder>, page_size: usize) -> Self {
        Self {
            folders,
            page_size: page_size.max(1),
        }
    }

    /// The folders, in order (a later folder's template replaces an earlier one's).
    pub(crate) fn folders(&self) -> &[TemplateFolder] {
        &self.folders
    }

    /// Every template that loads, sorted by name; unusable files are logged.
    pub(crate) fn templates(&self) -> Vec<PromptTemplate> {
        let (templates, problems) = load_templates(&self.folders);
        for problem in problems {
            tracing::warn!("prompt template left out: {problem}");
        }
        templates
    }

    /// One page of prompts: those after the cursor's, and a cursor for the next page when
    /// there are more.
    pub(crate) fn list(&self, cursor: Option<&str>) -> Result<ListPromptsResult, ErrorData> {
        let after = cursor.map(decode_cursor).transpose()?;
        let templates = self.templates();
        let start = match &after {
            Some(last) => templates.partition_point(|t| &t.name <= last),
            None => 0,
        };
        let page: Vec<&PromptTemplate> = templates[start..].iter().take(self.page_size).collect();
        let next_cursor = (start + page.len() < templates.len())
            .then(|| page.last().map(|t| encode_cursor(&t.name)))
            .flatten();
        let mut result = ListPromptsResult::with_all_items(page.into_iter().map(prompt).collect());
        result.next_cursor = next_cursor;
        Ok(result)
    }

    /// The prompt `name` with `arguments` filled in: -32602 for an unknown prompt, a missing
    /// required argument or an unknown one; -32603 when the template cannot be read.
    pub(crate) fn get(
        &self,
        name: &str,
        arguments: Option<&serde_json::Map<String, Value>>,
    ) -> Result<GetPromptResult, ErrorData> {
        let template = self
            .templates()
            .into_iter()
            .find(|t| t.name == name)
            .ok_or_else(|| {
                ErrorData::invalid_params(format!("there is no prompt named `{name}`"), None)
            })?;
        // Read again: the file may have changed or gone since it was listed.
        let template = template
            .reload()
            .map_err(|e| ErrorData::internal_error(format!("cannot read the prompt: {e}"), None))?;
        let values = argument_values(name, arguments)?;
        let content = template.render_content(&values).map_err(|e| match e {
            TemplateError::MissingArgument { .. } | TemplateError::UnknownArgument { .. } => {
                ErrorData::invalid_params(e.to_string(), None)
            }
            TemplateError::Unreadable { .. } | TemplateError::Invalid { .. } => {
                ErrorData::internal_error(format!("cannot read the prompt: {e}"), None)
            }
        })?;
        let messages = content
            .iter()
            .map(|block| PromptMessage::new(Role::User, mcp_block(block)))
            .collect();
        let result = GetPromptResult::new(messages);
        Ok(match template.description {
            Some(description) => result.with_description(description),
            None => result,
        })
    }
}

/// A template as an MCP prompt.
fn prompt(template: &PromptTemplate) -> Prompt {
    let arguments: Vec<PromptArgument> = template
        .arguments
        .iter()
        .map(|argument| {
            let mut mcp = PromptArgument::new(argument.name.clone());
            mcp.description = argument.description.clone();
            mcp.required = Some(argument.required);
            mcp
        })
        .collect();
    Prompt::new(
        template.name.clone(),
        template.description.clone(),
        (!arguments.is_empty()).then_some(arguments),
    )
}

/// The arguments as text; a value that is not a string is refused.
fn argument_values(
    prompt: &str,
    arguments: Option<&serde_json::Map<String, Value>>,
) -> Result<BTreeMap<String, String>, ErrorData> {
    arguments
        .into_iter()
        .flatten()
        .map(|(name, value)| match value {
            Value::String(text) => Ok((name.clone(), text.clone())),
            other => Err(ErrorData::invalid_params(
                format!("the `{name}` argument of `{prompt}` must be a string, not {other}"),
                None,
            )),
        })
        .collect()
}

/// A cursor: the name of the last prompt of the page before, in an opaque form.
fn encode_cursor(last: &str) -> String {
    URL_SAFE_NO_PAD.encode(format!("after:{last}"))
}

fn decode_cursor(cursor: &str) -> Result<String, ErrorData> {
    URL_SAFE_NO_PAD
        .decode(cursor)
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .and_then(|text| text.strip_prefix("after:").map(str::to_owned))
        .ok_or_else(|| {
            ErrorData::invalid_params(format!("`{cursor}` is not a cursor this server gave"), None)
        })
}
