//! HTML nested deeper than a recursive reader can follow (a page of ten thousand `<div>`s, an
//! answer a model was made to repeat), flattened: the tags of elements past a depth are left
//! out and their text kept, read tag by tag without building a tree, in linear time.

/// Elements that never hold others.
const VOID: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track",
    "wbr",
];

/// `html` with the tags of elements nested deeper than `max` left out (their text kept). The
/// elements open are counted as an HTML parser would see them at the most: a closing tag closes
/// the nearest open element of its name (and those inside it), and one that closes nothing open
/// is ignored, so stray closing tags cannot hide depth.
pub fn flattened(html: &str, max: usize) -> std::borrow::Cow<'_, str> {
    let mut out = String::new();
    let mut copied = 0;
    // The open elements up to `max` deep, and how many of each name are open deeper.
    let mut open: Vec<String> = Vec::new();
    let mut deeper: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    let mut at = 0;
    while let Some(offset) = html[at..].find('<') {
        let start = at + offset;
        let rest = &html[start..];
        let end = if rest.starts_with("<!--") {
            rest.find("-->").map_or(html.len(), |e| start + e + 3)
        } else {
            rest.find('>').map_or(html.len(), |e| start + e + 1)
        };
        at = end;
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
        if !element || (!closing && (tag.ends_with("/>") || VOID.contains(&name.as_str()))) {
            continue;
        }
        let drop = if closing {
            match deeper.get_mut(&name) {
                Some(count) if *count > 0 => {
                    *count -= 1;
                    true
                }
                _ => {
                    if let Some(position) = open.iter().rposition(|o| *o == name) {
                        open.truncate(position);
                    }
                    false
                }
            }
        } else if open.len() < max {
            open.push(name);
            false
        } else {
            *deeper.entry(name).or_default() += 1;
            true
        };
        if drop {
            out.push_str(&html[copied..start]);
            copied = end;
        }
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
    fn tags_past_the_depth_go_and_their_text_stays() {
        let deep = "<div>".repeat(5) + "words" + &"</div>".repeat(5);
        assert_eq!(flattened(&deep, 2), "<div><div>words</div></div>");
        let shallow = "<p>a <b>b</b><br>c</p><!-- <div> --><img src=x/>";
        assert!(matches!(
            flattened(shallow, 2),
            std::borrow::Cow::Borrowed(_)
        ));
        let huge = "<div>".repeat(100_000);
        assert_eq!(flattened(&huge, 3), "<div>".repeat(3));
        // Stray closing tags close nothing, so they hide no depth.
        let stray = "<div></span>".repeat(1_000);
        let flat = flattened(&stray, 3);
        assert_eq!(flat.matches("<div>").count(), 3, "{flat}");
        // A closing tag closes what is inside its element too.
        assert_eq!(
            flattened("<div><p><b>x</div><i>y</i>", 2),
            "<div><p>x</div><i>y</i>"
        );
    }
}
