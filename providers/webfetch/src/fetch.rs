//! Fetching a page safely: only `http` / `https`, only to addresses the guard allows (checked on
//! the addresses connected to, and on every redirect), domains filtered, redirects limited,
//! connect and total timeouts, gzip / brotli / deflate, and a size cap that stops reading.

use crate::error::FetchError;
use crate::guard::AddressGuard;
use crate::resolve::{BeforeConnect, GuardedResolver, SystemLookup};
use agentry_plugin::domains::host_in_domain;
use reqwest::dns::Resolve;
use reqwest::redirect;
use std::net::IpAddr;
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use url::{Host, Url};

/// How pages are fetched.
#[derive(Debug, Clone)]
pub struct FetchSettings {
    /// The addresses that may be connected to.
    pub guard: AddressGuard,
    /// Whether an `http` URL is fetched as `https` (yes by default).
    pub upgrade_http: bool,
    /// Only these domains (and their subdomains) may be fetched, when any are named.
    pub allowed_domains: Vec<String>,
    /// These domains (and their subdomains) may never be fetched.
    pub blocked_domains: Vec<String>,
    /// The most redirects followed.
    pub max_redirects: usize,
    /// The most bytes of a body read; reading stops there.
    pub max_bytes: usize,
    /// How long connecting may take.
    pub connect_timeout: Duration,
    /// How long the whole fetch may take, body included.
    pub timeout: Duration,
}

impl Default for FetchSettings {
    fn default() -> Self {
        Self {
            guard: AddressGuard::default(),
            upgrade_http: true,
            allowed_domains: Vec::new(),
            blocked_domains: Vec::new(),
            max_redirects: 10,
            max_bytes: 10 * 1024 * 1024,
            connect_timeout: Duration::from_secs(10),
            timeout: Duration::from_secs(30),
        }
    }
}

impl FetchSettings {
    /// Whether `url` may be fetched: its scheme, an address written in it, its domain.
    pub fn check(&self, url: &Url) -> Result<(), FetchError> {
        if !matches!(url.scheme(), "http" | "https") {
            return Err(FetchError::Scheme(url.scheme().to_owned()));
        }
        match url.host() {
            None => Err(FetchError::InvalidUrl(format!("{url} names no host"))),
            Some(Host::Ipv4(v4)) => self.check_address(IpAddr::V4(v4)),
            Some(Host::Ipv6(v6)) => self.check_address(IpAddr::V6(v6)),
            Some(Host::Domain(domain)) => self.check_domain(domain),
        }
    }

    fn check_address(&self, address: IpAddr) -> Result<(), FetchError> {
        self.guard
            .check(address)
            .map_err(|why| FetchError::Refused(why.to_string()))?;
        self.check_domain(&address.to_string())
    }

    fn check_domain(&self, host: &str) -> Result<(), FetchError> {
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        if let Some(blocked) = self
            .blocked_domains
            .iter()
            .find(|d| host_in_domain(&host, d))
        {
            return Err(FetchError::Domain(format!(
                "{host} is blocked ([webfetch] blocked_domains has {blocked})"
            )));
        }
        if !self.allowed_domains.is_empty()
            && !self
                .allowed_domains
                .iter()
                .any(|d| host_in_domain(&host, d))
        {
            return Err(FetchError::Domain(format!(
                "{host} is not among [webfetch] allowed_domains ({})",
                self.allowed_domains.join(", ")
            )));
        }
        Ok(())
    }
}

/// A fetched page.
#[derive(Debug, Clone)]
pub struct Page {
    /// The URL it came from, after redirects.
    pub url: Url,
    /// The HTTP status.
    pub status: u16,
    /// Its `Content-Type` (empty when the server sent none).
    pub content_type: String,
    /// Its body, up to the size cap.
    pub body: Vec<u8>,
    /// Whether the body went on beyond the cap.
    pub truncated: bool,
}

/// Fetches pages under [`FetchSettings`]. Its HTTP client (which reads the system's root
/// certificates) is built at the first fetch, not when the agent starts.
#[derive(Clone)]
pub struct Fetcher {
    client: Arc<OnceLock<Result<reqwest::Client, String>>>,
    resolver: Arc<GuardedResolver>,
    settings: Arc<FetchSettings>,
}

impl std::fmt::Debug for Fetcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fetcher")
            .field("settings", &self.settings)
            .finish()
    }
}

impl Fetcher {
    /// A fetcher that looks names up with the system's resolver.
    pub fn new(settings: FetchSettings) -> Self {
        Self::with_lookup(settings, Arc::new(SystemLookup), None)
    }

