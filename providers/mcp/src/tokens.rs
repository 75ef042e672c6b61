//! Where a server's OAuth tokens are kept. In the system's keyring (the Secret Service on Linux,
//! the Keychain on macOS, the Credential Manager on Windows) when there is one that answers,
//! with a small file in the data folder that says so; where there is none, in that file itself,
//! readable by the user alone. Either way the file records the URL the tokens were given for
//! (a server whose URL changed needs a new login), and its time of writing tells a running
//! session that a login happened elsewhere.

use rmcp::transport::auth::{AuthError, CredentialStore, StoredCredentials};
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The service name agentry's entries have in the system keyring (the account is the server's
/// name).
const KEYRING_SERVICE: &str = "agentry-mcp";

/// How long a keyring may take to answer before the tokens go to the file instead (a locked
/// keyring waiting for a prompt nobody sees must not hold a login up).
const KEYRING_TIMEOUT: Duration = Duration::from_secs(10);

/// One server's tokens: the record `FOLDER/NAME.json`, and the keyring entry it may point to.
#[derive(Clone)]
pub(crate) struct TokenFile {
    path: PathBuf,
    name: String,
    url: String,
    /// Whether the system keyring is tried (tests of the file alone turn it off).
    keyring: bool,
}

/// What the record holds.
#[derive(Serialize, Deserialize)]
struct Kept {
    url: String,
    /// The tokens, when they are kept in the file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    credentials: Option<StoredCredentials>,
    /// Whether the tokens are in the system keyring instead.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    in_keyring: bool,
}

impl TokenFile {
    /// The tokens of server `name` reached at `url`, recorded in `folder`.
    pub(crate) fn new(folder: &Path, name: &str, url: &str) -> Self {
        let file: String = name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        Self {
            path: folder.join(format!("{file}.json")),
            name: name.to_owned(),
            url: url.to_owned(),
            keyring: true,
        }
    }

    /// The same, kept in the file whatever keyring the system has.
    #[cfg(test)]
    fn in_file_only(mut self) -> Self {
        self.keyring = false;
        self
    }

    /// Whether tokens are kept for this server at this URL.
    pub(crate) fn exists(&self) -> bool {
        self.record()
            .is_some_and(|kept| kept.in_keyring || kept.credentials.is_some())
    }

    /// When the tokens were last written, if they are kept.
    pub(crate) fn written_at(&self) -> Option<std::time::SystemTime> {
        std::fs::metadata(&self.path)
            .and_then(|m| m.modified())
            .ok()
    }

    /// The record, when it is for this URL.
    fn record(&self) -> Option<Kept> {
        let text = std::fs::read_to_string(&self.path).ok()?;
        let kept: Kept = serde_json::from_str(&text).ok()?;
        (kept.url == self.url).then_some(kept)
    }

    /// The kept tokens, from the file or the keyring it points to.
    pub(crate) async fn read(&self) -> Option<StoredCredentials> {
        let kept = self.record()?;
        if let Some(credentials) = kept.credentials {
            return Some(credentials);
        }
        if !kept.in_keyring {
            return None;
        }
        match keyring(self.entry(), |entry| entry.get_password()).await {
            Ok(secret) => serde_json::from_str(&secret).ok(),
            Err(error) => {
                tracing::warn!(
                    "MCP server `{}`: its tokens cannot be read from the keyring: {error}",
                    self.name
                );
                None
            }
        }
    }

    /// Keeps the tokens: in the keyring when it answers, else in the file; the file is written
    /// whole or not at all (a file beside it, renamed over it).
    pub(crate) async fn write(&self, credentials: StoredCredentials) -> std::io::Result<()> {
        let secret = serde_json::to_string(&credentials).map_err(std::io::Error::other)?;
        let in_keyring = self.keyring
            && match keyring(self.entry(), move |entry| entry.set_password(&secret)).await {
                Ok(()) => true,
                Err(error) => {
                    tracing::debug!("no keyring for MCP tokens, kept in a file: {error}");
                    false
                }
            };
        let kept = Kept {
            url: self.url.clone(),
            credentials: (!in_keyring).then_some(credentials),
            in_keyring,
        };
        self.write_record(&kept)
    }

