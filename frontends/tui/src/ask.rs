//! The chat's questions to the user — may this call run? what does the user choose? — sent to
//! the terminal's loop, which shows them as menus and sends the answers back.

use agentry::permission::{PermissionHandler, PermissionOutcome, PermissionRequest};
use agentry::question::{QuestionHandler, QuestionOutcome, QuestionRequest};
use tokio::sync::{mpsc, oneshot};

/// A question waiting for the user, with where its answer goes.
pub enum Asked {
    /// May a tool call run?
    Permission(Box<PermissionRequest>, oneshot::Sender<PermissionOutcome>),
    /// The model's questions (AskUserQuestion).
    Questions(QuestionRequest, oneshot::Sender<QuestionOutcome>),
}

/// The handlers a chat is given; each sends its question to the loop.
#[derive(Clone)]
pub struct AskTheUser(pub mpsc::UnboundedSender<Asked>);

#[agentry::async_trait]
impl PermissionHandler for AskTheUser {
    async fn request_permission(&self, request: PermissionRequest) -> PermissionOutcome {
        let (answer, answered) = oneshot::channel();
        if self
            .0
            .send(Asked::Permission(Box::new(request), answer))
            .is_err()
        {
            return PermissionOutcome::Cancelled;
        }
        answered.await.unwrap_or(PermissionOutcome::Cancelled)
    }
}

#[agentry::async_trait]
impl QuestionHandler for AskTheUser {
    async fn ask(&self, request: QuestionRequest) -> QuestionOutcome {
        let (answer, answered) = oneshot::channel();
        if self.0.send(Asked::Questions(request, answer)).is_err() {
            return QuestionOutcome::Cancelled;
        }
        answered.await.unwrap_or(QuestionOutcome::Cancelled)
    }
}
