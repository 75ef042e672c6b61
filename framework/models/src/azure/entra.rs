//! Microsoft Entra ID tokens for Azure OpenAI and Foundry (scope
//! `https://cognitiveservices.azure.com/.default`), found in the order of Azure's
//! `DefaultAzureCredential`: a service principal's secret in the environment
//! (`AZURE_TENANT_ID`, `AZURE_CLIENT_ID`, `AZURE_CLIENT_SECRET`), workload identity
//! (`AZURE_FEDERATED_TOKEN_FILE` with the tenant and client), a managed identity (App Service's
//! `IDENTITY_ENDPOINT` and `IDENTITY_HEADER`, or the instance metadata service of an Azure
//! machine, at `AZURE_POD_IDENTITY_AUTHORITY_HOST` when set), then the Azure CLI (`az` on
//! `PATH`). `AZURE_TOKEN_CREDENTIALS` narrows the search as Azure's libraries do (`dev`,
//! `prod`, or one credential's name). Finding reads variables and files only; fetching asks
//! the service.

use crate::auth::{Env, Expiring, TokenSource, command_output, oauth_token, var};
use crate::secret::Secret;
use agentry::model::ModelError;
use serde::Deserialize;
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

/// The scope Azure OpenAI's and Foundry's tokens are asked for.
pub const COGNITIVE_SERVICES_SCOPE: &str = "https://cognitiveservices.azure.com/.default";

/// The resource managed identities and the Azure CLI are asked for.
const COGNITIVE_SERVICES_RESOURCE: &str = "https://cognitiveservices.azure.com";

/// Microsoft Entra ID's public cloud authority.
pub const DEFAULT_AUTHORITY: &str = "https://login.microsoftonline.com";

/// The instance metadata service's fixed address.
const IMDS_HOST: &str = "http://169.254.169.254";

/// The chassis asset tag every Azure virtual machine carries in its firmware.
const AZURE_ASSET_TAG: &str = "7783-7084-3265-9085-8269-3286-77";

/// Where the firmware keeps it.
const ASSET_TAG_FILE: &str = "/sys/class/dmi/id/chassis_asset_tag";

/// Where Entra ID tokens come from, as the search found them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EntraSource {
    /// A service principal's client secret, exchanged at the tenant's token endpoint.
    ClientSecret {
        /// The token endpoint (`{authority}/{tenant}/oauth2/v2.0/token`).
        token_url: String,
        /// The application's (client) id.
        client_id: String,
        /// Its secret.
        client_secret: Secret,
    },
    /// A Kubernetes workload's federated token (read afresh each time: it is rotated),
    /// exchanged at the tenant's token endpoint as a client assertion.
    WorkloadIdentity {
        /// The token endpoint.
        token_url: String,
        /// The application's (client) id.
        client_id: String,
        /// The file holding the federated token.
        token_file: PathBuf,
    },
    /// App Service's (and Functions', Container Apps') managed identity endpoint.
    AppServiceIdentity {
        /// `IDENTITY_ENDPOINT`.
        endpoint: String,
        /// `IDENTITY_HEADER`, sent as `X-IDENTITY-HEADER`.
        header: Secret,
        /// A user-assigned identity's client id (`AZURE_CLIENT_ID`).
        client_id: Option<String>,
    },
    /// An Azure machine's instance metadata service.
    InstanceMetadata {
        /// Its base URL.
        host: String,
        /// A user-assigned identity's client id (`AZURE_CLIENT_ID`).
        client_id: Option<String>,
    },
    /// The Azure CLI's signed-in account.
    AzureCli {
        /// The `az` program found on `PATH`.
        program: PathBuf,
        /// The tenant asked for (`AZURE_TENANT_ID`).
        tenant: Option<String>,
    },
}

impl EntraSource {
    /// Where the tokens come from, in a few words (never a secret).
    pub fn describe(&self) -> String {
        match self {
            Self::ClientSecret { client_id, .. } => {
                format!("the service principal {client_id} (AZURE_CLIENT_SECRET)")
            }
            Self::WorkloadIdentity {
                client_id,
                token_file,
                ..
            } => format!(
                "the workload identity {client_id} ({})",
                token_file.display()
            ),
            Self::AppServiceIdentity { endpoint, .. } => {
                format!("the managed identity endpoint {endpoint}")
            }
            Self::InstanceMetadata { host, .. } => {
                format!("the managed identity of the instance metadata service at {host}")
            }
            Self::AzureCli { program, .. } => {
                format!("the Azure CLI's account ({})", program.display())
            }
        }
    }
}

