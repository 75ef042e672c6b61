//! Jupyter notebooks (`.ipynb`, nbformat 4): Read shows their cells with their outputs, and
//! **NotebookEdit** replaces, inserts or deletes one cell.

use crate::files::TextFiles;
use crate::state::ReadFiles;
use agentry_plugin::terminal_text::plain_text;
use agentry_plugin::tool::ContentBlock;
use agentry_plugin::tool::{
    RulePatterns, Tool, ToolCallLocation, ToolContent, ToolContext, ToolError, ToolKind, ToolOutput,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use std::fmt::Write as _;
use std::path::Path;

/// Whether a path names a notebook.
pub fn is_notebook(path: &Path) -> bool {
    path.extension()
        .is_some_and(|ext| ext.eq_ignore_ascii_case("ipynb"))
}

/// A notebook's JSON, or an error for the model.
fn parse(path: &Path, text: &str) -> Result<Value, ToolError> {
    let notebook: Value = serde_json::from_str(text).map_err(|e| {
        ToolError::failed(format!("{} is not a valid notebook: {e}", path.display()))
    })?;
    if !notebook.get("cells").is_some_and(Value::is_array) {
        return Err(ToolError::failed(format!(
            "{} is not a Jupyter notebook (nbformat 4): it has no `cells` list.",
            path.display()
        )));
    }
    Ok(notebook)
}

/// A cell's id: its own (nbformat 4.5+), else `cell-N` by position.
fn cell_id(cell: &Value, index: usize) -> String {
    cell.get("id")
        .and_then(Value::as_str)
        .map_or_else(|| format!("cell-{index}"), str::to_owned)
}

/// A multi-line string field (a string, or a list of lines).
fn joined(value: Option<&Value>) -> String {
    match value {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(lines)) => lines.iter().filter_map(Value::as_str).collect(),
        _ => String::new(),
    }
}

/// The notebook as the model reads it: each cell with its id, type and source, then its
/// outputs (text, errors; images as image content).
pub fn render(path: &Path, text: &str) -> Result<ToolOutput, ToolError> {
    let notebook = parse(path, text)?;
    let cells = notebook["cells"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let language = notebook
        .pointer("/metadata/language_info/name")
        .or_else(|| notebook.pointer("/metadata/kernelspec/language"))
        .and_then(Value::as_str)
        .unwrap_or("python");
    let mut out = format!(
        "Notebook {} ({} cells, {language})\n",
        path.display(),
        cells.len()
    );
    let mut images = Vec::new();
    for (index, cell) in cells.iter().enumerate() {
        let kind = cell
            .get("cell_type")
            .and_then(Value::as_str)
            .unwrap_or("code");
        let id = cell_id(cell, index);
        let count = match cell.get("execution_count") {
            Some(Value::Number(n)) => format!(" execution_count=\"{n}\""),
            _ => String::new(),
        };
        let _ = write!(
            out,
            "\n<cell id=\"{id}\" type=\"{kind}\"{count}>\n{}\n</cell>\n",
            joined(cell.get("source")).trim_end_matches('\n')
        );
        for output in cell
            .get("outputs")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(text) = output_text(output) {
                let _ = write!(
                    out,
                    "<output cell=\"{id}\">\n{}\n</output>\n",
                    text.trim_end_matches('\n')
                );
            }
            for (mime_type, data) in output_images(output) {
                let _ = writeln!(out, "<output cell=\"{id}\">[image: {mime_type}]</output>");
                images.push(ToolContent::Content {
                    content: ContentBlock::Image { data, mime_type },
                });
            }
        }
    }
    let mut content = vec![ToolContent::text(out)];
    content.extend(images);
    Ok(ToolOutput {
        content,
        raw_output: Some(json!({"path": path, "cells": cells.len()})),
        for_model: None,
    })
}

/// An output's text: a stream, a result's `text/plain`, or an error with its traceback.
fn output_text(output: &Value) -> Option<String> {
    match output.get("output_type").and_then(Value::as_str)? {
        "stream" => Some(joined(output.get("text"))),
        "execute_result" | "display_data" => output
            .pointer("/data/text~1plain")
            .map(|text| joined(Some(text))),
        "error" => {
            let name = output
                .get("ename")
                .and_then(Value::as_str)
                .unwrap_or("Error");
            let value = output.get("evalue").and_then(Value::as_str).unwrap_or("");
            let traceback: Vec<String> = output
                .get("traceback")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(plain_text)
                .collect();
            Some(format!("{name}: {value}\n{}", traceback.join("\n")))
        }
        _ => None,
    }
}

