//! Playing a recording back: [`ReplayModel`] answers each request with the response recorded
//! for it, offline, and fails loudly when the agent asks something the recording does not hold
//! (which request, where in it, and a diff of the two).
//!
//! A request plays the first unplayed recorded exchange whose request is the same (so
//! sub-agents running side by side may ask in another order than when recorded); when none is,
//! the error compares it with the next unplayed one. Where the recording has `[REDACTED]`, any
//! text matches: the live request holds the secret the recording left out.

use super::record::{Exchange, REDACTED, RecordingHeader};
use super::{Model, ModelError, ModelRequest, ModelStream};
use crate::sync::lock;
use crate::text::clip;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// How many characters of each side a divergence shows at most.
const DIFF_CHARS: usize = 4_000;

/// A model that plays a recording back.
pub struct ReplayModel {
    path: PathBuf,
    header: RecordingHeader,
    exchanges: Vec<Exchange>,
    /// Each exchange's request as JSON, to compare live requests with.
    recorded: Vec<Value>,
    /// Which exchanges have been played, and how many requests came.
    played: Mutex<(Vec<bool>, usize)>,
}

impl ReplayModel {
    /// Reads the recording at `path`.
    pub fn from_file(path: &Path) -> Result<Self, ModelError> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            replay_error(format!("cannot read the recording {}: {e}", path.display()))
        })?;
        Self::parse(path, &text)
    }

    fn parse(path: &Path, text: &str) -> Result<Self, ModelError> {
        let bad = |line: usize, problem: String| {
            replay_error(format!(
                "{} line {line} is not part of a recording: {problem}",
                path.display()
            ))
        };
        let mut lines = text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty());
        let (_, first) = lines
            .next()
            .ok_or_else(|| bad(1, "the file is empty".to_owned()))?;
        let header: RecordingHeader =
            serde_json::from_str(first).map_err(|e| bad(1, e.to_string()))?;
        let exchanges = lines
            .map(|(n, line)| serde_json::from_str(line).map_err(|e| bad(n + 1, e.to_string())))
            .collect::<Result<Vec<Exchange>, _>>()?;
        let recorded = exchanges
            .iter()
            .map(|exchange| serde_json::to_value(&exchange.request).map(as_the_model_reads_it))
            .collect::<Result<_, _>>()
            .map_err(|e| replay_error(e.to_string()))?;
        Ok(Self {
            recorded,
            path: path.to_path_buf(),
            played: Mutex::new((vec![false; exchanges.len()], 0)),
            header,
            exchanges,
        })
    }

    /// The recorded exchanges not played yet.
    pub fn unplayed(&self) -> usize {
        lock(&self.played)
            .0
            .iter()
            .filter(|played| !**played)
            .count()
    }
}

#[async_trait::async_trait]
impl Model for ReplayModel {
    fn name(&self) -> String {
        self.header.model.clone()
    }

    fn context_window(&self) -> Option<u64> {
        self.header.context_window
    }

    fn accepts_images(&self) -> bool {
        self.header.accepts_images
    }

    async fn stream(&self, request: ModelRequest) -> Result<ModelStream, ModelError> {
        let live = serde_json::to_value(&request)
            .map(as_the_model_reads_it)
            .map_err(|e| replay_error(e.to_string()))?;
        let exchange = {
            let mut played = lock(&self.played);
            played.1 += 1;
            let number = played.1;
            let unplayed: Vec<usize> = (0..self.exchanges.len())
                .filter(|&i| !played.0[i])
                .collect();
            let same = unplayed
                .iter()
                .copied()
                .find(|&i| first_difference(&self.recorded[i], &live, String::new()).is_none());
            match (same, unplayed.first()) {
                (Some(index), _) => {
                    played.0[index] = true;
                    self.exchanges[index].clone()
                }
                (None, Some(&next)) => {
                    return Err(replay_error(format!(
                        "{}: request {number} diverges from recorded request {}: {}",
                        self.path.display(),
                        next + 1,
                        divergence(&self.recorded[next], &live)
                    )));
                }
                (None, None) => {
                    return Err(replay_error(format!(
                        "{}: request {number} was not recorded: the recording holds {} requests, all played",
                        self.path.display(),
                        self.exchanges.len()
                    )));
                }
            }
        };
        let events = exchange.events.into_iter().map(Ok);
        let end = exchange.error.map(|error| Err(ModelError::from(error)));
        Ok(Box::pin(futures::stream::iter(events.chain(end))))
    }
}

