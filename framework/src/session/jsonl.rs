//! [`TranscriptFile`]: a session's conversation as a JSON-lines file, kept current message by
//! message, in the line shape of Claude Code's transcripts that hooks read (`transcript_path`):
//! each line a `user` or `assistant` entry with `uuid`, `parentUuid`, `sessionId`, `timestamp`,
//! `cwd` and the `message` (`role`, `content` blocks: `text`, `thinking`, `tool_use`,
//! `tool_result`; an assistant's `model`). It differs from Claude Code's in what agentry has no
//! counterpart for: no `requestId`, `gitBranch` or `toolUseResult`, one entry per message
//! (not per content block), and `version` is agentry's.

use crate::model::{AssistantContent, Message};
use crate::tool::ContentBlock;
use serde_json::{Value, json};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// A session's JSON-lines transcript, in the line shape of Claude Code's (see
/// [`append`](Self::append)).
#[derive(Debug)]
pub struct TranscriptFile {
    path: PathBuf,
    session_id: String,
    cwd: PathBuf,
    /// The last entry's `uuid`: the next one's `parentUuid`.
    last: Mutex<Option<String>>,
}

impl TranscriptFile {
    /// The transcript at `path` of the session `session_id` in `cwd`; an existing file (a
    /// resumed session's) is continued.
    pub fn open(path: PathBuf, session_id: &str, cwd: &Path) -> std::io::Result<Self> {
        if let Some(folder) = path.parent() {
            std::fs::create_dir_all(folder)?;
        }
        let last = match std::fs::read_to_string(&path) {
            Ok(text) => text
                .lines()
                .rev()
                .find_map(|line| serde_json::from_str::<Value>(line).ok())
                .and_then(|entry| entry["uuid"].as_str().map(str::to_owned)),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => None,
            Err(error) => return Err(error),
        };
        Ok(Self {
            path,
            session_id: session_id.to_owned(),
            cwd: cwd.to_path_buf(),
            last: Mutex::new(last),
        })
    }

    /// Where it is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends `message` as one line: a `user` or `assistant` entry with `uuid`, `parentUuid`
    /// (the entry before), `sessionId`, `timestamp`, `cwd` and the `message`. A transcript
    /// that cannot be written is said in the error; the conversation goes on without it.
    pub fn append(&self, message: &Message) -> std::io::Result<()> {
        let mut last = crate::sync::lock(&self.last);
        let uuid = uuid::Uuid::new_v4().to_string();
        let (kind, message) = entry_message(message);
        let entry = json!({
            "type": kind,
            "uuid": uuid,
            "parentUuid": *last,
            "sessionId": self.session_id,
            "timestamp": chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            "cwd": self.cwd,
            "version": env!("CARGO_PKG_VERSION"),
            "isSidechain": false,
            "userType": "external",
            "message": message,
        });
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)?;
        // One write per line, so a reader never sees half an entry.
        file.write_all(format!("{entry}\n").as_bytes())?;
        *last = Some(uuid);
        Ok(())
    }
}

/// An entry's `type` and `message` for `message`.
fn entry_message(message: &Message) -> (&'static str, Value) {
    match message {
        Message::User { content } => (
            "user",
            json!({"role": "user", "content": content.iter().map(block).collect::<Vec<_>>()}),
        ),
        Message::Assistant { content, origin } => {
            let content: Vec<Value> = content
                .iter()
                .filter_map(|part| match part {
                    AssistantContent::Text { text } => Some(json!({"type": "text", "text": text})),
                    AssistantContent::Thinking { text, .. } => {
                        Some(json!({"type": "thinking", "thinking": text}))
                    }
                    AssistantContent::RedactedThinking { .. } => None,
                    AssistantContent::ToolCall {
                        id,
                        name,
                        arguments,
                    } => Some(json!({
                        "type": "tool_use", "id": id, "name": name, "input": arguments,
                    })),
                })
                .collect();
            (
                "assistant",
                json!({"role": "assistant", "model": origin, "type": "message", "content": content}),
            )
        }
        Message::ToolResults { results } => {
            let content: Vec<Value> = results
                .iter()
                .map(|result| {
                    json!({
                        "type": "tool_result",
                        "tool_use_id": result.tool_call_id,
                        "content": result.content.iter().map(block).collect::<Vec<_>>(),
                        "is_error": result.is_error,
                    })
                })
                .collect();
            ("user", json!({"role": "user", "content": content}))
        }
    }
}

/// A content block as the transcript gives it.
fn block(block: &ContentBlock) -> Value {
    match block {
        ContentBlock::Text { text } => json!({"type": "text", "text": text}),
        ContentBlock::Image { mime_type, .. } => {
            json!({"type": "image", "source": {"type": "base64", "media_type": mime_type}})
        }
        other => serde_json::to_value(other).unwrap_or(Value::Null),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ToolResult;

    #[test]
    fn entries_chain_and_carry_claude_codes_fields() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("s.jsonl");
        let file = TranscriptFile::open(path.clone(), "s", folder.path()).unwrap();
        file.append(&Message::user_text("hello")).unwrap();
        file.append(&Message::Assistant {
            content: vec![AssistantContent::ToolCall {
                id: "c1".into(),
                name: "Bash".into(),
                arguments: json!({"command": "ls"}),
            }],
            origin: Some("scripted/m".into()),
        })
        .unwrap();
        file.append(&Message::ToolResults {
            results: vec![ToolResult {
                tool_call_id: "c1".into(),
                content: vec![ContentBlock::text("a.txt")],
                is_error: false,
            }],
        })
        .unwrap();
        // A resumed session's transcript goes on from its last entry.
        let again = TranscriptFile::open(path.clone(), "s", folder.path()).unwrap();
        again.append(&Message::user_text("more")).unwrap();
        let lines: Vec<Value> = std::fs::read_to_string(&path)
            .unwrap()
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        assert_eq!(lines.len(), 4);
        assert_eq!(lines[0]["parentUuid"], Value::Null);
        for pair in lines.windows(2) {
            assert_eq!(pair[1]["parentUuid"], pair[0]["uuid"]);
        }
        assert_eq!(lines[0]["message"]["content"][0]["text"], "hello");
        assert_eq!(lines[1]["type"], "assistant");
        assert_eq!(lines[1]["message"]["content"][0]["type"], "tool_use");
        assert_eq!(lines[1]["message"]["content"][0]["input"]["command"], "ls");
        assert_eq!(lines[2]["message"]["content"][0]["tool_use_id"], "c1");
        assert_eq!(lines[3]["sessionId"], "s");
    }
}
