//! Tool names and call ids as a service takes them. Gemini takes names of at most 64
//! characters, a letter or `_` first, then letters, digits, `_`, `.`, `:` and `-` ([`GEMINI`]);
//! Bedrock's Converse at most 64 of letters, digits, `_` and `-` ([`CONVERSE`]). A name that
//! breaks the rules (an MCP tool's `mcp__server__a_long_tool_name…`) is sent shortened or
//! cleaned, with a hash of the whole name so two never meet, and mapped back when the model
//! calls it ([`NameRules::originals`]). Anthropic's Messages API and Converse take call ids of
//! letters, digits, `_` and `-` ([`CALL_IDS`]): a call another provider named otherwise
//! (`functions.Read:0`) goes back to them under an id made the same way, on the call and on its
//! result alike.

use std::collections::HashMap;

/// The rules a service's tool names follow.
#[derive(Debug, Clone, Copy)]
pub struct NameRules {
    /// The longest name taken.
    pub limit: usize,
    /// The characters taken beside ASCII letters and digits.
    pub punctuation: &'static str,
    /// Whether the first character must be a letter or `_`.
    pub letter_first: bool,
}

/// Gemini's rules (the Gemini API's and Vertex AI's).
pub const GEMINI: NameRules = NameRules {
    limit: 64,
    punctuation: "_.:-",
    letter_first: true,
};

/// Bedrock Converse's rules.
pub const CONVERSE: NameRules = NameRules {
    limit: 64,
    punctuation: "_-",
    letter_first: false,
};

/// The tools' own names by the names a service was given, where they differ: what a decoder
/// gives a call back its tool's name with.
#[derive(Debug, Clone, Default)]
pub struct Originals(HashMap<String, String>);

impl Originals {
    /// The tool's own name for the name the service called it by.
    pub fn restore(&self, called: String) -> String {
        self.0.get(&called).cloned().unwrap_or(called)
    }
}

/// The call ids Anthropic's Messages API and Bedrock's Converse take.
pub const CALL_IDS: NameRules = CONVERSE;

impl NameRules {
    /// The name the service is given for tool `name`.
    pub fn name_for(&self, name: &str) -> String {
        if self.is_valid(name) {
            return name.to_owned();
        }
        let cleaned: String = name
            .chars()
            .map(|c| if self.takes(c) { c } else { '_' })
            .collect();
        let lead = if !self.letter_first
            || cleaned.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        {
            ""
        } else {
            "_"
        };
        // Room for the lead, `_` and eight hex digits.
        let kept: String = cleaned.chars().take(self.limit - 10 - lead.len()).collect();
        format!("{lead}{kept}_{:08x}", fnv1a(name))
    }

    /// The tools' original names by the names the service was given, for those that differ.
    pub fn originals<'a>(&self, names: impl IntoIterator<Item = &'a str>) -> Originals {
        Originals(
            names
                .into_iter()
                .filter_map(|name| {
                    let sent = self.name_for(name);
                    (sent != name).then(|| (sent, name.to_owned()))
                })
                .collect(),
        )
    }

    fn takes(&self, c: char) -> bool {
        c.is_ascii_alphanumeric() || self.punctuation.contains(c)
    }

    fn is_valid(&self, name: &str) -> bool {
        !name.is_empty()
            && name.len() <= self.limit
            && (!self.letter_first
                || name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_'))
            && name.chars().all(|c| self.takes(c))
    }
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
        assert_eq!(GEMINI.name_for("Read"), "Read");
        assert_eq!(GEMINI.name_for("mcp__docs__search"), "mcp__docs__search");
        let long = format!(
            "mcp__knowledge_base__{}",
            "search_every_document_".repeat(3)
        );
        let other = format!("{long}x");
        let (a, b) = (GEMINI.name_for(&long), GEMINI.name_for(&other));
        assert!(a.len() <= 64 && GEMINI.is_valid(&a), "{a}");
        assert_ne!(a, b);
        assert_eq!(
            GEMINI.name_for("9 lives/tool"),
            format!("_9_lives_tool_{:08x}", fnv1a("9 lives/tool"))
        );
        let back = GEMINI.originals([long.as_str(), "Read"]);
        assert_eq!(back.restore(a.clone()), long);
        assert_eq!(back.restore("Read".to_owned()), "Read");
        assert_eq!(back.0.len(), 1);
    }

    #[test]
    fn converse_takes_neither_dots_nor_colons_but_a_digit_first() {
        assert_eq!(CONVERSE.name_for("9lives"), "9lives");
        assert_eq!(GEMINI.name_for("a.b:c"), "a.b:c");
        let sent = CONVERSE.name_for("a.b:c");
        assert_eq!(sent, format!("a_b_c_{:08x}", fnv1a("a.b:c")));
        let long = "mcp__server__".to_owned() + &"x".repeat(80);
        let sent = CONVERSE.name_for(&long);
        assert!(sent.len() <= 64 && CONVERSE.is_valid(&sent), "{sent}");
        assert_eq!(CONVERSE.originals([long.as_str()]).restore(sent), long);
    }
}
