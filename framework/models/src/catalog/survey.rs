//! What `agentry models` shows: each provider the catalog knows (built in or configured), its
//! wire format, where it is reached, and whether its credentials are found — where they were
//! found, or what was looked for — never the credentials themselves.

use super::{ApiKind, BUILT_IN, ModelCatalog, ProviderConfig};
use agentry::model::ModelError;
use serde::Serialize;

/// One provider as the catalog finds it here.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProviderSurvey {
    /// Its name, as in `PROVIDER/MODEL`.
    pub name: String,
    /// Its wire format.
    pub api: &'static str,
    /// Where it is reached, as far as that is known without asking (a URL, or the variable
    /// that would give it).
    pub endpoint: String,
    /// Whether its credentials are found.
    pub credentials: CredentialsFound,
    /// Whether a `[providers.NAME]` table configures it.
    pub configured: bool,
}

/// Whether, and where, a provider's credentials are found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum CredentialsFound {
    /// It needs none (a local server).
    NotNeeded,
    /// Found, here.
    Found {
        /// Where: a variable's name, a file, a service.
        from: String,
    },
    /// Not found.
    Missing {
        /// What was looked for, and where.
        looked_for: String,
    },
}

impl ModelCatalog<'_> {
    /// Every provider, built in ones first, then the configured ones of names of their own.
    pub fn survey(&self) -> Vec<ProviderSurvey> {
        let mut surveys: Vec<ProviderSurvey> = BUILT_IN
            .iter()
            .map(|built_in| {
                let config = self
                    .providers
                    .get(built_in.name)
                    .cloned()
                    .unwrap_or_default();
                self.survey_of(built_in.name, Some(built_in.api), &config)
            })
            .collect();
        for (name, config) in self.providers {
            if !BUILT_IN.iter().any(|b| b.name == name) {
                surveys.push(self.survey_of(name, None, config));
            }
        }
        surveys
    }

    fn survey_of(
        &self,
        name: &str,
        built_in: Option<ApiKind>,
        config: &ProviderConfig,
    ) -> ProviderSurvey {
        let api = config.api.or(built_in).unwrap_or(ApiKind::Openai);
        let built = BUILT_IN.iter().find(|b| b.name == name);
        let (endpoint, credentials) = match (built_in, api) {
            (_, ApiKind::Bedrock) => self.bedrock_survey(config),
            (_, ApiKind::Vertex) => self.vertex_survey(config),
            (Some(ApiKind::Azure), _) | (_, ApiKind::Azure) => (
                config
                    .base_url
                    .clone()
                    .or_else(|| self.var("AZURE_OPENAI_ENDPOINT"))
                    .unwrap_or_else(|| "AZURE_OPENAI_ENDPOINT (not set)".to_owned()),
                self.azure_survey(
                    config
                        .api_key_env
                        .as_deref()
                        .unwrap_or("AZURE_OPENAI_API_KEY"),
                ),
            ),
            (Some(ApiKind::Anthropic), ApiKind::Anthropic) if name == "foundry" => (
                self.base_url(name, built, config).unwrap_or_else(said),
                self.azure_survey(
                    config
                        .api_key_env
                        .as_deref()
                        .unwrap_or("AZURE_FOUNDRY_API_KEY"),
                ),
            ),
            _ => {
                let endpoint = self.base_url(name, built, config).unwrap_or_else(said);
                let key = config
                    .api_key_env
                    .as_deref()
                    .or_else(|| built.and_then(|b| b.key_env));
                let credentials = match key {
                    None => CredentialsFound::NotNeeded,
                    Some(key) if api == ApiKind::Gemini && config.api_key_env.is_none() => {
                        self.key_survey(&[key, "GOOGLE_API_KEY"])
                    }
                    Some(key) => self.key_survey(&[key]),
                };
                (endpoint, credentials)
            }
        };
        ProviderSurvey {
            name: name.to_owned(),
            api: api_name(api),
            endpoint,
            credentials,
            configured: self.providers.contains_key(name),
        }
    }

    /// The first of `variables` that is set.
    fn key_survey(&self, variables: &[&str]) -> CredentialsFound {
        match variables.iter().find(|name| self.var(name).is_some()) {
            Some(name) => CredentialsFound::Found {
                from: (*name).to_owned(),
            },
            None => CredentialsFound::Missing {
                looked_for: variables.join(" or "),
            },
        }
    }

    /// The resource's key in `key_env`, else Microsoft Entra ID credentials.
    #[cfg(feature = "azure")]
    fn azure_survey(&self, key_env: &str) -> CredentialsFound {
        use crate::azure::entra::{self, EntraSource};
        if self.var(key_env).is_some() {
            return CredentialsFound::Found {
                from: key_env.to_owned(),
            };
        }
        let found = entra::find(self.env).map(|source| {
            let later = matches!(source, EntraSource::InstanceMetadata { .. });
            (source.describe(), later)
        });
        match found_or_missing(found) {
            CredentialsFound::Missing { looked_for } => CredentialsFound::Missing {
                looked_for: format!("{key_env}, or Microsoft Entra ID: {looked_for}"),
            },
            found => found,
        }
    }

    #[cfg(not(feature = "azure"))]
    fn azure_survey(&self, _key_env: &str) -> CredentialsFound {
        CredentialsFound::Missing {
            looked_for: "nothing: this build has no `azure` feature".to_owned(),
        }
    }

    #[cfg(feature = "bedrock")]
    fn bedrock_survey(&self, config: &ProviderConfig) -> (String, CredentialsFound) {
        use crate::aws::chain;
        let region = config.region.clone().or_else(|| chain::region(self.env));
        let endpoint = config
            .base_url
            .clone()
            .or_else(|| self.var("AWS_ENDPOINT_URL_BEDROCK_RUNTIME"))
            .or_else(|| self.var("AWS_ENDPOINT_URL"))
            .or_else(|| {
                let region = region.as_deref()?;
                Some(format!("https://bedrock-runtime.{region}.amazonaws.com"))
            })
            .unwrap_or_else(|| "no region: set AWS_REGION".to_owned());
        let key = config
            .api_key_env
            .as_deref()
            .unwrap_or("AWS_BEARER_TOKEN_BEDROCK");
        if self.var(key).is_some() {
            return (
                endpoint,
                CredentialsFound::Found {
                    from: key.to_owned(),
                },
            );
        }
        let found = chain::find(self.env, region.as_deref().unwrap_or("us-east-1")).map(|source| {
            let later = matches!(source, chain::CredentialSource::InstanceMetadata { .. });
            (source.describe(), later)
        });
        (endpoint, found_or_missing(found))
    }

    #[cfg(not(feature = "bedrock"))]
    fn bedrock_survey(&self, _config: &ProviderConfig) -> (String, CredentialsFound) {
        let missing = CredentialsFound::Missing {
            looked_for: "nothing: this build has no `bedrock` feature".to_owned(),
        };
        (String::new(), missing)
    }

    #[cfg(feature = "vertex")]
    fn vertex_survey(&self, config: &ProviderConfig) -> (String, CredentialsFound) {
        use crate::google::{GoogleSource, adc};
        let place = self.vertex_place(config);
        let found = adc::find(self.env);
        let project = place
            .project
            .or_else(|| found.as_ref().ok()?.project().map(str::to_owned))
            .unwrap_or_else(|| "not set: GOOGLE_CLOUD_PROJECT".to_owned());
        let endpoint = format!(
            "{} (project {project}, location {})",
            place.base_url, place.location
        );
        let found = found.map(|source| {
            let later = matches!(source, GoogleSource::MetadataServer { .. });
            (source.describe(), later)
        });
        (endpoint, found_or_missing(found))
    }

    #[cfg(not(feature = "vertex"))]
    fn vertex_survey(&self, _config: &ProviderConfig) -> (String, CredentialsFound) {
        let missing = CredentialsFound::Missing {
            looked_for: "nothing: this build has no `vertex` feature".to_owned(),
        };
        (String::new(), missing)
    }
}

/// Credentials found — where, and whether a metadata service is asked for them only at the
/// first request — or what was looked for.
#[cfg(any(feature = "azure", feature = "bedrock", feature = "vertex"))]
fn found_or_missing(found: Result<(String, bool), ModelError>) -> CredentialsFound {
    match found {
        Ok((from, true)) => CredentialsFound::Found {
            from: format!("{from} (asked at the first request)"),
        },
        Ok((from, false)) => CredentialsFound::Found { from },
        Err(why) => CredentialsFound::Missing {
            looked_for: said(why),
        },
    }
}

/// What an error says, without the kind of error before it.
fn said(error: ModelError) -> String {
    match error {
        ModelError::Config(why) => why,
        other => other.to_string(),
    }
}

/// The wire format's name, as configuration writes it.
fn api_name(api: ApiKind) -> &'static str {
    match api {
        ApiKind::Openai => "openai",
        ApiKind::OpenaiResponses => "openai_responses",
        ApiKind::Anthropic => "anthropic",
        ApiKind::Bedrock => "bedrock",
        ApiKind::Gemini => "gemini",
        ApiKind::Azure => "azure",
        ApiKind::Vertex => "vertex",
    }
}
