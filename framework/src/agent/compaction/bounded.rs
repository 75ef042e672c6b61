//! Tool results bounded before they enter the conversation: a result whose text is longer than
//! the limit keeps its start and its end, with a note between saying where the whole text is
//! kept (the session's temporary folder, which the model may read in parts).

use crate::model::ToolResult;
use crate::tool::{ContentBlock, SessionState};

/// The share of the limit the start keeps (the end keeps the rest).
const HEAD_SHARE: f64 = 0.8;

/// `result`, its text cut to `limit` characters (and the whole kept in `state`'s temporary
/// folder) when it is longer; images and other blocks are kept as they are.
pub(crate) fn bounded(mut result: ToolResult, limit: usize, state: &SessionState) -> ToolResult {
    let text = result.text();
    let total = text.chars().count();
    if total <= limit {
        return result;
    }
    let kept_at = keep(&text, &result, state);
    let head_chars = (limit as f64 * HEAD_SHARE) as usize;
    let tail_chars = limit - head_chars;
    let head: String = text.chars().take(head_chars).collect();
    let tail: String = text.chars().skip(total - tail_chars).collect();
    let note = match kept_at {
        Ok(path) => format!(
            "\n[… {} characters cut: the output is {total} characters, more than the {limit} a \
             result brings into the conversation. The whole is in {path}: read it there, in \
             parts (an offset and a limit), where more is needed. …]\n",
            total - head_chars - tail_chars,
        ),
        Err(problem) => format!(
            "\n[… {} characters cut: the output is {total} characters, more than the {limit} a \
             result brings into the conversation, and the whole could not be kept ({problem}). …]\n",
            total - head_chars - tail_chars,
        ),
    };
    let mut content = vec![ContentBlock::text(format!("{head}{note}{tail}"))];
    content.extend(
        result
            .content
            .into_iter()
            .filter(|block| !matches!(block, ContentBlock::Text { .. })),
    );
    result.content = content;
    result
}

/// Writes `text` into the session's temporary folder; its path, or why not.
fn keep(text: &str, result: &ToolResult, state: &SessionState) -> Result<String, String> {
    let folder = state
        .temp_dir()
        .map_err(|e| e.to_string())?
        .join("tool-results");
    std::fs::create_dir_all(&folder).map_err(|e| e.to_string())?;
    let name = agentry_plugin::paths::file_name_from(result.tool_call_id.as_str());
    let path = folder.join(format!("{name}.txt"));
    std::fs::write(&path, text).map_err(|e| e.to_string())?;
    Ok(path.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(text: &str) -> ToolResult {
        ToolResult {
            tool_call_id: "call/1".into(),
            content: vec![
                ContentBlock::text(text),
                ContentBlock::Image {
                    data: "AAAA".into(),
                    mime_type: "image/png".into(),
                },
            ],
            is_error: false,
        }
    }

    #[test]
    fn a_long_result_keeps_its_start_and_end_and_the_whole_on_disk() {
        let state = SessionState::default();
        let text: String = (0..5_000).map(|i| format!("line {i}\n")).collect();
        let cut = bounded(result(&text), 1_000, &state);
        let kept = cut.text();
        assert!(kept.starts_with("line 0\nline 1\n"), "{kept}");
        assert!(kept.ends_with("line 4999\n"), "{kept}");
        assert!(kept.chars().count() < 1_500, "{}", kept.chars().count());
        assert!(kept.contains(&format!(
            "the output is {} characters",
            text.chars().count()
        )));
        assert!(
            matches!(cut.content[1], ContentBlock::Image { .. }),
            "the image stays"
        );
        let path = state.temp_dir().unwrap().join("tool-results/call_1.txt");
        assert!(kept.contains(&path.display().to_string()), "{kept}");
        assert_eq!(std::fs::read_to_string(path).unwrap(), text);
        let short = bounded(result("short"), 1_000, &state);
        assert_eq!(short, result("short"));
    }

    #[test]
    fn characters_are_counted_not_bytes() {
        let state = SessionState::default();
        let text = "é".repeat(1_500);
        let cut = bounded(result(&text), 1_000, &state).text();
        assert!(
            cut.starts_with(&"é".repeat(800)),
            "a cut never splits a character"
        );
        assert!(
            bounded(result(&"é".repeat(1_000)), 1_000, &state)
                .text()
                .chars()
                .count()
                == 1_000
        );
    }
}
