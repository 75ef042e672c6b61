//! Read of PDFs and Jupyter notebooks, and NotebookEdit.

use super::*;
use agentry::tool::ContentBlock;
use base64::Engine as _;
use pdf_extract::content::{Content, Operation};
use pdf_extract::{Dictionary, Document, Object, Stream};
use serde_json::{Value, json};

fn name(text: &str) -> Object {
    Object::Name(text.as_bytes().to_vec())
}

/// A letter-size PDF with one line of Helvetica text on each page.
fn pdf(pages: &[String]) -> Vec<u8> {
    let mut doc = Document::with_version("1.5");
    let pages_id = doc.new_object_id();
    let mut font = Dictionary::new();
    font.set("Type", name("Font"));
    font.set("Subtype", name("Type1"));
    font.set("BaseFont", name("Helvetica"));
    let font_id = doc.add_object(font);
    let mut fonts = Dictionary::new();
    fonts.set("F1", font_id);
    let mut resources = Dictionary::new();
    resources.set("Font", fonts);
    let resources_id = doc.add_object(resources);
    let mut kids = Vec::new();
    for text in pages {
        let content = Content {
            operations: vec![
                Operation::new("BT", vec![]),
                Operation::new("Tf", vec![name("F1"), 24.into()]),
                Operation::new("Td", vec![72.into(), 700.into()]),
                Operation::new("Tj", vec![Object::string_literal(text.as_str())]),
                Operation::new("ET", vec![]),
            ],
        };
        let stream = Stream::new(Dictionary::new(), content.encode().unwrap());
        let content_id = doc.add_object(stream);
        let mut page = Dictionary::new();
        page.set("Type", name("Page"));
        page.set("Parent", pages_id);
        page.set("Contents", content_id);
        kids.push(Object::Reference(doc.add_object(page)));
    }
    let mut tree = Dictionary::new();
    tree.set("Type", name("Pages"));
    tree.set("Count", kids.len() as i64);
    tree.set("Kids", kids);
    tree.set("Resources", resources_id);
    tree.set("MediaBox", vec![0.into(), 0.into(), 612.into(), 792.into()]);
    doc.objects.insert(pages_id, Object::Dictionary(tree));
    let mut catalog = Dictionary::new();
    catalog.set("Type", name("Catalog"));
    catalog.set("Pages", pages_id);
    let catalog_id = doc.add_object(catalog);
    doc.trailer.set("Root", catalog_id);
    let mut bytes = Vec::new();
    doc.save_to(&mut bytes).unwrap();
    bytes
}

fn numbered_pages(count: usize) -> Vec<String> {
    (1..=count)
        .map(|n| format!("Quarterly report page {n}"))
        .collect()
}

/// The images of a call's content, as PNG bytes.
fn png_images(outcome: &CallOutcome) -> Vec<Vec<u8>> {
    outcome
        .content()
        .into_iter()
        .filter_map(|c| match c {
            ToolContent::Content {
                content: ContentBlock::Image { data, mime_type },
            } => {
                assert_eq!(mime_type, "image/png");
                Some(
                    base64::engine::general_purpose::STANDARD
                        .decode(data)
                        .unwrap(),
                )
            }
            _ => None,
        })
        .collect()
}

/// A PNG's width and height, from its header.
fn png_size(png: &[u8]) -> (u32, u32) {
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    let number = |at: usize| u32::from_be_bytes(png[at..at + 4].try_into().unwrap());
    (number(16), number(20))
}

#[tokio::test]
async fn a_short_pdf_comes_whole_as_text_and_page_images() {
    let ws = Workspace::new();
    ws.write("report.pdf", pdf(&numbered_pages(3)));
    let outcome = ws.call("Read", json!({"file_path": "report.pdf"})).await;
    let text = ok(&outcome);
    assert!(text.contains("(3 pages)"), "{text}");
    for n in 1..=3 {
        assert!(
            text.contains(&format!("--- Page {n} ---\nQuarterly report page {n}")),
            "{text}"
        );
    }
    let images = png_images(&outcome);
    assert_eq!(images.len(), 3);
    // Letter size, scaled so the long side is 1568 pixels.
    assert_eq!(png_size(&images[0]), (1211, 1568));
    assert_ne!(
        images[0], images[1],
        "the pages' text differs, so must their pictures"
    );
    // The model gets the pictures too.
    let to_model = outcome
        .result
        .content
        .iter()
        .filter(|block| matches!(block, ContentBlock::Image { .. }))
        .count();
    assert_eq!(to_model, 3);
}

