//! The host services a plugin's call was offered, as the ordinary client and host services a
//! tool finds in its context: each request crosses to the host through the call's [`Host`].

use super::host::Host;
use crate::wire::{Service, ServiceRequest};
use agentry_plugin::question::Question;
use agentry_plugin::tool::{
    AskUser, ClientFiles, ClientServices, ClientTerminals, Ended, HostServices, RequestDecision,
    RequestRules, SideAnswer, SideQuestion, SideQuestions, SubAgentReport, SubAgentRunner,
    SubAgentTask, TerminalCommand, TerminalExit, ToolContext, ToolError, ToolHookEvent,
    ToolHookReply, ToolHooks, UserAnswer,
};
use futures::future::BoxFuture;
use serde::de::DeserializeOwned;
use std::path::PathBuf;
use std::sync::Arc;

/// The services of `offered` that this SDK knows, reached through `host`.
pub(super) fn services(host: &Arc<Host>, offered: &[Service]) -> (ClientServices, HostServices) {
    let remote = Arc::new(Remote(host.clone()));
    let mut client = ClientServices::default();
    let mut services = HostServices::default();
    for service in offered {
        match service {
            Service::ClientFiles => client.files = Some(remote.clone()),
            Service::ClientTerminals => client.terminals = Some(remote.clone()),
            Service::SideQuestions => services.side_questions = Some(remote.clone()),
            Service::SubAgents => services.sub_agents = Some(remote.clone()),
            Service::AskUser => services.ask_user = Some(remote.clone()),
            Service::RequestRules => services.request_rules = Some(remote.clone()),
            Service::Hooks => services.hooks = Some(remote.clone()),
            Service::Unknown => {}
        }
    }
    (client, services)
}

/// Host services through one call's link.
struct Remote(Arc<Host>);

impl Remote {
    /// Sends `request` and reads its answer as a `T`.
    fn ask<T: DeserializeOwned + Send + 'static>(
        &self,
        request: ServiceRequest,
    ) -> BoxFuture<'static, Result<T, String>> {
        let host = self.0.clone();
        Box::pin(async move {
            let value = host.request(request).await?;
            serde_json::from_value(value)
                .map_err(|e| format!("the host's answer is not of the expected shape: {e}"))
        })
    }

    /// Sends `request`, whose answer carries nothing.
    fn tell(&self, request: ServiceRequest) -> BoxFuture<'static, Result<(), String>> {
        let host = self.0.clone();
        Box::pin(async move { host.request(request).await.map(drop) })
    }
}

impl ClientFiles for Remote {
    fn read_text_file(&self, path: PathBuf) -> BoxFuture<'static, Result<String, String>> {
        self.ask(ServiceRequest::ReadTextFile { path })
    }

    fn write_text_file(
        &self,
        path: PathBuf,
        text: String,
    ) -> BoxFuture<'static, Result<(), String>> {
        self.tell(ServiceRequest::WriteTextFile { path, text })
    }
}

impl ClientTerminals for Remote {
    fn create(&self, command: TerminalCommand) -> BoxFuture<'static, Result<String, String>> {
        self.ask(ServiceRequest::CreateTerminal(command))
    }

    fn output(&self, terminal_id: String) -> BoxFuture<'static, Result<String, String>> {
        self.ask(ServiceRequest::TerminalOutput { terminal_id })
    }

    fn wait_for_exit(
        &self,
        terminal_id: String,
    ) -> BoxFuture<'static, Result<TerminalExit, String>> {
        self.ask(ServiceRequest::WaitForTerminalExit { terminal_id })
    }

    fn kill(&self, terminal_id: String) -> BoxFuture<'static, Result<(), String>> {
        self.tell(ServiceRequest::KillTerminal { terminal_id })
    }

    fn release(&self, terminal_id: String) -> BoxFuture<'static, Result<(), String>> {
        self.tell(ServiceRequest::ReleaseTerminal { terminal_id })
    }
}

impl SideQuestions for Remote {
    fn ask(&self, question: SideQuestion) -> BoxFuture<'static, Result<SideAnswer, String>> {
        Remote::ask(self, ServiceRequest::AskModel(question))
    }
}

impl SubAgentRunner for Remote {
    fn run(
        &self,
        _call: &ToolContext,
        task: SubAgentTask,
    ) -> BoxFuture<'static, Result<SubAgentReport, ToolError>> {
        let ended = Remote::ask::<Ended<SubAgentReport>>(self, ServiceRequest::RunSubAgent(task));
        Box::pin(async move { ended.await.map_err(ToolError::failed)?.into_result() })
    }
}

impl AskUser for Remote {
    fn ask(
        &self,
        _call: &ToolContext,
        questions: Vec<Question>,
    ) -> BoxFuture<'static, Result<UserAnswer, ToolError>> {
        let ended = Remote::ask::<Ended<UserAnswer>>(self, ServiceRequest::AskUser { questions });
        Box::pin(async move { ended.await.map_err(ToolError::failed)?.into_result() })
    }
}

impl RequestRules for Remote {
    fn decide(&self, request: &str, subject: &str) -> BoxFuture<'static, RequestDecision> {
        let asked = Remote::ask::<RequestDecision>(
            self,
            ServiceRequest::DecideRequest {
                request: request.to_owned(),
                subject: subject.to_owned(),
            },
        );
        // A host that cannot say leaves the user to decide.
        Box::pin(async move { asked.await.unwrap_or(RequestDecision::Ask) })
    }
}

impl ToolHooks for Remote {
    fn report(
        &self,
        _call: &ToolContext,
        event: ToolHookEvent,
    ) -> BoxFuture<'static, ToolHookReply> {
        let asked = Remote::ask::<ToolHookReply>(self, ServiceRequest::HookEvent(event));
        // A host that cannot say has no hooks that object.
        Box::pin(async move { asked.await.unwrap_or_default() })
    }
}
