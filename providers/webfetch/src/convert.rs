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
    let html = flattened(html, MAX_NESTING);
    converter
        .convert(&html)
        .unwrap_or_else(|_| html.into_owned())
}

/// Elements that never hold others.
const VOID: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track",
    "wbr",
];

/// `html` with the tags of elements nested deeper than `max` left out (their text kept), read
/// tag by tag without building a tree.
fn flattened(html: &str, max: usize) -> std::borrow::Cow<'_, str> {
    let mut out = String::new();
    let mut copied = 0;
    let mut depth = 0usize;
    let mut at = 0;
    while let Some(offset) = html[at..].find('<') {
        let start = at + offset;
        let rest = &html[start..];
        let end = if rest.starts_with("<!--") {
            rest.find("-->").map_or(html.len(), |e| start + e + 3)
        } else {
            rest.find('>').map_or(html.len(), |e| start + e + 1)
        };
        let tag = &html[start..end];
        let closing = tag.starts_with("</");
        let name: String = tag
            .trim_start_matches(['<', '/'])
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect::<String>()
            .to_ascii_lowercase();
        let element = !name.is_empty()
            && tag
                .as_bytes()
                .get(1)
                .is_some_and(|b| b.is_ascii_alphabetic() || *b == b'/');
        let opens = element && !closing && !tag.ends_with("/>") && !VOID.contains(&name.as_str());
        let deep = if closing && element {
            let deep = depth > max;
            depth = depth.saturating_sub(1);
            deep
        } else if opens {
            depth += 1;
            depth > max
        } else {
            false
        };
        if deep {
            out.push_str(&html[copied..start]);
            copied = end;
        }
        at = end;
    }
    if copied == 0 {
        return std::borrow::Cow::Borrowed(html);
    }
    out.push_str(&html[copied..]);
    std::borrow::Cow::Owned(out)
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
        let shallow = "<p>a <b>b</b><br>c</p><!-- <div> -->";
        assert!(matches!(
            flattened(shallow, 2),
            std::borrow::Cow::Borrowed(_)
        ));
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
