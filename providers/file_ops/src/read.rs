//! **Read**: a file's lines numbered like `cat -n`; an image as image content; a PDF's pages
//! (text, and images); a notebook's cells with their outputs.

use crate::FileOpsConfig;
use crate::files::TextFiles;
use crate::notebook::{self, is_notebook};
use crate::pdf::{PdfReading, read_pdf};
use crate::state::ReadFiles;
use agentry_plugin::tool::ContentBlock;
use agentry_plugin::tool::{
    RulePatterns, Tool, ToolCallLocation, ToolContent, ToolContext, ToolError, ToolKind,
    ToolOutput, image_mime_type,
};
use base64::Engine as _;
use schemars::JsonSchema;
use serde::Deserialize;
use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Read as _};
use std::path::Path;

/// Lines returned when no limit is given.
const DEFAULT_LIMIT: u64 = 2000;
/// Longest line returned whole.
const MAX_LINE_CHARS: usize = 2000;
/// How much of the start of a file is checked for NUL bytes.
const BINARY_PROBE: usize = 8 * 1024;
/// The largest image returned.
const MAX_IMAGE_BYTES: u64 = 10 * 1024 * 1024;

/// Reads a file.
#[derive(Debug, Clone)]
pub struct Read {
    config: FileOpsConfig,
}

impl Read {
    /// The tool with these limits.
    pub fn new(config: FileOpsConfig) -> Self {
        Self { config }
    }
}

/// Read's input.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadInput {
    /// The file to read (absolute, or relative to the working directory).
    pub file_path: String,
    /// The line to start at (1-based). Give it, with `limit`, for large files.
    #[schemars(range(min = 1))]
    pub offset: Option<u64>,
    /// How many lines to read (default 2000).
    #[schemars(range(min = 1))]
    pub limit: Option<u64>,
    /// For a PDF: the pages to read, like "1-5" or "3" or "1-3,7" (at most 20 a call; needed
    /// for PDFs of more than 10 pages).
    pub pages: Option<String>,
}

impl Tool for Read {
    type Input = ReadInput;
    type Output = ToolOutput;

    fn name(&self) -> &str {
        "Read"
    }

    fn description(&self) -> String {
        "Reads a file from the filesystem. Lines come numbered like `cat -n`, 2000 lines from the \
         start unless `offset` (1-based) and `limit` say otherwise; lines over 2000 characters are \
         cut. Images (PNG, JPEG, GIF, WebP) come back as images; PDFs as the text of their \
         `pages` (at most 20 a call) with each page as an image; Jupyter notebooks (.ipynb) as \
         their cells with outputs. Read a file before changing it with Write or Edit."
            .to_owned()
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Read
    }

    /// `Read(…)` rules apply to it too.
    fn rule_patterns(&self) -> RulePatterns {
        RulePatterns::ReadsFiles
    }

    fn title(&self, input: &ReadInput) -> String {
        match (input.offset, input.limit) {
            (Some(offset), Some(limit)) => format!(
                "Read {} ({offset}–{})",
                input.file_path,
                offset.saturating_add(limit).saturating_sub(1)
            ),
            (Some(offset), None) => format!("Read {} (from line {offset})", input.file_path),
            _ => format!("Read {}", input.file_path),
        }
    }

    fn locations(&self, input: &ReadInput, cwd: &Path) -> Vec<ToolCallLocation> {
        let line = u32::try_from(input.offset.unwrap_or(1)).unwrap_or(u32::MAX);
        vec![ToolCallLocation::line(cwd.join(&input.file_path), line)]
    }

    async fn call(&self, input: ReadInput, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let config = self.config.clone();
        let read_files = ReadFiles::of(&ctx);
        let files = TextFiles::of(&ctx);
        let path = files.path_for(&ctx, &input.file_path)?;
        if is_notebook(&path) {
            let text = files.read(&path).await?;
            files.saw(&read_files, &path, &text);
            return notebook::render(&path, &text);
        }
        if files.through_client() && image_mime_type(&path).is_none() && !is_pdf(&path) {
            // The client's text, with its unsaved changes.
            let text = files.read(&path).await?;
            files.saw(&read_files, &path, &text);
            return numbered_lines(&path, std::io::Cursor::new(text.into_bytes()), &input);
        }
        tokio::task::spawn_blocking(move || {
            let output = read(&path, &input, &config)?;
            read_files.saw(&path);
            Ok(output)
        })
        .await
        .map_err(|e| ToolError::failed(format!("the read did not finish: {e}")))?
    }
}

