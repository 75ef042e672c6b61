//! Where AWS credentials are found, in the order of AWS's SDKs: the environment
//! (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`), the profile
//! (`AWS_PROFILE`, else `default`) in `~/.aws/credentials` and `~/.aws/config` (keys,
//! `credential_process`, or a web identity), a web identity from the environment
//! (`AWS_WEB_IDENTITY_TOKEN_FILE` with `AWS_ROLE_ARN`), the container endpoint
//! (`AWS_CONTAINER_CREDENTIALS_RELATIVE_URI` or `_FULL_URI`), then the EC2 instance metadata
//! service (unless `AWS_EC2_METADATA_DISABLED=true`). Finding reads files and variables only;
//! fetching ([`super::credentials`]) is what asks a service.

use super::profile::{self, Profile, ProfileFiles};
use super::sigv4::Credentials;
pub use crate::auth::Env;
use crate::auth::var;
use crate::secret::Secret;
use agentry::model::ModelError;
use std::path::PathBuf;

/// Where the credentials come from, as the chain found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CredentialSource {
    /// Keys given outright, and where (`the environment`, `profile default in ~/.aws/…`).
    Static {
        /// The keys.
        credentials: Credentials,
        /// Where they were found.
        found_in: String,
    },
    /// A profile's `credential_process`: a command that prints them as JSON.
    Process {
        /// The command line.
        command: String,
        /// The profile that names it.
        profile: String,
    },
    /// A web identity token exchanged for a role's credentials at STS
    /// (`AssumeRoleWithWebIdentity`).
    WebIdentity {
        /// The file holding the token (read at each exchange: it is rotated).
        token_file: PathBuf,
        /// The role to assume.
        role_arn: String,
        /// The session's name.
        session_name: String,
        /// STS's URL (`AWS_ENDPOINT_URL_STS`, else the region's).
        sts_url: String,
    },
    /// The container credentials endpoint (ECS tasks, EKS Pod Identity).
    Container {
        /// The URL.
        url: String,
        /// The `Authorization` header's value, given outright.
        token: Option<Secret>,
        /// A file holding it (read at each fetch).
        token_file: Option<PathBuf>,
    },
    /// The EC2 instance metadata service, IMDSv2.
    InstanceMetadata {
        /// Its base URL (`AWS_EC2_METADATA_SERVICE_ENDPOINT`, else `http://169.254.169.254`).
        endpoint: String,
    },
}

impl CredentialSource {
    /// Where the credentials come from, in a few words (never the credentials).
    pub fn describe(&self) -> String {
        match self {
            Self::Static { found_in, .. } => found_in.clone(),
            Self::Process { profile, .. } => format!("credential_process of profile {profile}"),
            Self::WebIdentity { role_arn, .. } => format!("web identity for {role_arn}"),
            Self::Container { url, .. } => format!("the container endpoint {url}"),
            Self::InstanceMetadata { endpoint } => {
                format!("the instance metadata service at {endpoint}")
            }
        }
    }
}

/// The profile the variables name (`AWS_PROFILE`, else `default`), and whether one was named.
fn profile_name(env: Env<'_>) -> (String, bool) {
    match var(env, "AWS_PROFILE") {
        Some(name) => (name, true),
        None => ("default".to_owned(), false),
    }
}

/// The shared files, where the variables put them or under `$HOME/.aws`.
pub fn profile_files(env: Env<'_>) -> ProfileFiles {
    let home = var(env, "HOME").map(PathBuf::from).unwrap_or_default();
    let aws = home.join(".aws");
    ProfileFiles {
        credentials: var(env, "AWS_SHARED_CREDENTIALS_FILE")
            .map(PathBuf::from)
            .unwrap_or_else(|| aws.join("credentials")),
        config: var(env, "AWS_CONFIG_FILE")
            .map(PathBuf::from)
            .unwrap_or_else(|| aws.join("config")),
    }
}

/// The region: `AWS_REGION`, `AWS_DEFAULT_REGION`, else the profile's `region`.
pub fn region(env: Env<'_>) -> Option<String> {
    var(env, "AWS_REGION")
        .or_else(|| var(env, "AWS_DEFAULT_REGION"))
        .or_else(|| {
            let (name, _) = profile_name(env);
            profile::load(&profile_files(env), &name)?.remove("region")
        })
}

/// The first source of credentials the chain finds, or an error naming every place it looked.
/// `region` places STS for a web identity.
pub fn find(env: Env<'_>, region: &str) -> Result<CredentialSource, ModelError> {
    if let Some(found) = from_environment(env)? {
        return Ok(found);
    }
    let (name, named) = profile_name(env);
    let files = profile_files(env);
    match profile::load(&files, &name) {
        Some(profile) => {
            if let Some(found) = from_profile(env, &name, &files, profile, region)? {
                return Ok(found);
            }
        }
        None if named => {
            return Err(ModelError::Config(format!(
                "AWS_PROFILE names profile `{name}`, which neither {} nor {} has",
                files.credentials.display(),
                files.config.display()
            )));
        }
        None => {}
    }
    if let (Some(token_file), Some(role_arn)) = (
        var(env, "AWS_WEB_IDENTITY_TOKEN_FILE"),
        var(env, "AWS_ROLE_ARN"),
    ) {
        return Ok(web_identity(env, token_file, role_arn, region));
    }
    if let Some(found) = container(env)? {
        return Ok(found);
    }
    if var(env, "AWS_EC2_METADATA_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true")) {
        return Err(ModelError::Config(format!(
            "no AWS credentials found: looked for AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, \
             profile `{name}` in {} and {}, AWS_WEB_IDENTITY_TOKEN_FILE with AWS_ROLE_ARN, and \
             AWS_CONTAINER_CREDENTIALS_RELATIVE_URI or _FULL_URI (the instance metadata service \
             is off: AWS_EC2_METADATA_DISABLED); or set AWS_BEARER_TOKEN_BEDROCK",
            files.credentials.display(),
            files.config.display()
        )));
    }
    let endpoint = var(env, "AWS_EC2_METADATA_SERVICE_ENDPOINT")
        .unwrap_or_else(|| "http://169.254.169.254".to_owned());
    Ok(CredentialSource::InstanceMetadata {
        endpoint: endpoint.trim_end_matches('/').to_owned(),
    })
}

