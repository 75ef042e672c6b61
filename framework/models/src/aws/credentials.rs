//! Fetching the credentials a [`CredentialSource`] names, and keeping them: temporary ones
//! (a role's, a container's, an instance's, a process's with an `Expiration`) are fetched again
//! five minutes before they expire. Errors name the source, never a credential.

use super::chain::CredentialSource;
use super::sigv4::Credentials;
use crate::auth::{Expiring, Refreshing, ServiceClient, command_output, successful_text};
use agentry::model::ModelError;
use chrono::DateTime;
use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
use serde::Deserialize;
use std::time::SystemTime;

/// Credentials from one source, fetched when first needed and again before they expire.
#[derive(Debug)]
pub struct CredentialChain {
    source: CredentialSource,
    client: ServiceClient,
    cached: Refreshing<Credentials>,
}

/// The JSON the container endpoint, the instance metadata service and a `credential_process`
/// answer with.
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct Issued {
    access_key_id: String,
    secret_access_key: String,
    #[serde(alias = "SessionToken")]
    token: Option<String>,
    expiration: Option<String>,
}

impl CredentialChain {
    /// Credentials from `source`.
    pub fn new(source: CredentialSource) -> Self {
        Self {
            source,
            client: ServiceClient::default(),
            cached: Refreshing::default(),
        }
    }

    /// Where the credentials come from.
    pub fn source(&self) -> &CredentialSource {
        &self.source
    }

    /// Credentials good for at least five more minutes.
    pub async fn credentials(&self) -> Result<Credentials, ModelError> {
        self.cached.get(|| self.fetch()).await.map_err(|why| {
            ModelError::Config(format!(
                "no AWS credentials from {}: {why}",
                self.source.describe()
            ))
        })
    }

    async fn fetch(&self) -> Result<Expiring<Credentials>, String> {
        match &self.source {
            CredentialSource::Static { credentials, .. } => Ok(Expiring {
                value: credentials.clone(),
                expires: None,
            }),
            CredentialSource::Process { command, .. } => process(command).await,
            CredentialSource::WebIdentity {
                token_file,
                role_arn,
                session_name,
                sts_url,
            } => {
                let token = std::fs::read_to_string(token_file)
                    .map_err(|e| format!("cannot read {}: {e}", token_file.display()))?;
                let form = [
                    ("Action", "AssumeRoleWithWebIdentity"),
                    ("Version", "2011-06-15"),
                    ("RoleArn", role_arn),
                    ("RoleSessionName", session_name),
                    ("WebIdentityToken", token.trim()),
                ]
                .iter()
                .map(|(key, value)| {
                    format!("{key}={}", utf8_percent_encode(value, NON_ALPHANUMERIC))
                })
                .collect::<Vec<_>>()
                .join("&");
                let answer = self
                    .client
                    .get()?
                    .post(format!("{sts_url}/"))
                    .header("content-type", "application/x-www-form-urlencoded")
                    .body(form)
                    .send()
                    .await
                    .map_err(|e| format!("STS cannot be reached: {e}"))?;
                let status = answer.status();
                let text = answer.text().await.unwrap_or_default();
                if !status.is_success() {
                    let message = xml_text(&text, "Message").unwrap_or_else(|| status.to_string());
                    let code = xml_text(&text, "Code").unwrap_or_default();
                    return Err(format!("STS refused the web identity: {message} [{code}]"));
                }
                let field = |name: &str| {
                    xml_text(&text, name).ok_or_else(|| format!("STS's answer has no {name}"))
                };
                Ok(Expiring {
                    value: Credentials {
                        access_key_id: field("AccessKeyId")?,
                        secret_access_key: field("SecretAccessKey")?,
                        session_token: Some(field("SessionToken")?),
                    },
                    expires: xml_text(&text, "Expiration").and_then(|e| timestamp(&e)),
                })
            }
            CredentialSource::Container {
                url,
                token,
                token_file,
            } => {
                let mut request = self.client.get()?.get(url);
                let token = match token_file {
                    Some(file) => Some(
                        std::fs::read_to_string(file)
                            .map_err(|e| format!("cannot read {}: {e}", file.display()))?
                            .trim()
                            .to_owned(),
                    ),
                    None => token.as_ref().map(|secret| secret.expose().to_owned()),
                };
                if let Some(token) = token {
                    request = request.header("authorization", token);
                }
                issued(successful_text(request).await?)
            }
            CredentialSource::InstanceMetadata { endpoint } => {
                let client = self.client.get()?;
                let token = successful_text(
                    client
                        .put(format!("{endpoint}/latest/api/token"))
                        .header("x-aws-ec2-metadata-token-ttl-seconds", "21600"),
                )
                .await?;
                let base = format!("{endpoint}/latest/meta-data/iam/security-credentials/");
                let roles =
                    successful_text(client.get(&base).header("x-aws-ec2-metadata-token", &token))
                        .await?;
                let role = roles
                    .lines()
                    .next()
                    .map(str::trim)
                    .filter(|role| !role.is_empty())
                    .ok_or("the instance has no role")?;
                let answer = client
                    .get(format!("{base}{role}"))
                    .header("x-aws-ec2-metadata-token", &token);
                issued(successful_text(answer).await?)
            }
        }
    }
}

