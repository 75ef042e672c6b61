//! Read of a PDF: the text of the asked pages (`pages: "1-5,8"`, at most 20 a call), and each page
//! rendered as an image for models that take images. Text comes from `pdf-extract`, pictures
//! from `hayro` (both pure Rust).

use agentry_plugin::tool::ContentBlock;
use agentry_plugin::tool::{ToolContent, ToolError, ToolOutput};
use base64::Engine as _;
use std::fmt::Write as _;
use std::path::Path;

/// The most pages one Read returns.
pub const MAX_PAGES: usize = 20;
/// A PDF longer than this needs `pages`.
const WHOLE_DOCUMENT_PAGES: usize = 10;
/// The longest side of a page image, in pixels (what vision models take without scaling down).
const MAX_IMAGE_SIDE: f32 = 1568.0;
/// The largest PDF Read opens.
const MAX_PDF_BYTES: u64 = 100 * 1024 * 1024;

/// How a PDF is read.
#[derive(Debug, Clone, Copy)]
pub struct PdfReading<'a> {
    /// The pages asked for, as the model wrote them.
    pub pages: Option<&'a str>,
    /// Whether pages come as images too.
    pub images: bool,
}

/// Reads the PDF at `path` from `file`, opened there.
pub fn read_pdf(
    path: &Path,
    mut file: std::fs::File,
    len: u64,
    how: PdfReading<'_>,
) -> Result<ToolOutput, ToolError> {
    if len > MAX_PDF_BYTES {
        return Err(ToolError::failed(format!(
            "{} is a {} MB PDF, more than the {} MB Read opens.",
            path.display(),
            len / (1024 * 1024),
            MAX_PDF_BYTES / (1024 * 1024)
        )));
    }
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut file, &mut bytes)
        .map_err(|e| ToolError::failed(format!("cannot read {}: {e}", path.display())))?;
    let unreadable = |e: &dyn std::fmt::Display| {
        ToolError::failed(format!("cannot read the PDF {}: {e}", path.display()))
    };
    let mut document = pdf_extract::Document::load_mem(&bytes).map_err(|e| unreadable(&e))?;
    if document.is_encrypted() {
        document.decrypt("").map_err(|_| {
            ToolError::failed(format!(
                "{} is a password-protected PDF, which Read cannot open.",
                path.display()
            ))
        })?;
    }
    let count = document.get_pages().len();
    let pages = match how.pages {
        Some(spec) => page_numbers(spec, count).map_err(ToolError::InvalidInput)?,
        None if count > WHOLE_DOCUMENT_PAGES => {
            return Err(ToolError::failed(format!(
                "{} has {count} pages: read it in parts with `pages` (at most {MAX_PAGES} a call, \
                 like \"1-{MAX_PAGES}\").",
                path.display()
            )));
        }
        None => (1..=count).collect(),
    };
    let mut text = format!("PDF {} ({count} pages)\n", path.display());
    for &page in &pages {
        let _ = write!(text, "\n--- Page {page} ---\n");
        match page_text(&document, page) {
            Ok(page_text) if page_text.trim().is_empty() => {
                text.push_str("(no text on this page: it may be a scan; see its image)\n");
            }
            Ok(page_text) => {
                text.push_str(page_text.trim_matches('\n'));
                text.push('\n');
            }
            Err(e) => {
                let _ = writeln!(text, "(its text could not be read: {e})");
            }
        }
    }
    let mut content = vec![ToolContent::text(text)];
    if how.images {
        content.extend(page_images(bytes, &pages)?);
    }
    Ok(ToolOutput {
        content,
        raw_output: Some(serde_json::json!({
            "path": path,
            "page_count": count,
            "pages": pages,
        })),
        for_model: None,
    })
}

/// One page's text.
fn page_text(document: &pdf_extract::Document, page: usize) -> Result<String, String> {
    let mut text = String::new();
    let mut output = pdf_extract::PlainTextOutput::new(&mut text);
    let number = u32::try_from(page).map_err(|e| e.to_string())?;
    // The extractor panics on some malformed pages: that page's text is lost, not the call.
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        pdf_extract::output_doc_page(document, &mut output, number)
    }))
    .map_err(|_| "the text extractor failed on this page".to_owned())?
    .map_err(|e| e.to_string())?;
    Ok(text)
}