fn from_environment(env: Env<'_>) -> Result<Option<CredentialSource>, ModelError> {
    match (
        var(env, "AWS_ACCESS_KEY_ID"),
        var(env, "AWS_SECRET_ACCESS_KEY"),
    ) {
        (Some(access_key_id), Some(secret_access_key)) => Ok(Some(CredentialSource::Static {
            credentials: Credentials {
                access_key_id,
                secret_access_key,
                session_token: var(env, "AWS_SESSION_TOKEN"),
            },
            found_in: "the environment (AWS_ACCESS_KEY_ID)".to_owned(),
        })),
        (Some(_), None) => Err(ModelError::Config(
            "AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not".to_owned(),
        )),
        (None, Some(_)) => Err(ModelError::Config(
            "AWS_SECRET_ACCESS_KEY is set but AWS_ACCESS_KEY_ID is not".to_owned(),
        )),
        (None, None) => Ok(None),
    }
}

fn from_profile(
    env: Env<'_>,
    name: &str,
    files: &ProfileFiles,
    mut profile: Profile,
    region: &str,
) -> Result<Option<CredentialSource>, ModelError> {
    let found_in = format!(
        "profile {name} in {} or {}",
        files.credentials.display(),
        files.config.display()
    );
    if let (Some(access_key_id), Some(secret_access_key)) = (
        profile.remove("aws_access_key_id"),
        profile.remove("aws_secret_access_key"),
    ) {
        return Ok(Some(CredentialSource::Static {
            credentials: Credentials {
                access_key_id,
                secret_access_key,
                session_token: profile.remove("aws_session_token"),
            },
            found_in,
        }));
    }
    if let Some(command) = profile.remove("credential_process") {
        return Ok(Some(CredentialSource::Process {
            command,
            profile: name.to_owned(),
        }));
    }
    if let (Some(token_file), Some(role_arn)) = (
        profile.remove("web_identity_token_file"),
        profile.remove("role_arn"),
    ) {
        return Ok(Some(web_identity(env, token_file, role_arn, region)));
    }
    let unsupported = ["role_arn", "sso_session", "sso_start_url", "login_session"];
    if let Some(key) = unsupported.iter().find(|key| profile.contains_key(**key)) {
        return Err(ModelError::Config(format!(
            "profile {name} gets its credentials through `{key}`, which agentry does not read: \
             give the profile a credential_process (`aws configure export-credentials --profile \
             {name} --format process` prints them), or set AWS_ACCESS_KEY_ID and \
             AWS_SECRET_ACCESS_KEY"
        )));
    }
    Ok(None)
}

fn web_identity(
    env: Env<'_>,
    token_file: String,
    role_arn: String,
    region: &str,
) -> CredentialSource {
    let sts_url = var(env, "AWS_ENDPOINT_URL_STS")
        .or_else(|| var(env, "AWS_ENDPOINT_URL"))
        .unwrap_or_else(|| format!("https://sts.{region}.amazonaws.com"));
    CredentialSource::WebIdentity {
        token_file: PathBuf::from(token_file),
        role_arn,
        session_name: var(env, "AWS_ROLE_SESSION_NAME")
            .unwrap_or_else(|| format!("agentry-{}", std::process::id())),
        sts_url: sts_url.trim_end_matches('/').to_owned(),
    }
}

/// The container endpoint: a path on ECS's fixed address, or a full URL that must be HTTPS or
/// one of the addresses AWS's SDKs allow plain HTTP to (loopback, ECS's and EKS's link-local
/// agents), so a variable cannot send the token elsewhere in clear.
fn container(env: Env<'_>) -> Result<Option<CredentialSource>, ModelError> {
    let url = if let Some(path) = var(env, "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI") {
        format!("http://169.254.170.2{path}")
    } else if let Some(url) = var(env, "AWS_CONTAINER_CREDENTIALS_FULL_URI") {
        let parsed = url::Url::parse(&url).map_err(|e| {
            ModelError::Config(format!(
                "AWS_CONTAINER_CREDENTIALS_FULL_URI is not a URL: {e}"
            ))
        })?;
        if parsed.scheme() != "https" && !plain_http_allowed(&parsed) {
            return Err(ModelError::Config(format!(
                "AWS_CONTAINER_CREDENTIALS_FULL_URI must be HTTPS, or HTTP to a loopback address \
                 or the container agent's (169.254.170.2, 169.254.170.23, fd00:ec2::23): {url}"
            )));
        }
        url
    } else {
        return Ok(None);
    };
    Ok(Some(CredentialSource::Container {
        url,
        token: var(env, "AWS_CONTAINER_AUTHORIZATION_TOKEN").map(Secret::from),
        token_file: var(env, "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE").map(PathBuf::from),
    }))
}

fn plain_http_allowed(url: &url::Url) -> bool {
    match url.host() {
        Some(url::Host::Ipv4(ip)) => {
            ip.is_loopback()
                || ip.octets() == [169, 254, 170, 2]
                || ip.octets() == [169, 254, 170, 23]
        }
        Some(url::Host::Ipv6(ip)) => {
            ip.is_loopback() || ip == std::net::Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x23)
        }
        Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        None => false,
    }
}
