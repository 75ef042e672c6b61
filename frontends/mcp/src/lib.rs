//! # agentry-mcp-server
//!
//! The MCP front-end: any agentry agent and its prompt templates as an MCP server, on stdio or
//! streamable HTTP (`agentry mcp serve`), on the official Rust SDK, `rmcp`. Like every
//! front-end it depends on the framework only.
//!
//! - Prompts: the prompt templates of its folders (`agentry_stock::templates`), capability
//!   `prompts: {listChanged: true}`; `prompts/list` a page at a time with an opaque cursor;
//!   `prompts/get` checks the arguments (an unknown prompt, a missing required or an unknown
//!   argument is -32602) and reads the template afresh (a file that cannot be read is
//!   -32603); when the folders change, every client gets `notifications/prompts/list_changed`.
//! - Tools: `agentry_run` runs a prompt through the agent and answers with the agent's answer,
//!   so other MCP hosts can use agentry as a sub-agent.
//!
//! ```no_run
//! use agentry::agent::Agent;
//! use agentry::permission::{PermissionMode, PermissionPolicy};
//! use agentry_stock::templates::TemplateFolder;
//! use agentry_mcp_server::{RunSettings, ServeSettings, serve_stdio};
//!
//! # async fn demo(agent: Agent) -> std::io::Result<()> {
//! let project = std::env::current_dir()?;
//! serve_stdio(ServeSettings {
//!     folders: vec![TemplateFolder {
//!         path: project.join(".agentry/prompts"),
//!         embeds_within: project.clone(),
//!     }],
//!     page_size: 50,
//!     run: RunSettings {
//!         agent: Ok(agent),
//!         policy: PermissionPolicy::new(PermissionMode::Default, Vec::new()),
//!         cwd: project,
//!     },
//! })
//! .await
//! # }
//! ```

mod catalog;
mod content;
mod run_tool;
mod watcher;

use agentry::sync::lock;
use agentry_stock::templates::TemplateFolder;
use catalog::Catalog;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, GetPromptRequestParams, GetPromptResponse,
    Implementation, ListPromptsResult, ListToolsResult, PaginatedRequestParams, PromptsCapability,
    ServerCapabilities, ServerConfig, ToolsCapability,
};
use rmcp::service::{NotificationContext, Peer, RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler, ServiceExt};
use run_tool::Runner;
use std::sync::{Arc, Mutex};

pub use run_tool::RunSettings;

/// What `agentry mcp serve` offers.
pub struct ServeSettings {
    /// The template folders, in order (a later folder's template replaces an earlier one's of
    /// the same name), each with the folder its templates' embedded files must be inside.
    pub folders: Vec<TemplateFolder>,
    /// How many prompts one `prompts/list` page holds.
    pub page_size: usize,
    /// How `agentry_run` runs prompts.
    pub run: RunSettings,
}

/// What every connection shares.
struct Shared {
    catalog: Catalog,
    runner: Runner,
    /// The clients to tell when the prompt list changes.
    peers: Mutex<Vec<Peer<RoleServer>>>,
}

/// One client's connection (streamable HTTP has one per session).
#[derive(Clone)]
struct Connection(Arc<Shared>);

impl ServerHandler for Connection {
    fn get_info(&self) -> ServerConfig {
        let mut prompts = PromptsCapability::default();
        prompts.list_changed = Some(true);
        let mut capabilities = ServerCapabilities::default();
        capabilities.prompts = Some(prompts);
        capabilities.tools = Some(ToolsCapability::default());
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("agentry", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "agentry's prompt templates, and `agentry_run` to hand a task to the agentry agent.",
            )
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        lock(&self.0.peers).push(context.peer);
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let cursor = request.as_ref().and_then(|r| r.cursor.as_deref());
        self.0.catalog.list(cursor)
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        self.0
            .catalog
            .get(&request.name, request.arguments.as_ref())
            .map(Into::into)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(
            vec![run_tool::definition()],
        ))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if request.name != run_tool::NAME {
            return Err(ErrorData::invalid_params(
                format!("there is no tool named `{}`", request.name),
                None,
            ));
        }
        let result = self.0.runner.run(request.arguments, &context).await?;
        Ok(CallToolResponse::Complete(result))
    }
}

impl Shared {
    fn new(settings: ServeSettings) -> Arc<Self> {
        Arc::new(Self {
            catalog: Catalog::new(settings.folders, settings.page_size),
            runner: Runner::new(settings.run),
            peers: Mutex::new(Vec::new()),
        })
    }

    /// Watches the folders and tells every client when the prompt list changes.
    fn announce_changes(self: &Arc<Self>) {
        let shared = Arc::downgrade(self);
        let catalog = self.catalog.clone();
        tokio::spawn(watcher::watch(catalog, async move || {
            let Some(shared) = shared.upgrade() else {
                return false;
            };
            let peers: Vec<Peer<RoleServer>> = lock(&shared.peers).clone();
            let mut gone = Vec::new();
            for (index, peer) in peers.iter().enumerate() {
                if peer.notify_prompt_list_changed().await.is_err() {
                    gone.push(index);
                }
            }
            let mut peers = lock(&shared.peers);
            for index in gone.into_iter().rev() {
                if index < peers.len() {
                    peers.remove(index);
                }
            }
            true
        }));
    }
}

/// Serves on stdin/stdout until the client hangs up.
pub async fn serve_stdio(settings: ServeSettings) -> Result<(), std::io::Error> {
    let shared = Shared::new(settings);
    shared.announce_changes();
    let running = Connection(shared)
        .serve(rmcp::transport::stdio())
        .await
        .map_err(std::io::Error::other)?;
    running.waiting().await.map_err(std::io::Error::other)?;
    Ok(())
}

/// Serves streamable HTTP at `/mcp` on `listener` until the process ends, to requests that
/// `admission` lets in (its `Host`, `Origin` and token).
pub async fn serve_http(
    listener: tokio::net::TcpListener,
    settings: ServeSettings,
    admission: agentry_admission::Admission,
) -> Result<(), std::io::Error> {
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
    };
    let shared = Shared::new(settings);
    shared.announce_changes();
    let service = StreamableHttpService::new(
        move || Ok(Connection(shared.clone())),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let router = axum::Router::new().nest_service("/mcp", service).layer(
        axum::middleware::from_fn_with_state(Arc::new(admission), admit),
    );
    axum::serve(listener, router).await
}

/// Lets a request through when it comes to a name the server answers to, from no other site's
/// page, with the token; answers for it otherwise.
async fn admit(
    axum::extract::State(admission): axum::extract::State<Arc<agentry_admission::Admission>>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    let headers = request.headers();
    // MCP clients send the token in `Authorization`; a URL does not carry it.
    let credentials = agentry_admission::Credentials::from_headers(
        |name| headers.get(name).and_then(|value| value.to_str().ok()),
        None,
    );
    let admitted = admission
        .check_site(&credentials)
        .and_then(|()| admission.check_token(&credentials));
    match admitted {
        Ok(()) => next.run(request).await,
        Err(refused) => {
            let status = axum::http::StatusCode::from_u16(refused.status())
                .unwrap_or(axum::http::StatusCode::FORBIDDEN);
            (status, axum::Json(refused.body())).into_response()
        }
    }
}
