//! A server's tool calls that are waiting for it, so that a question it asks during one (an
//! elicitation, a request for the model) reaches that call's user. Over streamable HTTP the
//! question comes on the response stream of the request it belongs to, and rmcp says which
//! ([`InboundStreamOrigin`]): it goes to the call that sent that request. Otherwise (stdio, a
//! server that asks on its standalone stream) it goes to the latest call.

use agentry::ids::ToolCallId;
use agentry::sync::lock;
use agentry::tool::{ToolContext, ToolError};
use rmcp::model::RequestId;
use rmcp::service::InboundStreamOrigin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How long a question that names its request waits for the call that sent it to note the
/// request's id (the call notes it once the request is on its way, which may be a moment
/// after the server has answered with a question).
const NOTING_WAIT: Duration = Duration::from_secs(1);

/// Where a call notes how a question asked during it ended the asking.
pub(crate) type AskingEnded = Arc<Mutex<Option<ToolError>>>;

/// The calls waiting, latest last.
#[derive(Default)]
pub(crate) struct CallsInFlight {
    waiting: Mutex<Vec<Waiting>>,
    /// Woken whenever a call notes a request it sent.
    noted: tokio::sync::Notify,
}

/// One call waiting for its server.
struct Waiting {
    ctx: ToolContext,
    unanswered: AskingEnded,
    /// The requests it has sent (one per round of a multi-round call).
    requests: Vec<RequestId>,
}

impl CallsInFlight {
    /// Notes `ctx` as waiting until the guard is dropped.
    pub(crate) fn enter(self: &Arc<Self>, ctx: &ToolContext) -> InFlight {
        let unanswered = Arc::new(Mutex::new(None));
        lock(&self.waiting).push(Waiting {
            ctx: ctx.clone(),
            unanswered: unanswered.clone(),
            requests: Vec::new(),
        });
        InFlight {
            calls: self.clone(),
            id: ctx.tool_call_id.clone(),
            unanswered,
        }
    }

    /// Notes that the call `call` sent the request `request`.
    pub(crate) fn sent(&self, call: &ToolCallId, request: RequestId) {
        let mut waiting = lock(&self.waiting);
        if let Some(waiting) = waiting.iter_mut().find(|w| &w.ctx.tool_call_id == call) {
            waiting.requests.push(request);
        }
        drop(waiting);
        self.noted.notify_waiters();
    }

    /// The call a question from `origin` belongs to, and where to note a question it left
    /// unanswered: the one that sent the request whose stream carried it, else the latest.
    pub(crate) async fn asking(
        &self,
        origin: Option<&InboundStreamOrigin>,
    ) -> Option<(ToolContext, AskingEnded)> {
        let Some(InboundStreamOrigin::OutboundRequest(request)) = origin else {
            return self.latest();
        };
        let named = async {
            loop {
                // Made before looking, so that a noting in between still wakes it.
                let noted = self.noted.notified();
                if let Some(found) = self.sender_of(request) {
                    return found;
                }
                noted.await;
            }
        };
        match tokio::time::timeout(NOTING_WAIT, named).await {
            Ok(found) => Some(found),
            Err(_) => self.latest(),
        }
    }

    /// The call that sent `request`, if it is still waiting.
    fn sender_of(&self, request: &RequestId) -> Option<(ToolContext, AskingEnded)> {
        lock(&self.waiting)
            .iter()
            .find(|w| w.requests.contains(request))
            .map(|w| (w.ctx.clone(), w.unanswered.clone()))
    }

    /// The latest call waiting.
    fn latest(&self) -> Option<(ToolContext, AskingEnded)> {
        lock(&self.waiting)
            .last()
            .map(|w| (w.ctx.clone(), w.unanswered.clone()))
    }
}

/// A call noted as waiting for its server.
pub(crate) struct InFlight {
    calls: Arc<CallsInFlight>,
    id: ToolCallId,
    unanswered: AskingEnded,
}

impl InFlight {
    /// How a question the server asked during the call ended the asking, if one did (the
    /// chat pauses for the answer, or the call was cancelled): the call ends so too.
    pub(crate) fn unanswered(&self) -> Option<ToolError> {
        lock(&self.unanswered).take()
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        lock(&self.calls.waiting).retain(|w| w.ctx.tool_call_id != self.id);
    }
}