    /// A fetcher that looks names up with `lookup` (the guard still filters what it returns),
    /// handing the addresses left to `before_connect` last.
    pub fn with_lookup(
        settings: FetchSettings,
        lookup: Arc<dyn Resolve>,
        before_connect: Option<BeforeConnect>,
    ) -> Self {
        let resolver = GuardedResolver::new(lookup, settings.guard.clone(), before_connect);
        Self {
            client: Arc::default(),
            resolver: Arc::new(resolver),
            settings: Arc::new(settings),
        }
    }

    /// The HTTP client, built the first time it is needed.
    fn client(&self) -> Result<&reqwest::Client, FetchError> {
        self.client
            .get_or_init(|| self.build_client())
            .as_ref()
            .map_err(|e| FetchError::Transport(e.clone()))
    }

    /// A client whose lookups go through the guard and whose redirects are checked again.
    fn build_client(&self) -> Result<reqwest::Client, String> {
        let settings = &self.settings;
        let policy = {
            let settings = settings.clone();
            redirect::Policy::custom(move |attempt| {
                let hops = attempt.previous().len();
                if hops > settings.max_redirects {
                    return attempt.error(FetchError::TooManyRedirects(settings.max_redirects));
                }
                match settings.check(attempt.url()) {
                    Ok(()) => attempt.follow(),
                    Err(error) => attempt.error(error),
                }
            })
        };
        reqwest::Client::builder()
            .user_agent(concat!("agentry-webfetch/", env!("CARGO_PKG_VERSION")))
            .dns_resolver(self.resolver.clone())
            .redirect(policy)
            // A proxy would connect to addresses the guard never sees.
            .no_proxy()
            .gzip(true)
            .brotli(true)
            .deflate(true)
            .connect_timeout(settings.connect_timeout)
            .timeout(settings.timeout)
            .build()
            .map_err(|e| e.to_string())
    }

    /// The settings.
    pub fn settings(&self) -> &FetchSettings {
        &self.settings
    }

    /// The URL a call asks for, as it will be fetched (`http` upgraded unless configured not to).
    pub fn prepare(&self, url: &str) -> Result<Url, FetchError> {
        let mut url =
            Url::parse(url.trim()).map_err(|e| FetchError::InvalidUrl(format!("{url}: {e}")))?;
        if url.scheme() == "http" && self.settings.upgrade_http {
            let _ = url.set_scheme("https");
        }
        self.settings.check(&url)?;
        Ok(url)
    }

    /// Fetches `url` (already [prepared](Self::prepare)).
    pub async fn get(&self, url: &Url) -> Result<Page, FetchError> {
        let failed = |error: reqwest::Error| self.failure(url, error);
        let mut response = self
            .client()?
            .get(url.clone())
            .send()
            .await
            .map_err(failed)?;
        let status = response.status().as_u16();
        let final_url = response.url().clone();
        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        let (body, truncated) = self.read_capped(&mut response, url).await?;
        if !(200..300).contains(&status) {
            let text = String::from_utf8_lossy(&body);
            let start: String = text.chars().take(500).collect();
            return Err(FetchError::Status {
                url: final_url.to_string(),
                status,
                body: start.trim().to_owned(),
            });
        }
        Ok(Page {
            url: final_url,
            status,
            content_type,
            body,
            truncated,
        })
    }

    /// The body up to the cap, and whether there was more (the rest is never read).
    async fn read_capped(
        &self,
        response: &mut reqwest::Response,
        url: &Url,
    ) -> Result<(Vec<u8>, bool), FetchError> {
        let cap = self.settings.max_bytes;
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| self.failure(url, e))? {
            let room = cap - body.len();
            if chunk.len() > room {
                body.extend_from_slice(&chunk[..room]);
                return Ok((body, true));
            }
            body.extend_from_slice(&chunk);
        }
        Ok((body, false))
    }

    /// A reqwest error as the model should read it: ours when a check of ours stopped it.
    fn failure(&self, url: &Url, error: reqwest::Error) -> FetchError {
        if error.is_timeout() {
            return FetchError::Timeout(url.to_string(), self.settings.timeout.as_secs());
        }
        let mut source: Option<&(dyn std::error::Error + 'static)> = Some(&error);
        let mut messages = Vec::new();
        while let Some(current) = source {
            if let Some(ours) = current.downcast_ref::<FetchError>() {
                return match ours {
                    FetchError::Refused(m) => FetchError::Refused(m.clone()),
                    FetchError::Domain(m) => FetchError::Domain(m.clone()),
                    FetchError::Scheme(m) => FetchError::Scheme(m.clone()),
                    FetchError::TooManyRedirects(n) => FetchError::TooManyRedirects(*n),
                    other => FetchError::Transport(other.to_string()),
                };
            }
            let text = current.to_string();
            if !messages.iter().any(|m: &String| m.contains(&text)) {
                messages.push(text);
            }
            source = current.source();
        }
        FetchError::Transport(messages.join(": "))
    }
}