fn read(path: &Path, input: &ReadInput, config: &FileOpsConfig) -> Result<ToolOutput, ToolError> {
    // Opened once, following no link, and read through that handle alone.
    let file = agentry_plugin::checked_file::open(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => ToolError::failed(format!(
            "{} does not exist. Check the path, or find the file with Glob.",
            path.display()
        )),
        _ => ToolError::failed(format!("cannot read {}: {e}", path.display())),
    })?;
    let metadata = file
        .metadata()
        .map_err(|e| ToolError::failed(format!("cannot read {}: {e}", path.display())))?;
    if metadata.is_dir() {
        return Err(ToolError::failed(format!(
            "{} is a directory, not a file: list it with Glob (or Bash `ls`).",
            path.display()
        )));
    }
    if !metadata.is_file() {
        return Err(ToolError::failed(format!(
            "{} is not a regular file (a pipe or a device), which Read does not open.",
            path.display()
        )));
    }
    if let Some(mime_type) = image_mime_type(path) {
        return read_image(path, file, metadata.len(), mime_type);
    }
    if is_pdf(path) {
        let how = PdfReading {
            pages: input.pages.as_deref(),
            images: config.pdf_page_images,
        };
        return read_pdf(path, file, metadata.len(), how);
    }
    let ranged = input.offset.is_some() || input.limit.is_some();
    if !ranged && metadata.len() > config.max_read_bytes {
        return Err(ToolError::failed(format!(
            "{} is {} KB, more than the {} KB that can be read at once: read a part of it with offset and limit, or search it with Grep.",
            path.display(),
            metadata.len() / 1024,
            config.max_read_bytes / 1024
        )));
    }
    let mut reader = BufReader::new(file);
    let head = reader
        .fill_buf()
        .map_err(|e| ToolError::failed(format!("cannot read {}: {e}", path.display())))?;
    if head[..head.len().min(BINARY_PROBE)].contains(&0) {
        return Err(ToolError::failed(format!(
            "{} is a binary file, which Read does not show: inspect it with Bash (`file`, `xxd | head`, `strings`).",
            path.display()
        )));
    }
    numbered_lines(path, reader, input)
}

/// Whether a path names a PDF.
fn is_pdf(path: &Path) -> bool {
    path.extension()
        .is_some_and(|ext| ext.eq_ignore_ascii_case("pdf"))
}

fn read_image(
    path: &Path,
    mut file: std::fs::File,
    len: u64,
    mime_type: &str,
) -> Result<ToolOutput, ToolError> {
    if len > MAX_IMAGE_BYTES {
        return Err(ToolError::failed(format!(
            "{} is a {} MB image, more than the {} MB Read returns.",
            path.display(),
            len / (1024 * 1024),
            MAX_IMAGE_BYTES / (1024 * 1024)
        )));
    }
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)
        .map_err(|e| ToolError::failed(format!("cannot read {}: {e}", path.display())))?;
    let data = base64::engine::general_purpose::STANDARD.encode(&bytes);
    Ok(ToolOutput {
        content: vec![ToolContent::Content {
            content: ContentBlock::Image {
                data,
                mime_type: mime_type.to_owned(),
            },
        }],
        raw_output: Some(serde_json::json!({"path": path, "mime_type": mime_type, "bytes": len})),
        for_model: Some(format!(
            "The image {} ({mime_type}, {len} bytes).",
            path.display()
        )),
    })
}

fn numbered_lines(
    path: &Path,
    mut reader: impl BufRead,
    input: &ReadInput,
) -> Result<ToolOutput, ToolError> {
    let first = input.offset.unwrap_or(1).max(1);
    let limit = input.limit.unwrap_or(DEFAULT_LIMIT).max(1);
    let mut out = String::new();
    let mut line_number = 0u64;
    let mut shown = 0u64;
    let mut buffer = Vec::new();
    loop {
        buffer.clear();
        let read = reader
            .read_until(b'\n', &mut buffer)
            .map_err(|e| ToolError::failed(format!("cannot read {}: {e}", path.display())))?;
        if read == 0 {
            break;
        }
        line_number += 1;
        if line_number < first || shown >= limit {
            continue;
        }
        shown += 1;
        let line = String::from_utf8_lossy(&buffer);
        let line = line.strip_suffix('\n').unwrap_or(&line);
        let line = line.strip_suffix('\r').unwrap_or(line);
        let _ = write!(out, "{line_number:>6}\t");
        push_capped_line(&mut out, line);
        out.push('\n');
    }
    let total = line_number;
    let note = if total == 0 {
        Some(format!("(The file {} is empty.)", path.display()))
    } else if first > total {
        Some(format!(
            "(The file {} has {total} lines; offset {first} is past its end.)",
            path.display()
        ))
    } else if first + shown <= total {
        Some(format!(
            "(Showing lines {first}–{} of {total}; read on with offset {}.)",
            first + shown - 1,
            first + shown
        ))
    } else {
        None
    };
    if let Some(note) = &note {
        out.push_str(note);
        out.push('\n');
    }
    Ok(ToolOutput::text(out).with_raw_output(serde_json::json!({
        "path": path,
        "first_line": first,
        "lines_shown": shown,
        "total_lines": total,
    })))
}

fn push_capped_line(out: &mut String, line: &str) {
    match line.char_indices().nth(MAX_LINE_CHARS) {
        None => out.push_str(line),
        Some((cut, _)) => {
            out.push_str(&line[..cut]);
            let more = line[cut..].chars().count();
            let _ = write!(out, "… [line cut: {more} more characters]");
        }
    }
}
