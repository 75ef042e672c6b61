//! agentry's content as MCP content, for the prompts the server gives.

use agentry::tool::ContentBlock;
use rmcp::model::ResourceContents;

/// One of agentry's content blocks as MCP content (for the prompts `agentry mcp serve` gives).
pub(crate) fn mcp_block(content: &ContentBlock) -> rmcp::model::ContentBlock {
    use rmcp::model::ContentBlock as Mcp;
    match content {
        ContentBlock::Text { text } => Mcp::text(text.clone()),
        ContentBlock::Image { data, mime_type } => Mcp::image(data.clone(), mime_type.clone()),
        ContentBlock::Audio { data, mime_type } => Mcp::audio(data.clone(), mime_type.clone()),
        ContentBlock::Resource {
            uri,
            mime_type,
            text,
        } => Mcp::resource(ResourceContents::TextResourceContents {
            uri: uri.clone(),
            mime_type: mime_type.clone(),
            text: text.clone().unwrap_or_default(),
            meta: None,
        }),
        ContentBlock::ResourceLink {
            uri,
            name,
            mime_type,
            description,
        } => {
            let mut link = rmcp::model::Resource::new(uri.clone(), name.clone());
            link.mime_type = mime_type.clone();
            link.description = description.clone();
            Mcp::resource_link(link)
        }
        // Content of a kind newer than this front-end: as the text models read.
        other => Mcp::text(agentry::model::resource_text(other)),
    }
}
