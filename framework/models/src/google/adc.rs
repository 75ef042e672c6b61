//! Where Google's Application Default Credentials are found, in the order of Google's client
//! libraries: the file `GOOGLE_APPLICATION_CREDENTIALS` names, gcloud's
//! `application_default_credentials.json` (in `CLOUDSDK_CONFIG`, else `~/.config/gcloud`),
//! then the metadata server — at `GCE_METADATA_HOST`, or at its fixed address when this
//! machine is one of Google Cloud's (a Compute Engine or GKE machine says so in its firmware,
//! Cloud Run and Cloud Functions in their variables) and `NO_GCE_CHECK=True` does not turn it
//! off. Nothing is asked of a service here: finding reads variables and files only.

use crate::auth::{Env, var};
use crate::secret::Secret;
use agentry::model::ModelError;
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// Google's token endpoint, where a key file names none.
pub const GOOGLE_TOKEN_URI: &str = "https://oauth2.googleapis.com/token";

/// The metadata server's fixed address.
pub const METADATA_HOST: &str = "169.254.169.254";

/// Where the machine's firmware names its maker (`Google Compute Engine`).
const PRODUCT_NAME_FILE: &str = "/sys/class/dmi/id/product_name";

/// Where Google credentials come from, as the search found them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GoogleSource {
    /// A service account's key: a JWT it signs is exchanged for a token at `token_uri`.
    ServiceAccount {
        /// The account (`agent@project.iam.gserviceaccount.com`).
        client_email: String,
        /// Its private key, PEM (PKCS#8).
        private_key: Secret,
        /// The key's id, named in the JWT's header.
        private_key_id: Option<String>,
        /// Where the JWT is exchanged.
        token_uri: String,
        /// The account's project.
        project_id: Option<String>,
        /// The key file.
        file: PathBuf,
    },
    /// A user's refresh token (`gcloud auth application-default login`), exchanged at
    /// `token_uri`.
    AuthorizedUser {
        /// The OAuth client's id.
        client_id: String,
        /// The OAuth client's secret.
        client_secret: Secret,
        /// The refresh token.
        refresh_token: Secret,
        /// Where it is exchanged.
        token_uri: String,
        /// The project billed for quota (`x-goog-user-project`).
        quota_project_id: Option<String>,
        /// The file.
        file: PathBuf,
    },
    /// The metadata server of a Google Cloud machine: the tokens of its service account.
    MetadataServer {
        /// Its `host[:port]`.
        host: String,
    },
}

impl GoogleSource {
    /// Where the credentials come from, in a few words (never the credentials).
    pub fn describe(&self) -> String {
        match self {
            Self::ServiceAccount {
                client_email, file, ..
            } => format!("the service account {client_email} in {}", file.display()),
            Self::AuthorizedUser { file, .. } => {
                format!("the user credentials in {}", file.display())
            }
            Self::MetadataServer { host } => format!("the metadata server at {host}"),
        }
    }

    /// The project the credentials belong to, when they say.
    pub fn project(&self) -> Option<&str> {
        match self {
            Self::ServiceAccount { project_id, .. } => project_id.as_deref(),
            Self::AuthorizedUser {
                quota_project_id, ..
            } => quota_project_id.as_deref(),
            Self::MetadataServer { .. } => None,
        }
    }
}

/// A credentials file as Google's tools write it.
#[derive(Deserialize)]
struct KeyFile {
    #[serde(rename = "type")]
    kind: Option<String>,
    client_email: Option<String>,
    private_key: Option<String>,
    private_key_id: Option<String>,
    token_uri: Option<String>,
    project_id: Option<String>,
    client_id: Option<String>,
    client_secret: Option<String>,
    refresh_token: Option<String>,
    quota_project_id: Option<String>,
}

/// gcloud's file of Application Default Credentials.
pub fn gcloud_file(env: Env<'_>) -> PathBuf {
    let config = match var(env, "CLOUDSDK_CONFIG") {
        Some(dir) => PathBuf::from(dir),
        None => match var(env, "APPDATA") {
            Some(app_data) if cfg!(windows) => Path::new(&app_data).join("gcloud"),
            _ => PathBuf::from(var(env, "HOME").unwrap_or_default()).join(".config/gcloud"),
        },
    };
    config.join("application_default_credentials.json")
}