/// Which credentials `AZURE_TOKEN_CREDENTIALS` lets the search try.
struct Allowed(Option<String>);

impl Allowed {
    fn from(env: Env<'_>) -> Self {
        Self(var(env, "AZURE_TOKEN_CREDENTIALS").map(|v| v.trim().to_ascii_lowercase()))
    }

    fn allows(&self, credential: &str, production: bool) -> bool {
        match self.0.as_deref() {
            None => true,
            Some("prod") => production,
            Some("dev") => !production,
            Some(named) => named == credential.to_ascii_lowercase(),
        }
    }
}

/// The first source of Entra ID tokens, or an error naming every place it looked.
pub fn find(env: Env<'_>) -> Result<EntraSource, ModelError> {
    let allowed = Allowed::from(env);
    let tenant = var(env, "AZURE_TENANT_ID");
    let client_id = var(env, "AZURE_CLIENT_ID");
    if allowed.allows("EnvironmentCredential", true)
        && let (Some(tenant), Some(client_id), Some(secret)) =
            (&tenant, &client_id, var(env, "AZURE_CLIENT_SECRET"))
    {
        return Ok(EntraSource::ClientSecret {
            token_url: token_url(env, tenant)?,
            client_id: client_id.clone(),
            client_secret: Secret::new(secret),
        });
    }
    if allowed.allows("EnvironmentCredential", true)
        && let Some(certificate) = var(env, "AZURE_CLIENT_CERTIFICATE_PATH")
    {
        return Err(ModelError::Config(format!(
            "AZURE_CLIENT_CERTIFICATE_PATH names a certificate ({certificate}), which agentry \
             does not sign with: give the service principal a secret (AZURE_CLIENT_SECRET) or \
             a federated token (AZURE_FEDERATED_TOKEN_FILE)"
        )));
    }
    if allowed.allows("WorkloadIdentityCredential", true)
        && let (Some(tenant), Some(client_id), Some(file)) =
            (&tenant, &client_id, var(env, "AZURE_FEDERATED_TOKEN_FILE"))
    {
        return Ok(EntraSource::WorkloadIdentity {
            token_url: token_url(env, tenant)?,
            client_id: client_id.clone(),
            token_file: PathBuf::from(file),
        });
    }
    if allowed.allows("ManagedIdentityCredential", true) {
        if let (Some(endpoint), Some(header)) =
            (var(env, "IDENTITY_ENDPOINT"), var(env, "IDENTITY_HEADER"))
        {
            return Ok(EntraSource::AppServiceIdentity {
                endpoint,
                header: Secret::new(header),
                client_id,
            });
        }
        let host = var(env, "AZURE_POD_IDENTITY_AUTHORITY_HOST")
            .or_else(|| on_azure_machine().then(|| IMDS_HOST.to_owned()));
        if let Some(host) = host {
            return Ok(EntraSource::InstanceMetadata {
                host: host.trim_end_matches('/').to_owned(),
                client_id,
            });
        }
    }
    if allowed.allows("AzureCliCredential", false)
        && let Some(program) = on_path(env, "az")
    {
        return Ok(EntraSource::AzureCli { program, tenant });
    }
    let narrowed = match &allowed.0 {
        Some(value) => format!(" (AZURE_TOKEN_CREDENTIALS={value} narrows the search)"),
        None => String::new(),
    };
    Err(ModelError::Config(format!(
        "no Microsoft Entra ID credentials found{narrowed}: looked for AZURE_TENANT_ID with \
         AZURE_CLIENT_ID and AZURE_CLIENT_SECRET, AZURE_FEDERATED_TOKEN_FILE (workload \
         identity), a managed identity (IDENTITY_ENDPOINT, or an Azure machine's) and the Azure \
         CLI (`az` on PATH, after `az login`)"
    )))
}

/// The tenant's token endpoint at the authority (`AZURE_AUTHORITY_HOST`, else Entra ID's
/// public cloud), which must be HTTPS (or plain HTTP to a loopback address): a client's secret
/// goes there.
fn token_url(env: Env<'_>, tenant: &str) -> Result<String, ModelError> {
    let authority = var(env, "AZURE_AUTHORITY_HOST").unwrap_or_else(|| DEFAULT_AUTHORITY.into());
    let parsed = url::Url::parse(&authority)
        .map_err(|e| ModelError::Config(format!("AZURE_AUTHORITY_HOST is not a URL: {e}")))?;
    let loopback = match parsed.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        None => false,
    };
    let allowed = match parsed.scheme() {
        "https" => true,
        "http" => loopback,
        _ => false,
    };
    if !allowed {
        return Err(ModelError::Config(format!(
            "AZURE_AUTHORITY_HOST must be an HTTPS URL (a client's credentials are sent there): \
             {authority}"
        )));
    }
    Ok(format!(
        "{}/{tenant}/oauth2/v2.0/token",
        authority.trim_end_matches('/')
    ))
}

