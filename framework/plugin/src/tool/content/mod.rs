//! What a tool call shows: ACP's three content kinds, follow-along locations and the tool's output.

mod cut;
mod decode;

pub use cut::cut_for_model;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::PathBuf;

/// A piece of content inside a tool call: regular content, a diff, or a terminal.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ToolContent {
    /// A regular content block (text, image, resource).
    Content {
        /// The block.
        content: ContentBlock,
    },
    /// A file modification.
    Diff {
        /// Absolute path of the file.
        path: PathBuf,
        /// The content before the change; `None` for a new file.
        #[serde(rename = "oldText")]
        old_text: Option<String>,
        /// The content after the change.
        #[serde(rename = "newText")]
        new_text: String,
    },
    /// Live output of a terminal the front-end can show.
    Terminal {
        /// The terminal's id.
        #[serde(rename = "terminalId")]
        terminal_id: String,
    },
}

impl ToolContent {
    /// Plain text content.
    pub fn text(text: impl Into<String>) -> Self {
        ToolContent::Content {
            content: ContentBlock::Text { text: text.into() },
        }
    }

    /// The text this content contributes to what the model reads, if any.
    pub fn model_text(&self) -> Option<&str> {
        match self {
            ToolContent::Content {
                content: ContentBlock::Text { text },
            } => Some(text),
            ToolContent::Content {
                content: ContentBlock::Resource { text, .. },
            } => text.as_deref(),
            _ => None,
        }
    }
}

/// A content block, shaped like ACP's and MCP's `ContentBlock`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ContentBlock {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// An image, base64-encoded.
    Image {
        /// Base64 data.
        data: String,
        /// The MIME type (`image/png`, …).
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    /// Audio, base64-encoded.
    Audio {
        /// Base64 data.
        data: String,
        /// The MIME type (`audio/wav`, …).
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    /// A link to a resource the client can fetch itself.
    ResourceLink {
        /// The resource's URI.
        uri: String,
        /// Its name.
        name: String,
        /// The MIME type, when known.
        #[serde(rename = "mimeType", skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// What it is, when said.
        #[serde(skip_serializing_if = "Option::is_none")]
        description: Option<String>,
    },
    /// An embedded resource.
    Resource {
        /// The resource's URI.
        uri: String,
        /// The MIME type, when known.
        #[serde(rename = "mimeType", skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// The text of a text resource.
        #[serde(skip_serializing_if = "Option::is_none")]
        text: Option<String>,
    },
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        ContentBlock::Text { text: text.into() }
    }
}

/// The MIME type of an image file models accept (PNG, JPEG, GIF, WebP), by its extension;
/// `None` for anything else.
pub fn image_mime_type(path: &std::path::Path) -> Option<&'static str> {
    let extension = path.extension()?.to_str()?.to_ascii_lowercase();
    Some(match extension.as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        _ => return None,
    })
}

/// A file location a tool call touches, for "follow the agent" in editors.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCallLocation {
    /// Absolute path of the file.
    pub path: PathBuf,
    /// The line, 1-based, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
}

impl ToolCallLocation {
    /// A location at a path, with no line.
    pub fn path(path: impl Into<PathBuf>) -> Self {
        Self {
            path: path.into(),
            line: None,
        }
    }

    /// A location at a line of a path.
    pub fn line(path: impl Into<PathBuf>, line: u32) -> Self {
        Self {
            path: path.into(),
            line: Some(line),
        }
    }
}

/// What a finished tool call produced: content for front-ends and the model, and the raw output.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolOutput {
    /// Content shown to the user; its text parts are also what the model reads, unless
    /// [`ToolOutput::for_model`] says otherwise.
    pub content: Vec<ToolContent>,
    /// The tool's raw output, for clients that show it and for scripts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_output: Option<Value>,
    /// The text the model reads, when it differs from the content (a diff's summary, say).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub for_model: Option<String>,
}

impl ToolOutput {
    /// Output that is a single text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            content: vec![ToolContent::text(text)],
            ..Self::default()
        }
    }

    /// Output whose raw form is a JSON value, shown to the user and the model as pretty JSON.
    pub fn json(value: Value) -> Self {
        let text = serde_json::to_string_pretty(&value).unwrap_or_else(|_| value.to_string());
        Self {
            content: vec![ToolContent::text(text)],
            raw_output: Some(value),
            for_model: None,
        }
    }

    /// Replaces the text the model reads.
    pub fn with_model_text(mut self, text: impl Into<String>) -> Self {
        self.for_model = Some(text.into());
        self
    }

    /// Sets the raw output.
    pub fn with_raw_output(mut self, raw: Value) -> Self {
        self.raw_output = Some(raw);
        self
    }

    /// The text the model reads for this output.
    pub fn model_text(&self) -> String {
        match &self.for_model {
            Some(text) => text.clone(),
            None => self
                .content
                .iter()
                .filter_map(ToolContent::model_text)
                .collect::<Vec<_>>()
                .join("\n"),
        }
    }
}

/// Converts what a typed tool returns into a [`ToolOutput`].
pub trait IntoToolOutput {
    /// The conversion.
    fn into_tool_output(self) -> ToolOutput;
}

impl IntoToolOutput for ToolOutput {
    fn into_tool_output(self) -> ToolOutput {
        self
    }
}

impl IntoToolOutput for String {
    fn into_tool_output(self) -> ToolOutput {
        ToolOutput::text(self)
    }
}

impl IntoToolOutput for Value {
    fn into_tool_output(self) -> ToolOutput {
        ToolOutput::json(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn content_serialises_with_acp_field_names() {
        let diff = ToolContent::Diff {
            path: "/p/a.txt".into(),
            old_text: None,
            new_text: "x".into(),
        };
        assert_eq!(
            serde_json::to_value(&diff).unwrap(),
            json!({"type": "diff", "path": "/p/a.txt", "oldText": null, "newText": "x"})
        );
        let terminal = ToolContent::Terminal {
            terminal_id: "t1".into(),
        };
        assert_eq!(
            serde_json::to_value(&terminal).unwrap(),
            json!({"type": "terminal", "terminalId": "t1"})
        );
        assert_eq!(
            serde_json::to_value(ToolContent::text("hi")).unwrap(),
            json!({"type": "content", "content": {"type": "text", "text": "hi"}})
        );
    }

    #[test]
    fn model_text_joins_text_parts_unless_overridden() {
        let mut output = ToolOutput::text("one");
        output.content.push(ToolContent::Terminal {
            terminal_id: "t".into(),
        });
        output.content.push(ToolContent::text("two"));
        assert_eq!(output.model_text(), "one\ntwo");
        assert_eq!(output.with_model_text("short").model_text(), "short");
    }
}
