//! The host services a plugin's call may ask for (ABI 1.1): the front-end client's files and
//! terminals, a side question to the session's model and a sub-agent run through the agent's
//! loop, served from the call's own
//! [`ToolContext`] exactly as a built-in tool would use them, and answered through the
//! plugin's `answer`.

use agentry::tool::{Ended, ToolContext};
use agentry_plugin_abi::abi::PluginV1;
use agentry_plugin_abi::wire::{Service, ServiceAnswer, ServiceCall, ServiceRequest};
use futures::future::BoxFuture;
use serde::Serialize;
use tracing::Instrument;

/// What one plugin call was offered, and how to answer it.
pub(super) struct Offered {
    /// The call's own context: its client and host services, and its cancellation (a side
    /// question still being asked when it fires is answered with an error; the other services
    /// run to their end, as a cancelled call uses them to clean up, killing and releasing its
    /// terminal). A sub-agent runs for the call, nested under it.
    ctx: ToolContext,
    /// Where requests are served (the runtime the call runs on).
    runtime: tokio::runtime::Handle,
    table: &'static PluginV1,
    call: u64,
    /// The call's span: the requests are served in it (a sub-agent's spans are its children).
    span: tracing::Span,
}

impl Offered {
    /// The services `ctx` offers the plugin's call `call`. Must be made on a tokio runtime, in
    /// the call's span.
    pub(super) fn new(ctx: &ToolContext, table: &'static PluginV1, call: u64) -> Self {
        Self {
            ctx: ctx.clone(),
            runtime: tokio::runtime::Handle::current(),
            table,
            call,
            span: tracing::Span::current(),
        }
    }

    /// The services to name in the call's request: none for a plugin built for ABI 1.0, which
    /// has no way to take an answer.
    pub(super) fn names(&self) -> Vec<Service> {
        if !self.table.has_v1_1() {
            return Vec::new();
        }
        [
            (self.ctx.client.files.is_some(), Service::ClientFiles),
            (
                self.ctx.client.terminals.is_some(),
                Service::ClientTerminals,
            ),
            (
                self.ctx.host.side_questions.is_some(),
                Service::SideQuestions,
            ),
            (self.ctx.host.sub_agents.is_some(), Service::SubAgents),
            (self.ctx.host.ask_user.is_some(), Service::AskUser),
            (self.ctx.host.request_rules.is_some(), Service::RequestRules),
            (self.ctx.host.hooks.is_some(), Service::Hooks),
        ]
        .into_iter()
        .filter_map(|(offered, service)| offered.then_some(service))
        .collect()
    }
}

/// Serves one request on the call's runtime and answers it.
pub(super) fn serve(offered: std::sync::Arc<Offered>, call: ServiceCall) {
    let runtime = offered.runtime.clone();
    let span = offered.span.clone();
    let serving = async move {
        let answer = perform(&offered, call.request).await;
        let bytes = serde_json::to_vec(&answer).unwrap_or_else(|e| {
            serde_json::to_vec(&ServiceAnswer::Error(format!(
                "cannot encode the answer: {e}"
            )))
            .unwrap_or_default()
        });
        (offered.table.answer)(offered.call, call.id, bytes.as_ptr(), bytes.len());
    };
    runtime.spawn(serving.instrument(span));
}

/// Does what `request` asks with the call's services.
async fn perform(offered: &Offered, request: ServiceRequest) -> ServiceAnswer {
    let ctx = &offered.ctx;
    let files = (ctx.client.files.as_ref(), "client files");
    let terminals = (ctx.client.terminals.as_ref(), "client terminals");
    match request {
        ServiceRequest::ReadTextFile { path } => using(files, |f| f.read_text_file(path)).await,
        ServiceRequest::WriteTextFile { path, text } => {
            using(files, |f| f.write_text_file(path, text)).await
        }
        ServiceRequest::CreateTerminal(command) => using(terminals, |t| t.create(command)).await,
        ServiceRequest::TerminalOutput { terminal_id } => {
            using(terminals, |t| t.output(terminal_id)).await
        }
        ServiceRequest::WaitForTerminalExit { terminal_id } => {
            using(terminals, |t| t.wait_for_exit(terminal_id)).await
        }
        ServiceRequest::KillTerminal { terminal_id } => {
            using(terminals, |t| t.kill(terminal_id)).await
        }
        ServiceRequest::ReleaseTerminal { terminal_id } => {
            using(terminals, |t| t.release(terminal_id)).await
        }
        // A side question still being asked when the call is cancelled is answered so.
        ServiceRequest::AskModel(question) => {
            let side_questions = (ctx.host.side_questions.as_ref(), "side questions");
            let asked = using(side_questions, |model| model.ask(question));
            match ctx.cancel.run_until_cancelled(asked).await {
                Some(answer) => answer,
                None => ServiceAnswer::Error("the call was cancelled".to_owned()),
            }
        }
        // Cancelled with the call (the sub-agent's loop stops, and says so).
        ServiceRequest::RunSubAgent(task) => match &ctx.host.sub_agents {
            Some(runner) => encoded(Ended::of(runner.run(ctx, task).await)),
            None => not_offered("sub-agents"),
        },
        // Cancelled with the call (the question is withdrawn).
        ServiceRequest::AskUser { questions } => match &ctx.host.ask_user {
            Some(asker) => encoded(Ended::of(asker.ask(ctx, questions).await)),
            None => not_offered("questions to the user"),
        },
        ServiceRequest::DecideRequest { request, subject } => match &ctx.host.request_rules {
            Some(rules) => encoded(Ok::<_, String>(rules.decide(&request, &subject).await)),
            None => not_offered("permission rules"),
        },
        ServiceRequest::HookEvent(event) => match &ctx.host.hooks {
            Some(hooks) => encoded(Ok::<_, String>(hooks.report(ctx, event).await)),
            None => not_offered("hooks"),
        },
    }
}

/// The answer of `work` done with a service the call was offered, or else the error saying
/// the call was not offered it (`service` is the service and its name).
async fn using<S: ?Sized, T: Serialize>(
    service: (Option<&std::sync::Arc<S>>, &str),
    work: impl FnOnce(&S) -> BoxFuture<'static, Result<T, String>>,
) -> ServiceAnswer {
    match service {
        (Some(service), _) => encoded(work(service).await),
        (None, name) => not_offered(name),
    }
}

/// The error answering a request for a service the call was not offered.
fn not_offered(service: &str) -> ServiceAnswer {
    ServiceAnswer::Error(format!(
        "the host offers no {service} to this call (the front-end has none)"
    ))
}

/// A result as the answer the plugin reads.
fn encoded<T: Serialize>(result: Result<T, String>) -> ServiceAnswer {
    match result {
        Ok(value) => match serde_json::to_value(value) {
            Ok(value) => ServiceAnswer::Ok(value),
            Err(e) => ServiceAnswer::Error(format!("cannot encode the answer: {e}")),
        },
        Err(message) => ServiceAnswer::Error(message),
    }
}
