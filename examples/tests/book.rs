//! The book (`docs/book/`) holds together: every chapter in `SUMMARY.md` exists; every link and
//! picture of every chapter reaches a file of the book and, with `#anchor`, a heading of it (a
//! link leaving the book would break on the published site, which holds only the book: the
//! repository's files are linked by their GitHub address); and every Rust block is the whole
//! source of an example the workspace compiles, so none can drift. Anchors are made as mdBook
//! makes them.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use pulldown_cmark::{Event, Parser, Tag, TagEnd};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn book() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/book/src")
}

/// mdBook's id for a heading's text: lowercase, spaces as `-`, only letters, digits, `-` and `_`.
fn anchor(text: &str) -> String {
    text.trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// A chapter's heading ids and its links' targets.
fn read(path: &Path) -> (BTreeSet<String>, Vec<String>) {
    let text = std::fs::read_to_string(path).unwrap();
    let (mut ids, mut links) = (BTreeSet::new(), Vec::new());
    let mut heading: Option<String> = None;
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for event in Parser::new(&text) {
        match event {
            Event::Start(Tag::Heading { .. }) => heading = Some(String::new()),
            Event::Text(t) | Event::Code(t) => {
                if let Some(h) = heading.as_mut() {
                    h.push_str(&t);
                }
            }
            Event::End(TagEnd::Heading(_)) => {
                let id = anchor(&heading.take().unwrap_or_default());
                let count = seen.entry(id.clone()).or_default();
                ids.insert(if *count == 0 {
                    id.clone()
                } else {
                    format!("{id}-{count}")
                });
                *count += 1;
            }
            Event::Start(Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. }) => {
                links.push(dest_url.to_string());
            }
            _ => {}
        }
    }
    (ids, links)
}

#[test]
fn every_chapter_is_listed_and_every_link_of_the_book_reaches_its_target() {
    let root = book();
    let chapters: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
        .collect();
    let read_all: BTreeMap<PathBuf, (BTreeSet<String>, Vec<String>)> = chapters
        .iter()
        .map(|path| (path.clone(), read(path)))
        .collect();
    let summary = &read_all[&root.join("SUMMARY.md")].1;
    for path in &chapters {
        let name = path.file_name().unwrap().to_str().unwrap();
        assert!(
            name == "SUMMARY.md" || summary.iter().any(|link| link == name),
            "{name} is not in SUMMARY.md"
        );
    }
    let mut broken = Vec::new();
    for (path, (own_ids, links)) in &read_all {
        let name = path.file_name().unwrap().to_str().unwrap();
        for link in links {
            if link.starts_with("https://")
                || link.starts_with("http://")
                || link.starts_with("mailto:")
            {
                continue;
            }
            let (file, fragment) = link.split_once('#').unwrap_or((link, ""));
            let (target, ids) = if file.is_empty() {
                (path.clone(), Some(own_ids))
            } else {
                let target = root.join(file);
                let ids = read_all.get(&target).map(|(ids, _)| ids);
                (target, ids)
            };
            let inside = target
                .canonicalize()
                .is_ok_and(|found| found.starts_with(root.canonicalize().unwrap()));
            if !inside {
                broken.push(format!("{name}: {link} (no such file in the book)"));
            } else if !fragment.is_empty() && !ids.is_some_and(|ids| ids.contains(fragment)) {
                broken.push(format!("{name}: {link} (no such heading)"));
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

/// The fenced blocks of Rust in `text`.
fn rust_blocks(text: &str) -> Vec<String> {
    let (mut blocks, mut current) = (Vec::new(), None::<String>);
    for event in Parser::new(text) {
        match event {
            Event::Start(Tag::CodeBlock(pulldown_cmark::CodeBlockKind::Fenced(info)))
                if info.split(',').next() == Some("rust") =>
            {
                current = Some(String::new());
            }
            Event::Text(code) => {
                if let Some(block) = current.as_mut() {
                    block.push_str(&code);
                }
            }
            Event::End(TagEnd::CodeBlock) => blocks.extend(current.take()),
            _ => {}
        }
    }
    blocks
}

#[test]
fn every_rust_block_of_the_book_is_a_source_the_workspace_compiles() {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR"));
    let compiled: Vec<String> = [
        "smallest_agent.rs",
        "readme_agent.rs",
        "plugin-minimal/src/lib.rs",
        "plugin-hello/src/count_words.rs",
        "plugin-hello/src/settings.rs",
        "plugin-hello/src/summarize.rs",
    ]
    .iter()
    .map(|file| std::fs::read_to_string(examples.join(file)).unwrap())
    .collect();
    let mut shown = 0;
    for entry in std::fs::read_dir(book()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|ext| ext != "md") {
            continue;
        }
        for block in rust_blocks(&std::fs::read_to_string(&path).unwrap()) {
            assert!(
                compiled.contains(&block),
                "{}: a Rust block that is not one of the compiled examples' sources (put the code in examples/ and show it whole):\n{block}",
                path.display()
            );
            shown += 1;
        }
    }
    assert!(shown >= compiled.len(), "{shown}");
}

#[test]
fn anchors_are_made_as_mdbook_makes_them() {
    assert_eq!(
        anchor("The v1 function table (1.0, and what 1.1 appends)"),
        "the-v1-function-table-10-and-what-11-appends"
    );
    assert_eq!(
        anchor("`agentry serve`: web apps"),
        "agentry-serve-web-apps"
    );
}
