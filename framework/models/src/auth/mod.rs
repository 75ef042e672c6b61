//! What the clouds' credential chains share: reading their variables ([`Env`]), credentials
//! and when they expire ([`Expiring`]), kept until shortly before then and fetched again, the
//! short-timeout client their token and metadata services are asked with, the OAuth token
//! answer Google's and Microsoft's services give, commands that print credentials, and bearer
//! tokens that authorize a model's requests (`BearerTokens` over a `TokenSource`, with the
//! `azure` or `vertex` feature).

#[cfg(any(feature = "azure", feature = "vertex"))]
mod oauth;

#[cfg(any(feature = "azure", feature = "vertex"))]
pub(crate) use oauth::oauth_token;
#[cfg(any(feature = "azure", feature = "vertex"))]
pub use oauth::{BearerTokens, TokenSource};

use std::future::Future;
use std::sync::OnceLock;
use std::time::{Duration, SystemTime};

/// The variables a chain reads, by name.
pub type Env<'a> = &'a dyn Fn(&str) -> Option<String>;

/// A variable's value, when it is set and not blank.
pub(crate) fn var(env: Env<'_>, name: &str) -> Option<String> {
    env(name).filter(|value| !value.trim().is_empty())
}

/// How long before their expiry credentials are fetched again.
pub(crate) const REFRESH_BEFORE: Duration = Duration::from_secs(5 * 60);

/// Credentials, and when they expire (never, when `None`).
#[derive(Debug, Clone)]
pub struct Expiring<T> {
    /// The credentials.
    pub value: T,
    /// When they stop being good.
    pub expires: Option<SystemTime>,
}

/// Credentials fetched when first needed, kept, and fetched again five minutes before they
/// expire.
#[derive(Debug)]
pub(crate) struct Refreshing<T> {
    cached: tokio::sync::Mutex<Option<Expiring<T>>>,
}

impl<T> Default for Refreshing<T> {
    fn default() -> Self {
        Self {
            cached: tokio::sync::Mutex::new(None),
        }
    }
}

impl<T: Clone> Refreshing<T> {
    /// The kept credentials while they are good for five more minutes, else `fetch`'s (kept
    /// in their place). One fetch at a time: callers meanwhile wait for its result.
    pub async fn get<E, F>(&self, fetch: impl FnOnce() -> F) -> Result<T, E>
    where
        F: Future<Output = Result<Expiring<T>, E>>,
    {
        let mut cached = self.cached.lock().await;
        if let Some(kept) = cached.as_ref()
            && kept
                .expires
                .is_none_or(|expires| expires > SystemTime::now() + REFRESH_BEFORE)
        {
            return Ok(kept.value.clone());
        }
        let fetched = fetch().await?;
        let value = fetched.value.clone();
        *cached = Some(fetched);
        Ok(value)
    }
}

/// The client token and metadata services are asked with, built at the first question: short
/// timeouts (a metadata service answers at once or is not there).
#[derive(Debug, Default)]
pub(crate) struct ServiceClient(OnceLock<Result<reqwest::Client, String>>);

impl ServiceClient {
    /// The client.
    pub fn get(&self) -> Result<&reqwest::Client, String> {
        self.0
            .get_or_init(|| {
                reqwest::Client::builder()
                    .connect_timeout(Duration::from_secs(2))
                    .timeout(Duration::from_secs(10))
                    .build()
                    .map_err(|e| format!("cannot build the HTTP client: {e}"))
            })
            .as_ref()
            .map_err(Clone::clone)
    }
}

/// Sends `request`; the body of a successful answer, else what went wrong (never the
/// request's credentials).
#[cfg(feature = "bedrock")]
pub(crate) async fn successful_text(request: reqwest::RequestBuilder) -> Result<String, String> {
    let answer = request.send().await.map_err(unreachable)?;
    let status = answer.status();
    if !status.is_success() {
        return Err(format!(
            "{} answered HTTP {}",
            answer.url(),
            status.as_u16()
        ));
    }
    answer.text().await.map_err(|e| e.to_string())
}

/// What a request that got no answer says: its URL and why.
fn unreachable(error: reqwest::Error) -> String {
    let url = error.url().map(|u| u.to_string()).unwrap_or_default();
    format!("{url} cannot be reached ({error})")
}

/// Runs `command` (shown in errors as `shown`) and gives what it prints, or why it failed with
/// the first of its error output.
#[cfg(any(feature = "azure", feature = "bedrock"))]
pub(crate) async fn command_output(
    mut command: tokio::process::Command,
    shown: &str,
) -> Result<String, String> {
    let output = command
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .output()
        .await
        .map_err(|e| format!("cannot run `{shown}`: {e}"))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        return Err(format!(
            "`{shown}` failed ({}): {}",
            output.status,
            crate::wire::clip(stderr.trim())
        ));
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[tokio::test]
    async fn credentials_are_kept_until_five_minutes_before_they_expire() {
        let refreshing = Refreshing::<u32>::default();
        let fetches = AtomicUsize::new(0);
        let fetch = |lifetime: u64| {
            let n = fetches.fetch_add(1, Ordering::SeqCst) as u32;
            async move {
                Ok::<_, String>(Expiring {
                    value: n,
                    expires: Some(SystemTime::now() + Duration::from_secs(lifetime)),
                })
            }
        };
        // Good for an hour: kept.
        assert_eq!(refreshing.get(|| fetch(3600)).await, Ok(0));
        assert_eq!(refreshing.get(|| fetch(3600)).await, Ok(0));
        // Replaced by one good for four minutes: fetched again at the next use.
        *refreshing.cached.lock().await = None;
        assert_eq!(refreshing.get(|| fetch(240)).await, Ok(1));
        assert_eq!(refreshing.get(|| fetch(3600)).await, Ok(2));
        assert_eq!(refreshing.get(|| fetch(3600)).await, Ok(2));
        // A failed fetch keeps nothing.
        let never = Refreshing::<u32>::default();
        assert_eq!(
            never.get(|| async { Err::<Expiring<u32>, _>("no") }).await,
            Err("no")
        );
    }
}