/// An output's images, as (MIME type, base64).
fn output_images(output: &Value) -> Vec<(String, String)> {
    let Some(data) = output.get("data").and_then(Value::as_object) else {
        return Vec::new();
    };
    ["image/png", "image/jpeg", "image/gif", "image/webp"]
        .iter()
        .filter_map(|mime_type| {
            let encoded: String = joined(data.get(*mime_type))
                .chars()
                .filter(|c| !c.is_whitespace())
                .collect();
            (!encoded.is_empty()).then(|| ((*mime_type).to_owned(), encoded))
        })
        .collect()
}

/// Replaces, inserts or deletes one cell of a Jupyter notebook.
#[derive(Debug, Clone, Copy, Default)]
pub struct NotebookEdit;

/// What NotebookEdit does to the cell.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum EditMode {
    /// Replace the cell's source.
    #[default]
    Replace,
    /// Insert a new cell after the cell (at the start without `cell_id`).
    Insert,
    /// Delete the cell.
    Delete,
}

/// A cell's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CellType {
    /// Code, run by the kernel.
    Code,
    /// Markdown text.
    Markdown,
}

/// NotebookEdit's input.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NotebookEditInput {
    /// The notebook (absolute, or relative to the working directory).
    pub notebook_path: String,
    /// The cell to change (its id as Read shows it); with `insert`, the cell to insert after
    /// (the new cell goes first without it).
    pub cell_id: Option<String>,
    /// The cell's new source (ignored by `delete`).
    #[serde(default)]
    pub new_source: String,
    /// The cell's type: required for `insert`; with `replace` it changes the type.
    pub cell_type: Option<CellType>,
    /// `replace` (the default), `insert` or `delete`.
    #[serde(default)]
    pub edit_mode: EditMode,
}

impl Tool for NotebookEdit {
    type Input = NotebookEditInput;
    type Output = ToolOutput;

    fn name(&self) -> &str {
        "NotebookEdit"
    }

    fn description(&self) -> String {
        "Replaces, inserts or deletes one cell of a Jupyter notebook (.ipynb), found by the cell \
         id Read shows. Replacing a code cell clears its outputs. Read the notebook first."
            .to_owned()
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Edit
    }

    /// `Edit(…)` rules apply to it too.
    fn rule_patterns(&self) -> RulePatterns {
        RulePatterns::EditsFiles
    }

    fn title(&self, input: &NotebookEditInput) -> String {
        let verb = match input.edit_mode {
            EditMode::Replace => "Edit",
            EditMode::Insert => "Insert a cell in",
            EditMode::Delete => "Delete a cell of",
        };
        match &input.cell_id {
            Some(id) => format!("{verb} {} ({id})", input.notebook_path),
            None => format!("{verb} {}", input.notebook_path),
        }
    }

    fn locations(&self, input: &NotebookEditInput, cwd: &Path) -> Vec<ToolCallLocation> {
        vec![ToolCallLocation::path(cwd.join(&input.notebook_path))]
    }

    async fn call(
        &self,
        input: NotebookEditInput,
        ctx: ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let files = TextFiles::of(&ctx);
        let path = files.path_for(&ctx, &input.notebook_path)?;
        if !is_notebook(&path) {
            return Err(ToolError::InvalidInput(format!(
                "{} is not a notebook (.ipynb): change other files with Edit.",
                path.display()
            )));
        }
        let read_files = ReadFiles::of(&ctx);
        let before = files.read(&path).await?;
        files.check_fresh(&read_files, &path, &before)?;
        let mut notebook = parse(&path, &before)?;
        let said = edit(&mut notebook, &input)?;
        let mut after = serialize(&notebook);
        if before.ends_with('\n') {
            after.push('\n');
        }
        files.write(&path, after.clone()).await?;
        files.saw(&read_files, &path, &after);
        Ok(ToolOutput {
            content: vec![ToolContent::Diff {
                path: path.clone(),
                old_text: Some(before),
                new_text: after,
            }],
            raw_output: Some(json!({"path": path, "edit_mode": input.edit_mode_name()})),
            for_model: Some(format!("{said} in {}.", path.display())),
        })
    }
}

impl NotebookEditInput {
    fn edit_mode_name(&self) -> &'static str {
        match self.edit_mode {
            EditMode::Replace => "replace",
            EditMode::Insert => "insert",
            EditMode::Delete => "delete",
        }
    }
}