/// Runs a `credential_process` command and reads what it prints.
async fn process(command: &str) -> Result<Expiring<Credentials>, String> {
    // The system shell by its path: a relative PATH entry could name the project's own `sh`.
    let mut shell = tokio::process::Command::new("/bin/sh");
    shell.arg("-c").arg(command);
    issued(command_output(shell, command).await?)
}

/// Credentials from the JSON a service or process answered with.
fn issued(text: String) -> Result<Expiring<Credentials>, String> {
    let issued: Issued = serde_json::from_str(&text)
        .map_err(|e| format!("the answer is not the credentials' JSON ({e})"))?;
    Ok(Expiring {
        value: Credentials {
            access_key_id: issued.access_key_id,
            secret_access_key: issued.secret_access_key,
            session_token: issued.token,
        },
        expires: issued.expiration.as_deref().and_then(timestamp),
    })
}

fn timestamp(text: &str) -> Option<SystemTime> {
    DateTime::parse_from_rfc3339(text.trim())
        .ok()
        .map(SystemTime::from)
}

/// The text of the first `<tag>` element of an XML answer (STS's), its entities decoded.
fn xml_text(xml: &str, tag: &str) -> Option<String> {
    let open = format!("<{tag}>");
    let start = xml.find(&open)? + open.len();
    let end = start + xml[start..].find(&format!("</{tag}>"))?;
    Some(
        xml[start..end]
            .trim()
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&quot;", "\"")
            .replace("&apos;", "'")
            .replace("&amp;", "&"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xml_fields_are_read_with_their_entities() {
        let xml = "<R><Credentials><AccessKeyId>AK</AccessKeyId><SessionToken>a&amp;b</SessionToken></Credentials></R>";
        assert_eq!(xml_text(xml, "AccessKeyId").as_deref(), Some("AK"));
        assert_eq!(xml_text(xml, "SessionToken").as_deref(), Some("a&b"));
        assert_eq!(xml_text(xml, "Expiration"), None);
    }

    #[tokio::test]
    async fn a_credential_process_is_run_and_its_expiry_kept() {
        let chain = CredentialChain::new(CredentialSource::Process {
            command: r#"printf '{"Version":1,"AccessKeyId":"AKP","SecretAccessKey":"s","SessionToken":"t","Expiration":"2099-01-01T00:00:00Z"}'"#.to_owned(),
            profile: "p".to_owned(),
        });
        let credentials = chain.credentials().await.unwrap();
        assert_eq!(credentials.access_key_id, "AKP");
        assert_eq!(credentials.session_token.as_deref(), Some("t"));
        let failing = CredentialChain::new(CredentialSource::Process {
            command: "echo denied >&2; exit 3".to_owned(),
            profile: "p".to_owned(),
        });
        let error = failing.credentials().await.unwrap_err().to_string();
        assert!(
            error.contains("credential_process of profile p") && error.contains("denied"),
            "{error}"
        );
    }
}