#[tokio::test]
async fn a_long_pdf_is_read_by_pages_at_most_twenty_at_a_time() {
    let ws = Workspace::new();
    ws.write("long.pdf", pdf(&numbered_pages(25)));
    let whole = ws.call("Read", json!({"file_path": "long.pdf"})).await;
    assert!(
        err(&whole).contains("has 25 pages: read it in parts with `pages`"),
        "{}",
        whole.text()
    );
    let some = ws
        .call("Read", json!({"file_path": "long.pdf", "pages": "2-3, 24"}))
        .await;
    let text = ok(&some);
    assert!(
        text.contains("--- Page 2 ---\nQuarterly report page 2\n"),
        "{text}"
    );
    assert!(
        text.contains("--- Page 24 ---\nQuarterly report page 24"),
        "{text}"
    );
    assert!(
        !text.contains("page 1\n") && !text.contains("--- Page 4 ---"),
        "{text}"
    );
    assert_eq!(png_images(&some).len(), 3);
    let too_many = ws
        .call("Read", json!({"file_path": "long.pdf", "pages": "1-21"}))
        .await;
    assert!(err(&too_many).contains("at most 20"), "{}", too_many.text());
    let past = ws
        .call("Read", json!({"file_path": "long.pdf", "pages": "30"}))
        .await;
    assert!(
        err(&past).contains("the document has 25 pages"),
        "{}",
        past.text()
    );
}

#[tokio::test]
async fn pdf_page_images_can_be_turned_off_and_a_broken_pdf_is_a_clear_error() {
    let ws = Workspace::with_config(FileOpsConfig {
        pdf_page_images: false,
        ..FileOpsConfig::default()
    });
    ws.write("one.pdf", pdf(&numbered_pages(1)));
    let outcome = ws.call("Read", json!({"file_path": "one.pdf"})).await;
    assert!(ok(&outcome).contains("Quarterly report page 1"));
    assert!(png_images(&outcome).is_empty());
    ws.write("broken.pdf", "%PDF-1.5\nnot really\n");
    let broken = ws.call("Read", json!({"file_path": "broken.pdf"})).await;
    assert!(
        err(&broken).contains("cannot read the PDF"),
        "{}",
        broken.text()
    );
}

/// A tiny PNG (1×1, red).
const RED_PIXEL: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";

fn notebook(minor: u64, with_ids: bool) -> Value {
    let mut cells = vec![
        json!({"cell_type": "markdown", "id": "intro", "metadata": {},
               "source": ["# Sales\n", "Monthly figures."]}),
        json!({"cell_type": "code", "execution_count": 1, "id": "load", "metadata": {},
               "outputs": [
                   {"name": "stdout", "output_type": "stream", "text": ["loaded 12 rows\n"]},
                   {"data": {"text/plain": ["12"]}, "execution_count": 1, "metadata": {},
                    "output_type": "execute_result"}
               ],
               "source": ["rows = load()\n", "len(rows)"]}),
        json!({"cell_type": "code", "execution_count": 2, "id": "plot", "metadata": {},
               "outputs": [
                   {"data": {"image/png": RED_PIXEL, "text/plain": ["<Figure>"]},
                    "metadata": {}, "output_type": "display_data"},
                   {"ename": "ZeroDivisionError", "evalue": "division by zero",
                    "output_type": "error",
                    "traceback": ["\u{1b}[0;31mZeroDivisionError\u{1b}[0m: division by zero"]}
               ],
               "source": "plot(rows)\n1/0"}),
    ];
    if !with_ids {
        for cell in &mut cells {
            cell.as_object_mut().unwrap().remove("id");
        }
    }
    json!({
        "cells": cells,
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
        "nbformat": 4,
        "nbformat_minor": minor
    })
}

/// A notebook as Jupyter writes it (sorted keys, one-space indent, a final newline).
fn jupyter_text(notebook: &Value) -> String {
    let mut bytes = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(b" ");
    let mut serializer = serde_json::Serializer::with_formatter(&mut bytes, formatter);
    serde::Serialize::serialize(notebook, &mut serializer).unwrap();
    String::from_utf8(bytes).unwrap() + "\n"
}

#[tokio::test]
async fn a_notebook_reads_as_cells_with_their_outputs_and_images() {
    let ws = Workspace::new();
    ws.write("sales.ipynb", jupyter_text(&notebook(5, true)));
    let outcome = ws.call("Read", json!({"file_path": "sales.ipynb"})).await;
    let text = ok(&outcome);
    let expected = [
        "(3 cells, python)",
        "<cell id=\"intro\" type=\"markdown\">\n# Sales\nMonthly figures.\n</cell>",
        "<cell id=\"load\" type=\"code\" execution_count=\"1\">\nrows = load()\nlen(rows)\n</cell>\n\
         <output cell=\"load\">\nloaded 12 rows\n</output>\n<output cell=\"load\">\n12\n</output>",
        "<output cell=\"plot\">\n<Figure>\n</output>\n<output cell=\"plot\">[image: image/png]</output>",
        "<output cell=\"plot\">\nZeroDivisionError: division by zero\nZeroDivisionError: division by zero\n</output>",
    ];
    for part in expected {
        assert!(text.contains(part), "missing {part:?} in:\n{text}");
    }
    assert_eq!(png_images(&outcome).len(), 1);
}

