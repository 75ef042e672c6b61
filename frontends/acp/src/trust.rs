//! The question an editor is asked once, at the first prompt, when the folder the agent was
//! started in has settings of its own that were left out because the folder is not trusted:
//! `session/request_permission` about a call-like subject that names what they would enable.
//! Trusting it keeps the answer; the settings take effect when the agent starts again (the
//! editor restarts it), as the answer says.

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema as acp;
use agentry::sync::lock;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// The call id the question is asked under.
const TRUST_CALL_ID: &str = "trust_folder";

/// A folder not yet trusted, and how to trust it.
#[derive(Clone)]
pub struct TrustQuestion {
    /// The folder.
    pub folder: PathBuf,
    /// What its settings would enable, one item each.
    pub enables: Vec<String>,
    /// Trusts the folder, keeping the answer (its error, for the user).
    pub trust: Arc<dyn Fn() -> Result<(), String> + Send + Sync>,
}

/// The question, until it has been asked.
#[derive(Default)]
pub struct PendingTrust(Mutex<Option<TrustQuestion>>);

impl PendingTrust {
    /// `question`, to be asked at the first prompt.
    pub fn new(question: Option<TrustQuestion>) -> Self {
        Self(Mutex::new(question))
    }

    /// Asks the question in `session_id`, once for the agent; what to tell the user after it,
    /// if anything.
    pub async fn ask_once(
        &self,
        connection: &ConnectionTo<Client>,
        session_id: &acp::SessionId,
    ) -> Option<String> {
        let question = lock(&self.0).take()?;
        let items: Vec<String> = question
            .enables
            .iter()
            .map(|item| format!("- {item}"))
            .collect();
        let text = format!(
            "The folder {} has settings of its own that run code, allow more than you have, or send your keys or conversation elsewhere. They were left out, because the folder is not trusted:\n{}",
            question.folder.display(),
            items.join("\n")
        );
        let subject = acp::ToolCallUpdate::new(
            TRUST_CALL_ID,
            acp::ToolCallUpdateFields::new()
                .title(format!("Trust {}?", question.folder.display()))
                .kind(acp::ToolKind::Other)
                .content(vec![acp::ToolCallContent::Content(acp::Content::new(
                    acp::ContentBlock::from(text),
                ))]),
        );
        let options = vec![
            acp::PermissionOption::new(
                "trust",
                "Trust this folder",
                acp::PermissionOptionKind::AllowAlways,
            ),
            acp::PermissionOption::new("not_now", "Not now", acp::PermissionOptionKind::RejectOnce),
        ];
        let request = acp::RequestPermissionRequest::new(session_id.clone(), subject, options);
        let chose_trust = match connection.send_request(request).block_task().await {
            Ok(answer) => matches!(
                answer.outcome,
                acp::RequestPermissionOutcome::Selected(selected) if selected.option_id.to_string() == "trust"
            ),
            Err(error) => {
                tracing::warn!("the folder's trust was not asked ({error})");
                false
            }
        };
        if !chose_trust {
            return None;
        }
        Some(match (question.trust)() {
            Ok(()) => format!(
                "{} is trusted now: its settings take effect when the agent starts again.",
                question.folder.display()
            ),
            Err(error) => format!(
                "{} could not be trusted: {error}",
                question.folder.display()
            ),
        })
    }
}
