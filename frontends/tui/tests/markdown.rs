//! Markdown as the terminal shows it: the text of the lines at 80 and 40 columns (snapshots), and
//! the styles — headings, emphasis, inline code, highlighted code — with and without colour.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use agentry_tui::markdown::{Look, line_width, render};
use ratatui::style::{Color, Modifier};
use ratatui::text::Line;

const ANSWER: &str = r#"# Ownership

Each value in Rust has **one owner**, and when the owner goes out of scope the value is *dropped*. Use `clone()` when you need a deep copy; see [the book](https://doc.rust-lang.org/book/) for more.

## Rules

1. Each value has an owner.
2. There can only be one owner at a time:
   - moves transfer it,
   - borrows lend it.
3. [x] Dropped at the end of the scope.

> Borrowing lets you use a value without taking ownership.

```rust
fn main() {
    let s = String::from("hello");
    println!("{s}");
}
```

| Kind | Copies? | Example |
|:-----|:-------:|--------:|
| move | no | `String` |
| copy | yes | `i32` |

---
Done."#;

fn text(lines: &[Line<'_>]) -> String {
    lines
        .iter()
        .map(|line| {
            line.spans
                .iter()
                .map(|s| s.content.as_ref())
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn an_answer_at_80_columns_without_colour() {
    let lines = render(
        ANSWER,
        Look {
            width: 80,
            color: false,
        },
    );
    insta::assert_snapshot!(text(&lines));
    assert!(lines.iter().all(|l| line_width(&l.spans) <= 80));
}

#[test]
fn the_same_answer_wraps_at_40_columns() {
    let lines = render(
        ANSWER,
        Look {
            width: 40,
            color: false,
        },
    );
    insta::assert_snapshot!(text(&lines));
    for line in &lines {
        assert!(
            line_width(&line.spans) <= 40,
            "{:?}",
            text(std::slice::from_ref(line))
        );
    }
}

#[test]
fn styles_mark_headings_emphasis_code_and_highlighted_blocks() {
    let lines = render(
        ANSWER,
        Look {
            width: 80,
            color: true,
        },
    );
    let span = |needle: &str| {
        lines
            .iter()
            .flat_map(|l| l.spans.iter())
            .find(|s| s.content.contains(needle))
            .unwrap_or_else(|| panic!("no span with {needle}"))
            .clone()
    };
    assert!(
        span("Ownership")
            .style
            .add_modifier
            .contains(Modifier::BOLD)
    );
    assert!(
        span("one owner")
            .style
            .add_modifier
            .contains(Modifier::BOLD)
    );
    assert!(
        span("dropped")
            .style
            .add_modifier
            .contains(Modifier::ITALIC)
    );
    assert_eq!(span("clone()").style.fg, Some(Color::Yellow));
    assert!(
        span("Kind").style.add_modifier.contains(Modifier::BOLD),
        "table headers are bold"
    );
    // The code block is coloured by syntect: its keyword and its string differ.
    let keyword = span("fn").style.fg;
    let string = span("hello").style.fg;
    assert!(matches!(keyword, Some(Color::Rgb(..))), "{keyword:?}");
    assert_ne!(keyword, string);
    // Without colour: no colours at all, bold and italic kept, backticks around inline code.
    let plain = render(
        ANSWER,
        Look {
            width: 80,
            color: false,
        },
    );
    assert!(
        plain
            .iter()
            .flat_map(|l| l.spans.iter())
            .all(|s| s.style.fg.is_none())
    );
    assert!(text(&plain).contains("`clone()`"));
}

#[test]
fn an_unfinished_answer_renders_what_has_come() {
    let partial = "Here is the fix:\n\n```rust\nfn main() {\n    let x";
    let lines = render(
        partial,
        Look {
            width: 80,
            color: false,
        },
    );
    assert_eq!(
        text(&lines),
        "Here is the fix:\n\n  fn main() {\n      let x"
    );
}