#[tokio::test]
async fn notebook_edit_replaces_inserts_and_deletes_cells_keeping_jupyters_format() {
    let ws = Workspace::new();
    let original = jupyter_text(&notebook(5, true));
    ws.write("sales.ipynb", &original);
    let unread = ws
        .call(
            "NotebookEdit",
            json!({"notebook_path": "sales.ipynb", "cell_id": "load", "new_source": "x = 1"}),
        )
        .await;
    assert!(err(&unread).contains("read"), "{}", unread.text());
    ok(&ws.call("Read", json!({"file_path": "sales.ipynb"})).await);

    let replaced = ws
        .call(
            "NotebookEdit",
            json!({"notebook_path": "sales.ipynb", "cell_id": "load", "new_source": "rows = load()\nrows[:3]"}),
        )
        .await;
    assert_eq!(
        ok(&replaced),
        format!(
            "Replaced cell load in {}.",
            ws.root().join("sales.ipynb").display()
        )
    );
    let (_, old, new) = diff(&replaced);
    assert_eq!(old.as_deref(), Some(original.as_str()));
    let mut expected = notebook(5, true);
    expected["cells"][1]["source"] = json!(["rows = load()\n", "rows[:3]"]);
    expected["cells"][1]["outputs"] = json!([]);
    expected["cells"][1]["execution_count"] = Value::Null;
    assert_eq!(new, jupyter_text(&expected));
    assert_eq!(ws.read("sales.ipynb"), jupyter_text(&expected));

    let inserted = ws
        .call(
            "NotebookEdit",
            json!({"notebook_path": "sales.ipynb", "cell_id": "intro", "new_source": "## Data",
                   "cell_type": "markdown", "edit_mode": "insert"}),
        )
        .await;
    assert!(
        ok(&inserted).starts_with("Inserted cell "),
        "{}",
        inserted.text()
    );
    let now: Value = serde_json::from_str(&ws.read("sales.ipynb")).unwrap();
    let new_cell = &now["cells"][1];
    assert_eq!(new_cell["cell_type"], "markdown");
    assert_eq!(new_cell["source"], json!(["## Data"]));
    let id = new_cell["id"].as_str().unwrap();
    assert!(!id.is_empty() && id.len() <= 64);
    assert!(new_cell.get("outputs").is_none());

    let deleted = ws
        .call(
            "NotebookEdit",
            json!({"notebook_path": "sales.ipynb", "cell_id": "plot", "edit_mode": "delete"}),
        )
        .await;
    ok(&deleted);
    let now: Value = serde_json::from_str(&ws.read("sales.ipynb")).unwrap();
    let ids: Vec<&str> = now["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|cell| cell["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["intro", id, "load"]);

    let missing = ws
        .call(
            "NotebookEdit",
            json!({"notebook_path": "sales.ipynb", "cell_id": "nope", "new_source": ""}),
        )
        .await;
    assert!(
        err(&missing).contains(&format!(
            "there is no cell `nope`; the cells are: intro, {id}, load"
        )),
        "{}",
        missing.text()
    );
    let untyped = ws
        .call(
            "NotebookEdit",
            json!({"notebook_path": "sales.ipynb", "new_source": "x", "edit_mode": "insert"}),
        )
        .await;
    assert!(
        err(&untyped).contains("needs its `cell_type`"),
        "{}",
        untyped.text()
    );
}

#[tokio::test]
async fn cells_of_notebooks_without_ids_are_named_by_position() {
    let ws = Workspace::new();
    ws.write("old.ipynb", jupyter_text(&notebook(4, false)));
    let text = ok(&ws.call("Read", json!({"file_path": "old.ipynb"})).await);
    assert!(text.contains("<cell id=\"cell-1\" type=\"code\""), "{text}");
    ok(&ws
        .call(
            "NotebookEdit",
            json!({"notebook_path": "old.ipynb", "cell_id": "cell-0", "new_source": "print(1)",
                   "cell_type": "code"}),
        )
        .await);
    let now: Value = serde_json::from_str(&ws.read("old.ipynb")).unwrap();
    assert_eq!(now["cells"][0]["cell_type"], "code");
    assert_eq!(now["cells"][0]["outputs"], json!([]));
    assert!(
        now["cells"][0].get("id").is_none(),
        "nbformat 4.4 cells have no ids"
    );
}