    fn write_record(&self, kept: &Kept) -> std::io::Result<()> {
        let folder = self.path.parent().unwrap_or(Path::new("."));
        agentry_plugin::private::folder(folder)?;
        let text = serde_json::to_vec_pretty(kept).map_err(std::io::Error::other)?;
        let partial = self.path.with_extension("json.partial");
        let mut file = agentry_plugin::private::file_options()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&partial)?;
        file.write_all(&text)?;
        file.sync_all()?;
        std::fs::rename(&partial, &self.path)
    }

    /// Forgets the tokens, in the keyring too; whether there were any.
    pub(crate) async fn remove(&self) -> std::io::Result<bool> {
        if self.record().is_some_and(|kept| kept.in_keyring) {
            match keyring(self.entry(), |entry| entry.delete_credential()).await {
                Ok(()) | Err(KeyringError::Keyring(keyring::Error::NoEntry)) => {}
                Err(error) => {
                    return Err(std::io::Error::other(format!(
                        "cannot remove them from the keyring: {error}"
                    )));
                }
            }
        }
        match std::fs::remove_file(&self.path) {
            Ok(()) => Ok(true),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(error) => Err(error),
        }
    }

    /// The keyring entry's service and account.
    fn entry(&self) -> (&'static str, String) {
        (KEYRING_SERVICE, self.name.clone())
    }
}

#[async_trait::async_trait]
impl CredentialStore for TokenFile {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        Ok(self.read().await)
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        self.write(credentials)
            .await
            .map_err(|error| AuthError::InternalError(format!("cannot keep the tokens: {error}")))
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.remove()
            .await
            .map(drop)
            .map_err(|error| AuthError::InternalError(format!("cannot forget the tokens: {error}")))
    }
}

/// Why the keyring did not answer.
#[derive(Debug, thiserror::Error)]
enum KeyringError {
    #[error("{0}")]
    Keyring(#[from] keyring::Error),
    #[error("it did not answer within {} s", KEYRING_TIMEOUT.as_secs())]
    TimedOut,
    #[error("its thread failed: {0}")]
    Thread(#[from] tokio::task::JoinError),
}

/// Runs `operation` on the keyring entry `(service, account)`, off the runtime (the keyring
/// answers over D-Bus, blocking), for at most [`KEYRING_TIMEOUT`].
async fn keyring<T: Send + 'static>(
    (service, account): (&'static str, String),
    operation: impl FnOnce(&keyring::Entry) -> keyring::Result<T> + Send + 'static,
) -> Result<T, KeyringError> {
    let blocking =
        tokio::task::spawn_blocking(move || operation(&keyring::Entry::new(service, &account)?));
    let answered = tokio::time::timeout(KEYRING_TIMEOUT, blocking)
        .await
        .map_err(|_| KeyringError::TimedOut)?;
    Ok(answered??)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn tokens_are_kept_for_the_url_they_were_given_for_and_written_whole() {
        let folder = tempfile::tempdir().unwrap();
        let kept =
            TokenFile::new(folder.path(), "docs/v2", "https://docs.example/mcp").in_file_only();
        assert!(!kept.exists());
        let credentials = StoredCredentials::new("agentry-client".to_owned(), None, vec![], None);
        kept.write(credentials).await.unwrap();
        assert!(kept.exists());
        assert_eq!(kept.read().await.unwrap().client_id, "agentry-client");
        assert!(
            folder.path().join("docs_v2.json").exists(),
            "a name is a file name"
        );
        assert!(!folder.path().join("docs_v2.json.partial").exists());
        let moved = TokenFile::new(folder.path(), "docs/v2", "https://elsewhere.example/mcp");
        assert!(
            !moved.exists(),
            "a server whose URL changed needs a new login"
        );
        assert!(moved.read().await.is_none());
        assert!(kept.remove().await.unwrap());
        assert!(!kept.remove().await.unwrap());
    }
}