/// The first source of Google credentials, or an error naming every place it looked.
pub fn find(env: Env<'_>) -> Result<GoogleSource, ModelError> {
    if let Some(file) = var(env, "GOOGLE_APPLICATION_CREDENTIALS") {
        let file = PathBuf::from(file);
        let text = std::fs::read_to_string(&file).map_err(|e| {
            ModelError::Config(format!(
                "GOOGLE_APPLICATION_CREDENTIALS names {}, which cannot be read: {e}",
                file.display()
            ))
        })?;
        return read_key_file(&text, file);
    }
    let gcloud = gcloud_file(env);
    if let Ok(text) = std::fs::read_to_string(&gcloud) {
        return read_key_file(&text, gcloud);
    }
    if let Some(host) = var(env, "GCE_METADATA_HOST") {
        return Ok(GoogleSource::MetadataServer { host });
    }
    let metadata_off = var(env, "NO_GCE_CHECK").is_some_and(|v| v.eq_ignore_ascii_case("true"));
    if !metadata_off && on_google_cloud(env) {
        return Ok(GoogleSource::MetadataServer {
            host: METADATA_HOST.to_owned(),
        });
    }
    let why_no_metadata = if metadata_off {
        "it is off: NO_GCE_CHECK"
    } else {
        "this is not a Google Cloud machine"
    };
    Err(ModelError::Config(format!(
        "no Google credentials found: looked for GOOGLE_APPLICATION_CREDENTIALS, gcloud's {} \
         (`gcloud auth application-default login` writes it), and a metadata server \
         ({why_no_metadata}; GCE_METADATA_HOST names one)",
        gcloud.display()
    )))
}

/// Whether this machine is one of Google Cloud's: Compute Engine and GKE say so in the
/// firmware, Cloud Run and Cloud Functions in their variables.
fn on_google_cloud(env: Env<'_>) -> bool {
    ["K_SERVICE", "CLOUD_RUN_JOB", "FUNCTION_TARGET"]
        .iter()
        .any(|name| var(env, name).is_some())
        || std::fs::read_to_string(PRODUCT_NAME_FILE)
            .is_ok_and(|name| name.trim().starts_with("Google"))
}

/// The source a credentials file describes.
fn read_key_file(text: &str, file: PathBuf) -> Result<GoogleSource, ModelError> {
    let invalid = |why: &str| {
        ModelError::Config(format!(
            "{} is not a Google credentials file: {why}",
            file.display()
        ))
    };
    let key: KeyFile = serde_json::from_str(text).map_err(|e| invalid(&e.to_string()))?;
    let token_uri = key.token_uri.unwrap_or_else(|| GOOGLE_TOKEN_URI.to_owned());
    match key.kind.as_deref() {
        Some("service_account") => Ok(GoogleSource::ServiceAccount {
            client_email: key.client_email.ok_or_else(|| invalid("no client_email"))?,
            private_key: Secret::new(key.private_key.ok_or_else(|| invalid("no private_key"))?),
            private_key_id: key.private_key_id,
            token_uri,
            project_id: key.project_id,
            file,
        }),
        Some("authorized_user") => Ok(GoogleSource::AuthorizedUser {
            client_id: key.client_id.ok_or_else(|| invalid("no client_id"))?,
            client_secret: Secret::new(
                key.client_secret
                    .ok_or_else(|| invalid("no client_secret"))?,
            ),
            refresh_token: Secret::new(
                key.refresh_token
                    .ok_or_else(|| invalid("no refresh_token"))?,
            ),
            token_uri,
            quota_project_id: key.quota_project_id,
            file,
        }),
        Some(other) => Err(ModelError::Config(format!(
            "{} holds `{other}` credentials, which agentry does not read: use a service account \
             key, or `gcloud auth application-default login` (on a Google Cloud machine, its \
             metadata server)",
            file.display()
        ))),
        None => Err(invalid("no `type`")),
    }
}
