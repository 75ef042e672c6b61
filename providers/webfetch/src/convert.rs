//! A fetched body as text the model can read: HTML as Markdown (scripts, styles and navigation
//! chrome dropped), JSON pretty-printed, plain text as it is; other types are refused.

use crate::fetch::Page;
use std::sync::OnceLock;

/// Elements whose content is not the page's: code, styling, navigation and form chrome.
const DROPPED: &[&str] = &[
    "script", "style", "noscript", "template", "head", "nav", "header", "footer", "aside",
    "iframe", "svg", "canvas", "form", "button", "select", "input", "textarea", "dialog",
];

/// Why a body is not readable.
#[derive(Debug, thiserror::Error)]
#[error("{url} is {content_type}, which WebFetch does not read (it reads HTML, JSON and text)")]
pub struct Unreadable {
    /// The page.
    pub url: String,
    /// Its type.
    pub content_type: String,
}

/// What kind of text a page holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// HTML, read as Markdown.
    Html,
    /// JSON.
    Json,
    /// Any other text.
    Text,
}

/// The kind of text `page` holds, from its `Content-Type` (or its first bytes when it has none).
pub fn kind(page: &Page) -> Result<Kind, Unreadable> {
    let essence = page
        .content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    let kind = match essence.as_str() {
        "text/html" | "application/xhtml+xml" => Kind::Html,
        "application/json" => Kind::Json,
        e if e.ends_with("+json") => Kind::Json,
        e if e.starts_with("text/") => Kind::Text,
        "application/xml"
        | "application/javascript"
        | "application/x-javascript"
        | "application/ecmascript"
        | "application/x-yaml"
        | "application/yaml"
        | "application/toml" => Kind::Text,
        e if e.ends_with("+xml") => Kind::Text,
        "" if std::str::from_utf8(&page.body).is_ok() => {
            let start = String::from_utf8_lossy(&page.body[..page.body.len().min(512)])
                .trim_start()
                .to_ascii_lowercase();
            if start.starts_with("<!doctype html") || start.starts_with("<html") {
                Kind::Html
            } else {
                Kind::Text
            }
        }
        _ => {
            return Err(Unreadable {
                url: page.url.to_string(),
                content_type: if essence.is_empty() {
                    "binary content with no Content-Type".to_owned()
                } else {
                    essence
                },
            });
        }
    };
    Ok(kind)
}

/// The page's body as text, decoded from the charset its `Content-Type` names (UTF-8 when it
/// names none, or one `encoding_rs` does not know).
pub fn decoded(page: &Page) -> std::borrow::Cow<'_, str> {
    let charset = page
        .content_type
        .split(';')
        .skip(1)
        .filter_map(|param| param.split_once('='))
        .find(|(name, _)| name.trim().eq_ignore_ascii_case("charset"))
        .map(|(_, value)| value.trim().trim_matches('"'));
    let encoding = charset
        .and_then(|label| encoding_rs::Encoding::for_label(label.as_bytes()))
        .unwrap_or(encoding_rs::UTF_8);
    encoding.decode(&page.body).0
}

/// How deep elements may nest before the ones inside are read as plain text: the converter
/// follows the tree by recursion, and a page of ten thousand nested `<div>`s would overflow it.
const MAX_NESTING: usize = 128;

/// The page as readable text.
pub fn readable(page: &Page) -> Result<String, Unreadable> {
    let text = decoded(page);
    Ok(match kind(page)? {
        Kind::Html => html_to_markdown(&text),
        Kind::Json => pretty_json(&text).unwrap_or_else(|| text.into_owned()),
        Kind::Text => text.into_owned(),
    })
}

/// JSON pretty-printed, unless that would not be JSON or would take more than twice its size
/// (deep nesting indents every line): then `None`, and it is read as it came.
fn pretty_json(text: &str) -> Option<String> {
    let value = serde_json::from_str::<serde_json::Value>(text).ok()?;
    let mut out = Bounded {
        bytes: Vec::new(),
        max: 2 * text.len() + 64 * 1024,
    };
    serde_json::to_writer_pretty(&mut out, &value).ok()?;
    String::from_utf8(out.bytes).ok()
}

/// A buffer that refuses to grow past `max` bytes.
struct Bounded {
    bytes: Vec<u8>,
    max: usize,
}

impl std::io::Write for Bounded {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        if self.bytes.len() + bytes.len() > self.max {
            return Err(std::io::Error::other("too long"));
        }
        self.bytes.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// HTML as Markdown, without scripts, styles or navigation chrome.
pub fn html_to_markdown(html: &str) -> String {
    static CONVERTER: OnceLock<htmd::HtmlToMarkdown> = OnceLock::new();
    let converter = CONVERTER.get_or_init(|| {
        htmd::HtmlToMarkdown::builder()
            .skip_tags(DROPPED.to_vec())
            .build()
    });
    let html = agentry_plugin::html_nesting::flattened(html, MAX_NESTING);
    converter
        .convert(&html)
        .unwrap_or_else(|_| html.into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deeply_nested_pages_convert_and_keep_their_text() {
        let deep = "<div>".repeat(10_000) + "deep words" + &"</div>".repeat(10_000);
        let list = "<ul><li>".repeat(10_000) + "listed" + &"</li></ul>".repeat(10_000);
        for page in [deep, list] {
            let converted = std::thread::Builder::new()
                .stack_size(2 * 1024 * 1024)
                .spawn(move || html_to_markdown(&page))
                .unwrap()
                .join()
                .expect("the conversion overflowed a 2 MiB stack");
            assert!(converted.contains("deep words") || converted.contains("listed"));
        }
    }

    #[test]
    fn deeply_nested_json_is_read_as_it_came_rather_than_indented_without_end() {
        let nested = "[".repeat(120) + &"1,".repeat(100_000) + "1" + &"]".repeat(120);
        assert_eq!(pretty_json(&nested), None);
        assert_eq!(
            pretty_json("{\"a\":1}").as_deref(),
            Some("{\n  \"a\": 1\n}")
        );
    }
}