/// Where two requests first differ, and a diff of the two values there.
/// A request as its model reads it: without the answers' origins, which say who wrote them
/// (for the session) and which no model reads; so a recording matches whether it was made
/// before origins were kept or after, with any model.
fn as_the_model_reads_it(mut request: Value) -> Value {
    if let Some(messages) = request.get_mut("messages").and_then(Value::as_array_mut) {
        for message in messages.iter_mut().filter_map(Value::as_object_mut) {
            message.remove("origin");
        }
    }
    request
}

fn divergence(recorded: &Value, live: &Value) -> String {
    match first_difference(recorded, live, String::new()) {
        Some((path, recorded, live)) => {
            let show = |value: Option<&Value>| match value {
                None => "(absent)\n".to_owned(),
                Some(Value::String(text)) => format!("{text}\n"),
                Some(other) => format!(
                    "{}\n",
                    serde_json::to_string_pretty(other).unwrap_or_default()
                ),
            };
            let cut = |text: String| format!("{}\n", clip(text.trim_end(), DIFF_CHARS));
            let (recorded, live) = (cut(show(recorded)), cut(show(live)));
            let diff = similar::TextDiff::from_lines(&recorded, &live)
                .unified_diff()
                .context_radius(2)
                .header("recorded", "live")
                .to_string();
            format!(
                "{} differs\n{diff}",
                if path.is_empty() {
                    "the request"
                } else {
                    &path
                }
            )
        }
        None => "the requests are equal".to_owned(),
    }
}

/// The path (`messages[2].content[0].text`) of the first place two values differ, and the two
/// values there (`None`: absent on that side).
fn first_difference<'a>(
    recorded: &'a Value,
    live: &'a Value,
    path: String,
) -> Option<(String, Option<&'a Value>, Option<&'a Value>)> {
    match (recorded, live) {
        (Value::Object(a), Value::Object(b)) => {
            let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
            keys.sort();
            keys.dedup();
            keys.into_iter().find_map(|key| {
                let at = if path.is_empty() {
                    key.clone()
                } else {
                    format!("{path}.{key}")
                };
                match (a.get(key), b.get(key)) {
                    (Some(x), Some(y)) => first_difference(x, y, at),
                    (x, y) => Some((at, x, y)),
                }
            })
        }
        (Value::Array(a), Value::Array(b)) => (0..a.len().max(b.len())).find_map(|i| {
            let at = format!("{path}[{i}]");
            match (a.get(i), b.get(i)) {
                (Some(x), Some(y)) => first_difference(x, y, at),
                (x, y) => Some((at, x, y)),
            }
        }),
        (Value::String(a), Value::String(b)) if redacted_matches(a, b) => None,
        (a, b) if a == b => None,
        (a, b) => Some((path, Some(a), Some(b))),
    }
}

/// Whether the recorded text `recorded`, where `[REDACTED]` stands for any text, matches `live`.
fn redacted_matches(recorded: &str, live: &str) -> bool {
    if !recorded.contains(REDACTED) {
        return recorded == live;
    }
    let pattern: Vec<String> = recorded.split(REDACTED).map(regex::escape).collect();
    regex::Regex::new(&format!("^(?s:{})$", pattern.join(".*?")))
        .is_ok_and(|pattern| pattern.is_match(live))
}