/// Whether this machine is an Azure virtual machine, as its firmware says.
fn on_azure_machine() -> bool {
    std::fs::read_to_string(ASSET_TAG_FILE).is_ok_and(|tag| tag.trim() == AZURE_ASSET_TAG)
}

/// `program` in one of `PATH`'s absolute directories. A relative entry (`.`, an empty one,
/// `bin`) is passed over: it names a folder of the project agentry works in, whose `az` a
/// repository could ship.
fn on_path(env: Env<'_>, program: &str) -> Option<PathBuf> {
    let path = var(env, "PATH")?;
    std::env::split_paths(&path)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file())
}

/// What `az account get-access-token --output json` prints.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct CliToken {
    access_token: String,
    #[serde(rename = "expires_on")]
    expires_on: Option<u64>,
}

#[agentry::async_trait]
impl TokenSource for EntraSource {
    async fn fetch(&self, client: &reqwest::Client) -> Result<Expiring<Secret>, String> {
        match self {
            Self::ClientSecret {
                token_url,
                client_id,
                client_secret,
            } => {
                let form = [
                    ("grant_type", "client_credentials"),
                    ("client_id", client_id.as_str()),
                    ("client_secret", client_secret.expose()),
                    ("scope", COGNITIVE_SERVICES_SCOPE),
                ];
                oauth_token(client.post(token_url).form(&form)).await
            }
            Self::WorkloadIdentity {
                token_url,
                client_id,
                token_file,
            } => {
                let assertion = std::fs::read_to_string(token_file)
                    .map_err(|e| format!("cannot read {}: {e}", token_file.display()))?;
                let form = [
                    ("grant_type", "client_credentials"),
                    ("client_id", client_id.as_str()),
                    (
                        "client_assertion_type",
                        "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
                    ),
                    ("client_assertion", assertion.trim()),
                    ("scope", COGNITIVE_SERVICES_SCOPE),
                ];
                oauth_token(client.post(token_url).form(&form)).await
            }
            Self::AppServiceIdentity {
                endpoint,
                header,
                client_id,
            } => {
                let mut query = vec![
                    ("api-version", "2019-08-01"),
                    ("resource", COGNITIVE_SERVICES_RESOURCE),
                ];
                if let Some(id) = client_id {
                    query.push(("client_id", id));
                }
                let request = client
                    .get(endpoint)
                    .query(&query)
                    .header("x-identity-header", header.expose());
                oauth_token(request).await
            }
            Self::InstanceMetadata { host, client_id } => {
                let mut query = vec![
                    ("api-version", "2018-02-01"),
                    ("resource", COGNITIVE_SERVICES_RESOURCE),
                ];
                if let Some(id) = client_id {
                    query.push(("client_id", id));
                }
                let request = client
                    .get(format!("{host}/metadata/identity/oauth2/token"))
                    .query(&query)
                    .header("metadata", "true");
                oauth_token(request).await
            }
            Self::AzureCli { program, tenant } => {
                let mut az = tokio::process::Command::new(program);
                az.args([
                    "account",
                    "get-access-token",
                    "--resource",
                    COGNITIVE_SERVICES_RESOURCE,
                    "--output",
                    "json",
                ]);
                if let Some(tenant) = tenant {
                    az.args(["--tenant", tenant]);
                }
                let printed = command_output(az, "az account get-access-token").await?;
                let token: CliToken = serde_json::from_str(&printed)
                    .map_err(|e| format!("the Azure CLI printed no token ({e})"))?;
                Ok(Expiring {
                    value: Secret::new(token.access_token),
                    expires: token
                        .expires_on
                        .map(|epoch| SystemTime::UNIX_EPOCH + Duration::from_secs(epoch)),
                })
            }
        }
    }

    fn describe(&self) -> String {
        EntraSource::describe(self)
    }

    fn issuer(&self) -> &'static str {
        "Microsoft Entra ID"
    }
}
