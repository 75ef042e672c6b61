//! How `ToolSearch` ranks tools against a query: by its words, or by a regular expression.

use crate::model::ToolDefinition;
use regex::RegexBuilder;

/// The characters that make a query a regular expression rather than words.
const PATTERN_SIGNS: &[char] = &[
    '^', '$', '*', '+', '?', '(', ')', '[', ']', '{', '}', '|', '\\',
];

/// The longest query read as a pattern (a pattern is compiled with a size limit too).
const MOST_PATTERN: usize = 500;

/// The tools of `tools` that `query` matches best, at most `most`: a query with a pattern's
/// signs (`^`, `|`, `.*`, …) is a case-insensitive regular expression over each tool's name and
/// description (a match in the name counts more); other queries are words, each a word of the
/// tool's name (`create` in `mcp__github__create_issue`) counting most, then a part of it, then
/// one found in its description. Ties go by name.
pub(super) fn best(
    tools: &[ToolDefinition],
    query: &str,
    most: usize,
) -> Result<Vec<ToolDefinition>, String> {
    let query = query.trim();
    if query.is_empty() {
        return Err("the query is empty: give words, or a regular expression".to_owned());
    }
    let score: Box<dyn Fn(&ToolDefinition) -> usize> = if query.contains(PATTERN_SIGNS) {
        if query.len() > MOST_PATTERN {
            return Err(format!(
                "the pattern is longer than {MOST_PATTERN} characters"
            ));
        }
        let pattern = RegexBuilder::new(query)
            .case_insensitive(true)
            .size_limit(1 << 20)
            .build()
            .map_err(|problem| format!("`{query}` is not a regular expression: {problem}"))?;
        Box::new(move |tool: &ToolDefinition| {
            2 * usize::from(pattern.is_match(&tool.name))
                + usize::from(pattern.is_match(&tool.description))
        })
    } else {
        let words = words_of(query);
        Box::new(move |tool: &ToolDefinition| {
            let name = tool.name.to_lowercase();
            let name_words = words_of(&name);
            let description = tool.description.to_lowercase();
            words
                .iter()
                .map(|word| {
                    let in_name = if name_words.contains(word) {
                        4
                    } else if name.contains(word.as_str()) {
                        2
                    } else {
                        0
                    };
                    in_name + usize::from(description.contains(word.as_str()))
                })
                .sum()
        })
    };
    let mut scored: Vec<(usize, &ToolDefinition)> = tools
        .iter()
        .map(|tool| (score(tool), tool))
        .filter(|(score, _)| *score > 0)
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.name.cmp(&b.1.name)));
    Ok(scored
        .into_iter()
        .take(most)
        .map(|(_, tool)| tool.clone())
        .collect())
}

/// The words of `text`, lowercase: its runs of letters and digits.
fn words_of(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(str::to_lowercase)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str, description: &str) -> ToolDefinition {
        ToolDefinition {
            name: name.to_owned(),
            description: description.to_owned(),
            input_schema: serde_json::json!({"type": "object"}),
        }
    }

    fn catalogue() -> Vec<ToolDefinition> {
        vec![
            tool(
                "mcp__github__create_issue",
                "Create an issue in a repository.",
            ),
            tool(
                "mcp__github__list_issues",
                "List the issues of a repository.",
            ),
            tool("mcp__github__create_pull_request", "Open a pull request."),
            tool(
                "mcp__jira__create_ticket",
                "Create a Jira issue (a ticket).",
            ),
            tool("mcp__slack__post_message", "Post a message to a channel."),
        ]
    }

    fn names(found: Vec<ToolDefinition>) -> Vec<String> {
        found.into_iter().map(|tool| tool.name).collect()
    }

    #[test]
    fn words_in_the_name_count_more_than_words_in_the_description() {
        let found = best(&catalogue(), "create issue", 3).unwrap();
        assert_eq!(
            names(found),
            [
                "mcp__github__create_issue",
                "mcp__jira__create_ticket",
                "mcp__github__create_pull_request"
            ]
        );
        assert_eq!(
            names(best(&catalogue(), "SLACK", 5).unwrap()),
            ["mcp__slack__post_message"]
        );
        assert!(best(&catalogue(), "kubernetes", 5).unwrap().is_empty());
    }

    #[test]
    fn a_pattern_is_a_case_insensitive_regular_expression() {
        let found = best(&catalogue(), "^mcp__github__(create|list)_", 5).unwrap();
        assert_eq!(
            names(found),
            [
                "mcp__github__create_issue",
                "mcp__github__create_pull_request",
                "mcp__github__list_issues"
            ]
        );
        assert_eq!(
            names(best(&catalogue(), "PULL.*REQUEST$", 5).unwrap()),
            ["mcp__github__create_pull_request"]
        );
    }

    #[test]
    fn a_query_that_cannot_be_read_is_an_error_the_model_can_act_on() {
        assert!(best(&catalogue(), "  ", 5).unwrap_err().contains("empty"));
        let broken = best(&catalogue(), "create(", 5).unwrap_err();
        assert!(broken.contains("not a regular expression"), "{broken}");
        let huge = format!("({})", "a|".repeat(400));
        assert!(best(&catalogue(), &huge, 5).is_err());
    }
}