/// The error of a replay that cannot answer: `message` says why.
fn replay_error(message: impl Into<String>) -> ModelError {
    ModelError::Failed {
        model: "replay",
        message: message.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::record::{RecordedError, RecordingModel, Redactor};
    use crate::model::scripted::{ScriptedModel, ScriptedResponse};
    use crate::model::{Message, ModelError};
    use futures::StreamExt;
    use serde_json::json;
    use std::sync::Arc;

    fn request(text: &str) -> ModelRequest {
        ModelRequest {
            system: "Date: 2026-11-23".to_owned(),
            messages: vec![Message::user_text(text)],
            tools: Vec::new(),
            environment: None,
            max_output_tokens: None,
        }
    }

    #[tokio::test]
    async fn abandoned_and_failed_responses_are_recorded_as_such_and_replay_alike() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.jsonl");
        let inner = ScriptedModel::new([
            ScriptedResponse::text("first").then_text(" and more"),
            ScriptedResponse {
                error: Some("overloaded".to_owned()),
                ..ScriptedResponse::default()
            },
        ]);
        let redactor = Redactor::new(&["sk-[a-z0-9]+".to_owned()])
            .unwrap()
            .with_secrets(["hunter2-secret".to_owned(), "short".to_owned()])
            .blank_environment();
        let model = RecordingModel::create(Arc::new(inner), &path, redactor).unwrap();
        let mut abandoned = model
            .stream(request("key sk-abc1 and hunter2-secret, short"))
            .await
            .unwrap();
        assert!(abandoned.next().await.is_some());
        drop(abandoned);
        let failed = match model.stream(request("again")).await {
            Ok(stream) => stream
                .collect::<Vec<_>>()
                .await
                .into_iter()
                .find_map(Result::err),
            Err(error) => Some(error),
        };
        assert!(matches!(failed, Some(ModelError::Api { .. })), "{failed:?}");

        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<Exchange> = text
            .lines()
            .skip(1)
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert!(lines[0].interrupted);
        assert_eq!(lines[0].events.len(), 1);
        assert_eq!(lines[0].request.system, REDACTED);
        assert_eq!(
            lines[0].request.messages,
            [Message::user_text("key [REDACTED] and [REDACTED], short")]
        );
        assert!(matches!(lines[1].error, Some(RecordedError::Api { .. })));

        let replay = ReplayModel::from_file(&path).unwrap();
        let played: Vec<_> = replay
            .stream(request("key sk-zzz9 and another-secret, short"))
            .await
            .unwrap()
            .collect()
            .await;
        assert_eq!(played.len(), 1);
        let again: Vec<_> = replay
            .stream(request("again"))
            .await
            .unwrap()
            .collect()
            .await;
        assert!(matches!(again.last(), Some(Err(ModelError::Api { .. }))));
        assert_eq!(replay.unplayed(), 0);
        let extra = replay
            .stream(request("more"))
            .await
            .err()
            .unwrap()
            .to_string();
        assert!(extra.contains("request 3 was not recorded"), "{extra}");
    }

    #[test]
    fn the_first_difference_is_named_by_its_path_with_a_diff() {
        let recorded = json!({"system": "s", "messages": [
            {"role": "user", "content": [{"type": "text", "text": "one\ntwo\nthree"}]}]});
        let live = json!({"system": "s", "messages": [
            {"role": "user", "content": [{"type": "text", "text": "one\nTWO\nthree"}]},
            {"role": "assistant"}]});
        let message = divergence(&recorded, &live);
        assert!(
            message.starts_with("messages[0].content[0].text differs\n--- recorded\n+++ live\n"),
            "{message}"
        );
        assert!(message.contains("-two\n+TWO\n"), "{message}");
        let longer = divergence(&json!({"messages": [1]}), &json!({"messages": [1, 2]}));
        assert!(longer.starts_with("messages[1] differs"), "{longer}");
        assert!(longer.contains("-(absent)\n+2\n"), "{longer}");
    }

    #[test]
    fn redacted_text_matches_whatever_stood_there() {
        assert!(redacted_matches(
            "token [REDACTED] for [REDACTED].",
            "token abc for x\ny."
        ));
        assert!(!redacted_matches(
            "token [REDACTED] for x",
            "token abc for y"
        ));
        assert!(redacted_matches("plain", "plain"));
        assert_eq!(
            first_difference(
                &json!({"t": "key=[REDACTED]"}),
                &json!({"t": "key=sk-1"}),
                String::new()
            ),
            None
        );
    }
}