/// Applies the edit; says what it did.
fn edit(notebook: &mut Value, input: &NotebookEditInput) -> Result<String, ToolError> {
    let with_ids = notebook.get("nbformat").and_then(Value::as_u64) == Some(4)
        && notebook
            .get("nbformat_minor")
            .and_then(Value::as_u64)
            .is_some_and(|minor| minor >= 5);
    let cells = notebook
        .get_mut("cells")
        .and_then(Value::as_array_mut)
        .ok_or_else(|| ToolError::failed("the notebook has no `cells` list"))?;
    let position = |cells: &[Value], id: &str| {
        cells
            .iter()
            .enumerate()
            .position(|(index, cell)| cell_id(cell, index) == id)
            .ok_or_else(|| {
                let known: Vec<String> = cells
                    .iter()
                    .enumerate()
                    .map(|(index, cell)| cell_id(cell, index))
                    .collect();
                ToolError::InvalidInput(format!(
                    "there is no cell `{id}`; the cells are: {}",
                    known.join(", ")
                ))
            })
    };
    match input.edit_mode {
        EditMode::Insert => {
            let kind = input.cell_type.ok_or_else(|| {
                ToolError::InvalidInput("inserting a cell needs its `cell_type`".to_owned())
            })?;
            let at = match &input.cell_id {
                Some(id) => position(cells, id)? + 1,
                None => 0,
            };
            let mut cell = new_cell(kind, &input.new_source);
            let id = with_ids.then(new_cell_id);
            if let (Some(id), Some(fields)) = (&id, cell.as_object_mut()) {
                fields.insert("id".to_owned(), Value::String(id.clone()));
            }
            cells.insert(at, cell);
            let id = id.unwrap_or_else(|| format!("cell-{at}"));
            Ok(format!("Inserted cell {id} at position {at}"))
        }
        EditMode::Delete => {
            let id = input.cell_id.as_deref().ok_or_else(|| {
                ToolError::InvalidInput("deleting a cell needs its `cell_id`".to_owned())
            })?;
            cells.remove(position(cells, id)?);
            Ok(format!("Deleted cell {id}"))
        }
        EditMode::Replace => {
            let id = input.cell_id.as_deref().ok_or_else(|| {
                ToolError::InvalidInput("replacing a cell needs its `cell_id`".to_owned())
            })?;
            let at = position(cells, id)?;
            let cell = cells[at]
                .as_object_mut()
                .ok_or_else(|| ToolError::failed(format!("cell {id} is not an object")))?;
            let kind = input.cell_type.unwrap_or_else(|| {
                match cell.get("cell_type").and_then(Value::as_str) {
                    Some("markdown") => CellType::Markdown,
                    _ => CellType::Code,
                }
            });
            cell.insert("source".to_owned(), source_lines(&input.new_source));
            set_type(cell, kind);
            Ok(format!("Replaced cell {id}"))
        }
    }
}

/// A new cell of a type.
fn new_cell(kind: CellType, source: &str) -> Value {
    let mut cell = Map::new();
    cell.insert("metadata".to_owned(), json!({}));
    cell.insert("source".to_owned(), source_lines(source));
    set_type(&mut cell, kind);
    Value::Object(cell)
}

/// Gives a cell its type and the fields that type has: a code cell's outputs are cleared (its
/// source changed, so they no longer belong to it).
fn set_type(cell: &mut Map<String, Value>, kind: CellType) {
    match kind {
        CellType::Code => {
            cell.insert("cell_type".to_owned(), json!("code"));
            cell.insert("execution_count".to_owned(), Value::Null);
            cell.insert("outputs".to_owned(), json!([]));
        }
        CellType::Markdown => {
            cell.insert("cell_type".to_owned(), json!("markdown"));
            cell.remove("execution_count");
            cell.remove("outputs");
        }
    }
}

/// Source text as nbformat stores it: a list of lines, each but the last ending in `\n`.
fn source_lines(source: &str) -> Value {
    Value::Array(
        source
            .split_inclusive('\n')
            .map(|line| Value::String(line.to_owned()))
            .collect(),
    )
}

/// A fresh cell id (nbformat 4.5: 1–64 letters, digits, `-` and `_`).
fn new_cell_id() -> String {
    format!("{:08x}", rand::random::<u32>())
}

/// The notebook as Jupyter writes it: keys sorted, one-space indent.
fn serialize(notebook: &Value) -> String {
    let mut bytes = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(b" ");
    let mut serializer = serde_json::Serializer::with_formatter(&mut bytes, formatter);
    serde::Serialize::serialize(notebook, &mut serializer)
        .map(|()| String::from_utf8_lossy(&bytes).into_owned())
        .unwrap_or_else(|_| notebook.to_string())
}
