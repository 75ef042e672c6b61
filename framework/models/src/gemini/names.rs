//! Tool names as Gemini takes them: at most 64 characters, a letter or `_` first, then letters,
//! digits, `_`, `.`, `:` and `-`. A name that is not one (an MCP tool's
//! `mcp__server__a_long_tool_name…`) is sent shortened or cleaned, with a hash of the whole
//! name so two never meet, and mapped back when the model calls it.

use std::collections::HashMap;

/// The longest name Gemini takes.
const LIMIT: usize = 64;

/// The name Gemini is given for tool `name`.
pub fn gemini_name(name: &str) -> String {
    if is_valid(name) {
        return name.to_owned();
    }
    let cleaned: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "_.:-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    let lead = if cleaned.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        ""
    } else {
        "_"
    };
    // Room for the lead, `_` and eight hex digits.
    let kept: String = cleaned.chars().take(LIMIT - 10 - lead.len()).collect();
    format!("{lead}{kept}_{:08x}", fnv1a(name))
}

/// The tools' original names by the names Gemini was given, for those that differ.
pub fn originals<'a>(names: impl IntoIterator<Item = &'a str>) -> HashMap<String, String> {
    names
        .into_iter()
        .filter_map(|name| {
            let sent = gemini_name(name);
            (sent != name).then(|| (sent, name.to_owned()))
        })
        .collect()
}

fn is_valid(name: &str) -> bool {
    name.len() <= LIMIT
        && name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_.:-".contains(c))
}

/// FNV-1a, 32 bits: a stable hash (the same in every build, unlike the standard library's).
fn fnv1a(text: &str) -> u32 {
    text.bytes().fold(0x811c_9dc5, |hash, byte| {
        (hash ^ u32::from(byte)).wrapping_mul(0x0100_0193)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_and_odd_names_are_shortened_uniquely_and_mapped_back() {
        assert_eq!(gemini_name("Read"), "Read");
        assert_eq!(gemini_name("mcp__docs__search"), "mcp__docs__search");
        let long = format!(
            "mcp__knowledge_base__{}",
            "search_every_document_".repeat(3)
        );
        let other = format!("{long}x");
        let (a, b) = (gemini_name(&long), gemini_name(&other));
        assert!(a.len() <= 64 && is_valid(&a), "{a}");
        assert_ne!(a, b);
        assert_eq!(
            gemini_name("9 lives/tool"),
            format!("_9_lives_tool_{:08x}", fnv1a("9 lives/tool"))
        );
        let back = originals([long.as_str(), "Read"]);
        assert_eq!(back.get(&a), Some(&long));
        assert_eq!(back.len(), 1);
    }
}
