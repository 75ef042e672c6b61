//! Reading [`ToolContent`] and [`ContentBlock`] in one pass. serde's derived reader of a
//! `type`-tagged enum first copies the whole value into a buffer to find the tag, then reads the
//! variant from the copy (twice over for a block inside a content item); a tool's output crosses
//! the plugin boundary as JSON on every call, so these read every field any variant has straight
//! from the input and then check the variant's own. The JSON read is the JSON written.

use super::{ContentBlock, ToolContent};
use serde::de::Error;
use serde::{Deserialize, Deserializer};
use std::path::PathBuf;

/// The value of a required field, or serde's "missing field" error.
fn required<T, E: Error>(value: Option<T>, field: &'static str) -> Result<T, E> {
    value.ok_or_else(|| E::missing_field(field))
}

/// The `type`s of [`ToolContent`].
#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum ContentKind {
    Content,
    Diff,
    Terminal,
}

/// Every field of every [`ToolContent`] variant.
#[derive(Deserialize)]
struct ContentFields {
    #[serde(rename = "type")]
    kind: ContentKind,
    content: Option<ContentBlock>,
    path: Option<PathBuf>,
    #[serde(rename = "oldText")]
    old_text: Option<String>,
    #[serde(rename = "newText")]
    new_text: Option<String>,
    #[serde(rename = "terminalId")]
    terminal_id: Option<String>,
}

impl<'de> Deserialize<'de> for ToolContent {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let fields = ContentFields::deserialize(deserializer)?;
        Ok(match fields.kind {
            ContentKind::Content => ToolContent::Content {
                content: required(fields.content, "content")?,
            },
            ContentKind::Diff => ToolContent::Diff {
                path: required(fields.path, "path")?,
                old_text: fields.old_text,
                new_text: required(fields.new_text, "newText")?,
            },
            ContentKind::Terminal => ToolContent::Terminal {
                terminal_id: required(fields.terminal_id, "terminalId")?,
            },
        })
    }
}

/// The `type`s of [`ContentBlock`].
#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum BlockKind {
    Text,
    Image,
    Audio,
    ResourceLink,
    Resource,
}

/// Every field of every [`ContentBlock`] variant.
#[derive(Deserialize)]
struct BlockFields {
    #[serde(rename = "type")]
    kind: BlockKind,
    text: Option<String>,
    data: Option<String>,
    #[serde(rename = "mimeType")]
    mime_type: Option<String>,
    uri: Option<String>,
    name: Option<String>,
    description: Option<String>,
}

impl<'de> Deserialize<'de> for ContentBlock {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let fields = BlockFields::deserialize(deserializer)?;
        Ok(match fields.kind {
            BlockKind::Text => ContentBlock::Text {
                text: required(fields.text, "text")?,
            },
            BlockKind::Image => ContentBlock::Image {
                data: required(fields.data, "data")?,
                mime_type: required(fields.mime_type, "mimeType")?,
            },
            BlockKind::Audio => ContentBlock::Audio {
                data: required(fields.data, "data")?,
                mime_type: required(fields.mime_type, "mimeType")?,
            },
            BlockKind::ResourceLink => ContentBlock::ResourceLink {
                uri: required(fields.uri, "uri")?,
                name: required(fields.name, "name")?,
                mime_type: fields.mime_type,
                description: fields.description,
            },
            BlockKind::Resource => ContentBlock::Resource {
                uri: required(fields.uri, "uri")?,
                mime_type: fields.mime_type,
                text: fields.text,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// One of each variant, with and without its optional fields.
    fn every_kind() -> Vec<ToolContent> {
        let blocks = [
            ContentBlock::text("a \"quoted\" line\n"),
            ContentBlock::Image {
                data: "iVBOR".into(),
                mime_type: "image/png".into(),
            },
            ContentBlock::Audio {
                data: "UklG".into(),
                mime_type: "audio/wav".into(),
            },
            ContentBlock::ResourceLink {
                uri: "file:///a".into(),
                name: "a".into(),
                mime_type: None,
                description: Some("the a".into()),
            },
            ContentBlock::Resource {
                uri: "file:///b".into(),
                mime_type: Some("text/plain".into()),
                text: None,
            },
        ];
        let mut every: Vec<ToolContent> = blocks
            .into_iter()
            .map(|content| ToolContent::Content { content })
            .collect();
        every.push(ToolContent::Diff {
            path: "/p/a.txt".into(),
            old_text: None,
            new_text: "x".into(),
        });
        every.push(ToolContent::Diff {
            path: "/p/b.txt".into(),
            old_text: Some("w".into()),
            new_text: "x".into(),
        });
        every.push(ToolContent::Terminal {
            terminal_id: "t1".into(),
        });
        every
    }

    #[test]
    fn what_is_written_reads_back_the_same() {
        for content in every_kind() {
            let json = serde_json::to_string(&content).unwrap();
            assert_eq!(
                serde_json::from_str::<ToolContent>(&json).unwrap(),
                content,
                "{json}"
            );
        }
    }

    #[test]
    fn the_tag_may_come_anywhere_and_unknown_fields_are_ignored() {
        let content: ToolContent = serde_json::from_value(json!({
            "newText": "x", "path": "/p", "extra": [1, 2], "type": "diff"
        }))
        .unwrap();
        assert_eq!(
            content,
            ToolContent::Diff {
                path: "/p".into(),
                old_text: None,
                new_text: "x".into()
            }
        );
    }

    #[test]
    fn a_missing_field_or_an_unknown_type_is_an_error_that_names_it() {
        let missing = serde_json::from_value::<ToolContent>(json!({"type": "terminal"}));
        assert!(
            missing.unwrap_err().to_string().contains("terminalId"),
            "the error names the field"
        );
        let block = serde_json::from_value::<ContentBlock>(json!({"type": "image", "data": "x"}));
        assert!(block.unwrap_err().to_string().contains("mimeType"));
        let unknown = serde_json::from_value::<ContentBlock>(json!({"type": "video", "data": "x"}));
        assert!(unknown.unwrap_err().to_string().contains("video"));
        let untagged = serde_json::from_value::<ContentBlock>(json!({"text": "x"}));
        assert!(untagged.unwrap_err().to_string().contains("type"));
    }
}
