//! What the built-in commands (`/rewind`, `/compact`) share: reading their arguments.

use agent_client_protocol::v1::schema as acp;

/// The arguments of a prompt that is the built-in command `/NAME …` alone, if it is one.
pub fn arguments(prompt: &[acp::ContentBlock], name: &str) -> Option<String> {
    let [acp::ContentBlock::Text(text)] = prompt else {
        return None;
    };
    let rest = text.text.trim().strip_prefix('/')?.strip_prefix(name)?;
    (rest.is_empty() || rest.starts_with(char::is_whitespace)).then(|| rest.trim().to_owned())
}
