//! An MCP tool result as a tool call's output: every content kind kept for the user, and the
//! text the model reads.

use agentry::model::resource_text;
use agentry::tool::{ContentBlock, ToolContent, ToolContext, ToolError, ToolOutput, cut_for_model};
use rmcp::model::{CallToolResult, ResourceContents};

/// The most characters of a result the model reads at once; the whole is kept in the session's
/// temporary folder for it to read in parts.
const MAX_RESULT_CHARS: usize = 50_000;

/// The output of a finished call; `isError` makes it a failed call whose message is the
/// server's text.
pub(crate) fn tool_output(
    result: CallToolResult,
    ctx: &ToolContext,
) -> Result<ToolOutput, ToolError> {
    let blocks: Vec<ContentBlock> = result.content.into_iter().map(block).collect();
    let mut for_model: Vec<String> = blocks.iter().map(resource_text).collect();
    if let Some(structured) = &result.structured_content
        && for_model.is_empty()
    {
        for_model.push(structured.to_string());
    }
    let output = ToolOutput {
        content: blocks
            .into_iter()
            .map(|content| ToolContent::Content { content })
            .collect(),
        raw_output: result.structured_content,
        for_model: Some(bounded(for_model.join("\n"), ctx)),
    };
    if result.is_error == Some(true) {
        let message = output
            .for_model
            .clone()
            .filter(|text| !text.is_empty())
            .unwrap_or_else(|| "the tool reported an error without saying why".to_owned());
        return Err(ToolError::Failed {
            message,
            output: Some(output),
        });
    }
    Ok(output)
}

/// A result's text as the model reads it: whole up to [`MAX_RESULT_CHARS`], else its head and
/// tail, the whole kept in a file of the session's temporary folder (the user's alone).
fn bounded(text: String, ctx: &ToolContext) -> String {
    if text.chars().count() <= MAX_RESULT_CHARS {
        return text;
    }
    let saved = ctx.state.temp_dir().ok().and_then(|folder| {
        let file = folder.join(format!("{}.result.txt", ctx.tool_call_id));
        let written = agentry_plugin::private::file_options()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&file)
            .and_then(|mut out| std::io::Write::write_all(&mut out, text.as_bytes()));
        written.ok().map(|()| file)
    });
    cut_for_model(&text, "", MAX_RESULT_CHARS, 0, saved.as_deref())
}

/// One MCP content block as agentry's.
pub(crate) fn block(content: rmcp::model::ContentBlock) -> ContentBlock {
    use rmcp::model::ContentBlock as Mcp;
    match content {
        Mcp::Text(text) => ContentBlock::Text { text: text.text },
        Mcp::Image(image) => ContentBlock::Image {
            data: image.data,
            mime_type: image.mime_type,
        },
        Mcp::Audio(audio) => ContentBlock::Audio {
            data: audio.data,
            mime_type: audio.mime_type,
        },
        Mcp::ResourceLink(link) => ContentBlock::ResourceLink {
            uri: link.uri,
            name: link.name,
            mime_type: link.mime_type,
            description: link.description,
        },
        Mcp::Resource(embedded) => match embedded.resource {
            ResourceContents::TextResourceContents {
                uri,
                mime_type,
                text,
                ..
            } => ContentBlock::Resource {
                uri,
                mime_type,
                text: Some(text),
            },
            ResourceContents::BlobResourceContents { uri, mime_type, .. } => {
                ContentBlock::Resource {
                    uri,
                    mime_type,
                    text: None,
                }
            }
            newer => unknown_kind(&newer),
        },
        newer => unknown_kind(&newer),
    }
}

/// A content kind newer than this client, shown as its JSON rather than lost.
fn unknown_kind(content: &impl serde::Serialize) -> ContentBlock {
    ContentBlock::Text {
        text: serde_json::to_string(content).unwrap_or_default(),
    }
}