/// The pages rendered as PNG images.
fn page_images(bytes: Vec<u8>, pages: &[usize]) -> Result<Vec<ToolContent>, ToolError> {
    use hayro::hayro_interpret::InterpreterSettings;
    use hayro::vello_cpu::color::palette::css::WHITE;
    let pdf = hayro::hayro_syntax::Pdf::new(bytes)
        .map_err(|e| ToolError::failed(format!("cannot render the PDF: {e:?}")))?;
    let cache = hayro::RenderCache::new();
    let mut images = Vec::with_capacity(pages.len());
    for &number in pages {
        let Some(page) = pdf.pages().get(number - 1) else {
            continue;
        };
        let (width, height) = page.render_dimensions();
        let scale = (MAX_IMAGE_SIDE / width.max(height).max(1.0)).min(2.0);
        let pixmap = hayro::render(
            page,
            &cache,
            &InterpreterSettings::default(),
            &hayro::RenderSettings::default(),
            &hayro::PixmapSettings {
                x_scale: scale,
                y_scale: scale,
                bg_color: WHITE,
            },
        );
        let png = pixmap
            .into_png()
            .map_err(|e| ToolError::failed(format!("cannot encode page {number}: {e}")))?;
        images.push(ToolContent::Content {
            content: ContentBlock::Image {
                data: base64::engine::general_purpose::STANDARD.encode(png),
                mime_type: "image/png".to_owned(),
            },
        });
    }
    Ok(images)
}

/// The page numbers a `pages` value names (`"3"`, `"1-5"`, `"1-3, 7, 10-12"`), in order, each
/// once; an error (for the model) when they are malformed, out of range or too many.
pub fn page_numbers(spec: &str, count: usize) -> Result<Vec<usize>, String> {
    let mut pages = Vec::new();
    for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (first, last) = match part.split_once('-') {
            Some((first, last)) => (first.trim(), last.trim()),
            None => (part, part),
        };
        let number = |text: &str| {
            text.parse::<usize>()
                .ok()
                .filter(|&n| n >= 1)
                .ok_or_else(|| {
                    format!("`{part}` is not a page or a range of pages (like \"3\" or \"1-5\")")
                })
        };
        let (first, last) = (number(first)?, number(last)?);
        if first > last {
            return Err(format!("the range `{part}` runs backwards"));
        }
        if last > count {
            return Err(format!(
                "page {last} is past the end: the document has {count} pages"
            ));
        }
        pages.extend(first..=last);
        if pages.len() > MAX_PAGES * 4 {
            break;
        }
    }
    pages.sort_unstable();
    pages.dedup();
    match pages.len() {
        0 => Err("`pages` names no page (give pages like \"1-5\")".to_owned()),
        n if n > MAX_PAGES => Err(format!(
            "`pages` names {n} pages; at most {MAX_PAGES} can be read at once"
        )),
        _ => Ok(pages),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_lists_and_ranges_are_read_and_bad_ones_explained() {
        assert_eq!(page_numbers("3", 10).unwrap(), [3]);
        assert_eq!(page_numbers("1-3, 7,2", 10).unwrap(), [1, 2, 3, 7]);
        assert_eq!(page_numbers(" 9 - 10 ", 10).unwrap(), [9, 10]);
        assert!(page_numbers("0", 10).unwrap_err().contains("not a page"));
        assert!(page_numbers("5-2", 10).unwrap_err().contains("backwards"));
        assert!(page_numbers("11", 10).unwrap_err().contains("has 10 pages"));
        assert!(page_numbers("1-21", 30).unwrap_err().contains("at most 20"));
        assert!(page_numbers("a-b", 30).unwrap_err().contains("not a page"));
        assert!(page_numbers(",", 30).unwrap_err().contains("names no page"));
    }
}
