//! Opening a model from the name users write: `PROVIDER/MODEL` (`openai/gpt-4.1`,
//! `anthropic/claude-sonnet-4-5`, `ollama/qwen3`, `openrouter/anthropic/claude-sonnet-4.5`, a
//! provider of one's own from configuration), `scripted:PATH` or `replay:FILE` (a recording).
//!
//! | provider | API | base URL (override) | key |
//! |---|---|---|---|
//! | `openai` | Chat Completions (or Responses, by config) | `https://api.openai.com/v1` (`OPENAI_BASE_URL`, with `/v1`) | `OPENAI_API_KEY` |
//! | `anthropic` | Messages | `https://api.anthropic.com` (`ANTHROPIC_BASE_URL`, without `/v1`) | `ANTHROPIC_API_KEY` |
//! | `openrouter` | Chat Completions | `https://openrouter.ai/api/v1` | `OPENROUTER_API_KEY` |
//! | `deepseek` | Chat Completions | `https://api.deepseek.com/v1` | `DEEPSEEK_API_KEY` |
//! | `groq` | Chat Completions | `https://api.groq.com/openai/v1` | `GROQ_API_KEY` |
//! | `xai` | Chat Completions | `https://api.x.ai/v1` | `XAI_API_KEY` |
//! | `ollama` | Chat Completions | `http://127.0.0.1:11434/v1` (`OLLAMA_HOST`) | none |
//! | `lmstudio` | Chat Completions | `http://127.0.0.1:1234/v1` | none |
//! | `llamacpp` | Chat Completions | `http://127.0.0.1:8080/v1` | none |
//! | `vllm` | Chat Completions | `http://127.0.0.1:8000/v1` | none |
//! | `gemini` | Gemini API `streamGenerateContent` (feature `gemini`) | `https://generativelanguage.googleapis.com` (`GEMINI_BASE_URL`) | `GEMINI_API_KEY`, else `GOOGLE_API_KEY` |
//! | `azure` | Azure OpenAI: the v1 API's Chat Completions (or Responses, by config), or the classic one with `AZURE_OPENAI_API_VERSION` (feature `azure`) | `AZURE_OPENAI_ENDPOINT` | `AZURE_OPENAI_API_KEY`, else Microsoft Entra ID (`azure::entra`) |
//! | `foundry` | Anthropic Messages on Azure AI Foundry (feature `azure`) | `https://RESOURCE.services.ai.azure.com/anthropic` (`AZURE_FOUNDRY_RESOURCE`, or `AZURE_FOUNDRY_BASE_URL`) | `AZURE_FOUNDRY_API_KEY`, else Microsoft Entra ID |
//! | `vertex` | Vertex AI: Gemini's `streamGenerateContent`, Claude's `streamRawPredict` (feature `vertex`) | `https://aiplatform.googleapis.com` for the `global` location, else `https://LOCATION-aiplatform.googleapis.com` (`VERTEX_BASE_URL`); project `GOOGLE_CLOUD_PROJECT`, location `GOOGLE_CLOUD_LOCATION` | Google's Application Default Credentials: `GOOGLE_APPLICATION_CREDENTIALS`, gcloud's file, the metadata server |
//! | `bedrock` | ConverseStream, or InvokeModelWithResponseStream for Claude (feature `bedrock`) | `https://bedrock-runtime.REGION.amazonaws.com` (`AWS_ENDPOINT_URL_BEDROCK_RUNTIME`, `AWS_ENDPOINT_URL`) | `AWS_BEARER_TOKEN_BEDROCK`, else SigV4 from AWS's credential chain |
//!
//! A `[providers.NAME]` table in configuration ([`ProviderConfig`]) overrides any of these or adds
//! a provider of its own.

mod azure;
mod bedrock;
mod gemini;
mod limits;
mod prices;
mod survey;
mod vertex;

use limits::ModelLimits;
pub use limits::known_limits;
pub use prices::{ListedPrice, PRICES, listed_price};
pub use survey::{CredentialsFound, ProviderSurvey};

use crate::anthropic::{AnthropicModel, AnthropicSettings};
use crate::http::HttpOptions;
use crate::openai::{OpenAiApi, OpenAiModel, OpenAiSettings};
use crate::secret::Secret;
use agentry::cost::Price;
use agentry::model::priced::Priced;
use agentry::model::replay::ReplayModel;
use agentry::model::scripted::ScriptedModel;
use agentry::model::{Model, ModelChoices, ModelError};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

/// Which wire format a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApiKind {
    /// OpenAI Chat Completions (and every compatible server).
    Openai,
    /// OpenAI Responses.
    OpenaiResponses,
    /// Anthropic Messages.
    Anthropic,
    /// Amazon Bedrock (ConverseStream, or InvokeModelWithResponseStream for Claude); needs the
    /// `bedrock` feature.
    Bedrock,
    /// Google's Gemini API (`streamGenerateContent`); needs the `gemini` feature.
    Gemini,
    /// Azure OpenAI (Chat Completions; for the built-in `azure`, `openai_responses` picks
    /// Responses); needs the `azure` feature.
    Azure,
    /// Google's Vertex AI (Gemini and Claude models); needs the `vertex` feature.
    Vertex,
}

/// A provider as configured in `[providers.NAME]`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderConfig {
    /// The API base URL (with `/v1` for OpenAI-compatible APIs, without for Anthropic).
    pub base_url: Option<String>,
    /// The environment variable holding the API key.
    pub api_key_env: Option<String>,
    /// The wire format (default: `openai`).
    pub api: Option<ApiKind>,
    /// The context window of its models, in tokens (overrides the built-in table).
    pub context_window: Option<u64>,
    /// Whether its models take images (default yes); with `false` each image is sent as a
    /// short note instead.
    pub images: Option<bool>,
    /// The most output tokens per response.
    pub max_output_tokens: Option<u32>,
    /// The cloud region (Bedrock's: overrides `AWS_REGION`; Vertex AI's location: overrides
    /// `GOOGLE_CLOUD_LOCATION`).
    pub region: Option<String>,
    /// The Google Cloud project (Vertex AI's: overrides `GOOGLE_CLOUD_PROJECT`).
    pub project: Option<String>,
    /// Azure OpenAI's classic API version (overrides `AZURE_OPENAI_API_VERSION`).
    pub api_version: Option<String>,
    /// Whether its models reason (on OpenAI Responses: their reasoning summaries and encrypted
    /// reasoning are asked for and sent back); known by the model's name when unset — set it
    /// for an Azure deployment whose name does not say.
    pub reasoning: Option<bool>,
    /// Settings of its models, by the model's id as written after `NAME/`
    /// (`[providers.NAME.models."MODEL"]`).
    #[serde(default)]
    pub models: BTreeMap<String, ModelConfig>,
}

/// A model's own settings, as configured in `[providers.NAME.models."MODEL"]`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelConfig {
    /// What its tokens cost, in US dollars per million (`price = { input = 3, output = 15,
    /// cache_read = 0.3, cache_write = 3.75 }`): over the built-in price table's entry, or
    /// for a model the table lacks.
    pub price: Option<Price>,
}

struct BuiltIn {
    name: &'static str,
    api: ApiKind,
    base_url: &'static str,
    base_url_env: Option<&'static str>,
    key_env: Option<&'static str>,
}

const BUILT_IN: &[BuiltIn] = &[
    BuiltIn {
        name: "openai",
        api: ApiKind::Openai,
        base_url: "https://api.openai.com/v1",
        base_url_env: Some("OPENAI_BASE_URL"),
        key_env: Some("OPENAI_API_KEY"),
    },
    BuiltIn {
        name: "anthropic",
        api: ApiKind::Anthropic,
        base_url: "https://api.anthropic.com",
        base_url_env: Some("ANTHROPIC_BASE_URL"),
        key_env: Some("ANTHROPIC_API_KEY"),
    },
    BuiltIn {
        name: "openrouter",
        api: ApiKind::Openai,
        base_url: "https://openrouter.ai/api/v1",
        base_url_env: None,
        key_env: Some("OPENROUTER_API_KEY"),
    },
    BuiltIn {
        name: "deepseek",
        api: ApiKind::Openai,
        base_url: "https://api.deepseek.com/v1",
        base_url_env: None,
        key_env: Some("DEEPSEEK_API_KEY"),
    },
    BuiltIn {
        name: "groq",
        api: ApiKind::Openai,
        base_url: "https://api.groq.com/openai/v1",
        base_url_env: None,
        key_env: Some("GROQ_API_KEY"),
    },
    BuiltIn {
        name: "xai",
        api: ApiKind::Openai,
        base_url: "https://api.x.ai/v1",
        base_url_env: None,
        key_env: Some("XAI_API_KEY"),
    },
    BuiltIn {
        name: "ollama",
        api: ApiKind::Openai,
        base_url: "http://127.0.0.1:11434/v1",
        base_url_env: None,
        key_env: None,
    },
    BuiltIn {
        name: "lmstudio",
        api: ApiKind::Openai,
        base_url: "http://127.0.0.1:1234/v1",
        base_url_env: None,
        key_env: None,
    },
    BuiltIn {
        name: "llamacpp",
        api: ApiKind::Openai,
        base_url: "http://127.0.0.1:8080/v1",
        base_url_env: None,
        key_env: None,
    },
    BuiltIn {
        name: "vllm",
        api: ApiKind::Openai,
        base_url: "http://127.0.0.1:8000/v1",
        base_url_env: None,
        key_env: None,
    },
    BuiltIn {
        name: "gemini",
        api: ApiKind::Gemini,
        base_url: "https://generativelanguage.googleapis.com",
        base_url_env: Some("GEMINI_BASE_URL"),
        key_env: Some("GEMINI_API_KEY"),
    },
    // Its endpoint, key and API version come from Azure's variables (see `azure.rs`).
    BuiltIn {
        name: "azure",
        api: ApiKind::Azure,
        base_url: "",
        base_url_env: None,
        key_env: None,
    },
    // Its base URL is the resource's, or AZURE_FOUNDRY_BASE_URL.
    BuiltIn {
        name: "foundry",
        api: ApiKind::Anthropic,
        base_url: "",
        base_url_env: Some("AZURE_FOUNDRY_BASE_URL"),
        key_env: Some("AZURE_FOUNDRY_API_KEY"),
    },
    // Its project, location and credentials come from Google's variables and files (see
    // `vertex.rs`).
    BuiltIn {
        name: "vertex",
        api: ApiKind::Vertex,
        base_url: "",
        base_url_env: None,
        key_env: None,
    },
    // Its endpoint and credentials come from AWS's variables and files (see `bedrock.rs`).
    BuiltIn {
        name: "bedrock",
        api: ApiKind::Bedrock,
        base_url: "",
        base_url_env: None,
        key_env: None,
    },
];

/// The built-in providers that sell the [price table](PRICES)'s models at its prices: their
/// makers, and the clouds that list the same prices. OpenRouter, Groq and local servers are not
/// among them (a price of one's own is for the configuration).
const LISTED_PRICES: &[&str] = &[
    "openai",
    "anthropic",
    "gemini",
    "deepseek",
    "xai",
    "azure",
    "foundry",
    "vertex",
    "bedrock",
];

/// What a build without a cloud's feature says of a model on that cloud (`what`: "a Gemini
/// model").
#[cfg(not(all(
    feature = "azure",
    feature = "bedrock",
    feature = "gemini",
    feature = "vertex"
)))]
fn without_feature(spec: &str, what: &str, feature: &str) -> ModelError {
    ModelError::Config(format!(
        "`{spec}` is {what}, and this build of agentry-models has no `{feature}` feature"
    ))
}

/// A list of models opened through the [`ModelCatalog`], with the keys of the process's
/// environment.
pub struct OfferedModels {
    providers: BTreeMap<String, ProviderConfig>,
    offered: Vec<String>,
    http: HttpOptions,
}

impl OfferedModels {
    /// The `offered` models (each once, in order), opened with these configured providers.
    pub fn new(
        providers: BTreeMap<String, ProviderConfig>,
        offered: impl IntoIterator<Item = String>,
    ) -> Self {
        let mut unique: Vec<String> = Vec::new();
        for spec in offered {
            if !unique.contains(&spec) {
                unique.push(spec);
            }
        }
        Self {
            providers,
            offered: unique,
            http: HttpOptions::default(),
        }
    }

    /// Opens them with these timeouts and retries.
    pub fn with_http(mut self, http: HttpOptions) -> Self {
        self.http = http;
        self
    }
}

impl ModelChoices for OfferedModels {
    fn offered(&self) -> Vec<String> {
        self.offered.clone()
    }

    fn open(&self, spec: &str) -> Result<Arc<dyn Model>, ModelError> {
        let env = |name: &str| std::env::var(name).ok();
        let catalog = ModelCatalog::new(&self.providers, &env);
        let catalog = catalog.with_http(self.http.clone());
        catalog.open(spec)
    }
}

/// Opens models by name, from the built-in providers, configured ones and the environment.
pub struct ModelCatalog<'a> {
    providers: &'a BTreeMap<String, ProviderConfig>,
    env: &'a dyn Fn(&str) -> Option<String>,
    http: HttpOptions,
}

/// Where a hosted model is reached, once its provider is resolved.
struct Endpoint {
    api: ApiKind,
    base_url: String,
    api_key: Option<String>,
    limits: ModelLimits,
}

impl<'a> ModelCatalog<'a> {
    /// A catalog over configured providers, reading variables through `env`.
    pub fn new(
        providers: &'a BTreeMap<String, ProviderConfig>,
        env: &'a dyn Fn(&str) -> Option<String>,
    ) -> Self {
        Self {
            providers,
            env,
            http: HttpOptions::default(),
        }
    }

    /// Uses these timeouts and retries for every client.
    pub fn with_http(mut self, http: HttpOptions) -> Self {
        self.http = http;
        self
    }

    /// The model to use when none is configured: Anthropic's or OpenAI's, whichever key is set.
    pub fn default_model(&self) -> Result<String, ModelError> {
        if self.var("ANTHROPIC_API_KEY").is_some() {
            Ok("anthropic/claude-sonnet-4-5".to_owned())
        } else if self.var("OPENAI_API_KEY").is_some() {
            Ok("openai/gpt-4.1".to_owned())
        } else {
            Err(ModelError::Config(
                "no model configured and no API key found: set ANTHROPIC_API_KEY or OPENAI_API_KEY, \
                 or pass --model ollama/MODEL for a local Ollama model (no key needed), \
                 or set `model = \"PROVIDER/MODEL\"` in ~/.config/agentry/config.toml"
                    .to_owned(),
            ))
        }
    }

    /// Opens the model `spec` names, with its price: configured
    /// (`[providers.NAME.models."MODEL"] price`), else the [price table](PRICES)'s for the
    /// providers that sell the table's models at its prices; else unpriced.
    pub fn open(&self, spec: &str) -> Result<Arc<dyn Model>, ModelError> {
        let model = self.open_unpriced(spec)?;
        Ok(match self.price_of(spec)? {
            Some(price) => Arc::new(Priced::new(model, price)),
            None => model,
        })
    }

    /// The price of the model `spec` names, when configured or listed.
    pub fn price_of(&self, spec: &str) -> Result<Option<Price>, ModelError> {
        let Some((provider, model)) = spec.split_once('/') else {
            return Ok(None);
        };
        let configured = self
            .providers
            .get(provider)
            .and_then(|config| config.models.get(model))
            .and_then(|settings| settings.price);
        if let Some(price) = configured {
            price.check().map_err(|problem| {
                ModelError::Config(format!(
                    "[providers.{provider}.models.\"{model}\"] price: {problem}"
                ))
            })?;
            return Ok(Some(price));
        }
        if !LISTED_PRICES.contains(&provider) {
            return Ok(None);
        }
        Ok(listed_price(model).map(|listed| listed.price))
    }

    /// Opens the model `spec` names, without a price.
    fn open_unpriced(&self, spec: &str) -> Result<Arc<dyn Model>, ModelError> {
        if let Some(path) = spec.strip_prefix("scripted:") {
            return Ok(Arc::new(ScriptedModel::from_file(Path::new(path))?));
        }
        if let Some(path) = spec.strip_prefix("replay:") {
            return Ok(Arc::new(ReplayModel::from_file(Path::new(path))?));
        }
        let (provider, model) = spec
            .split_once('/')
            .filter(|(p, m)| !p.is_empty() && !m.is_empty())
            .ok_or_else(|| {
                ModelError::Config(format!(
                    "`{spec}` does not name a model: write PROVIDER/MODEL (openai/gpt-4.1, anthropic/claude-sonnet-4-5, ollama/qwen3, …), scripted:PATH or replay:FILE"
                ))
            })?;
        let built_in = BUILT_IN.iter().find(|b| b.name == provider);
        let configured = self.providers.get(provider);
        if built_in.is_none() && configured.is_none() {
            let mut known: Vec<&str> = BUILT_IN.iter().map(|b| b.name).collect();
            known.extend(self.providers.keys().map(String::as_str));
            return Err(ModelError::Config(format!(
                "unknown provider `{provider}` in `{spec}`: use one of {}, or add [providers.{provider}] with a base_url to the configuration",
                known.join(", ")
            )));
        }
        let config = configured.cloned().unwrap_or_default();
        let api = config
            .api
            .or(built_in.map(|b| b.api))
            .unwrap_or(ApiKind::Openai);
        if api == ApiKind::Bedrock {
            return self.bedrock(spec, model, &config);
        }
        if api == ApiKind::Vertex {
            return self.vertex(spec, model, &config);
        }
        if built_in.is_some_and(|b| b.api == ApiKind::Azure) || api == ApiKind::Azure {
            let responses = config.api == Some(ApiKind::OpenaiResponses);
            return self.azure(spec, model, &config, responses);
        }
        if provider == "foundry" && api == ApiKind::Anthropic {
            let base_url = self.base_url(provider, built_in, &config)?;
            return self.foundry(spec, model, &config, base_url);
        }
        let base_url = self.base_url(provider, built_in, &config)?;
        let key_env = config
            .api_key_env
            .clone()
            .or_else(|| built_in.and_then(|b| b.key_env).map(str::to_owned));
        let mut api_key = key_env.as_deref().and_then(|name| self.var(name));
        // Google's SDKs take either variable.
        if api == ApiKind::Gemini && config.api_key_env.is_none() && api_key.is_none() {
            api_key = self.var("GOOGLE_API_KEY");
        }
        if let (Some(name), None) = (&key_env, &api_key) {
            let also = if api == ApiKind::Gemini && config.api_key_env.is_none() {
                " or GOOGLE_API_KEY"
            } else {
                ""
            };
            return Err(ModelError::Config(format!(
                "`{spec}` needs an API key: set {name}{also} (or point api_key_env in [providers.{provider}] at the variable that holds it)"
            )));
        }
        let endpoint = Endpoint {
            api,
            base_url,
            api_key,
            limits: ModelLimits::of(&config, model),
        };
        self.client(spec, model, endpoint)
    }

    /// The client of a model reached with a key (or none): Anthropic's, or OpenAI's.
    fn client(
        &self,
        spec: &str,
        model: &str,
        endpoint: Endpoint,
    ) -> Result<Arc<dyn Model>, ModelError> {
        if endpoint.api == ApiKind::Gemini {
            return self.gemini(spec, model, endpoint);
        }
        let Endpoint {
            api,
            base_url,
            api_key,
            limits,
        } = endpoint;
        if api == ApiKind::Anthropic {
            return Ok(Arc::new(AnthropicModel::new(AnthropicSettings {
                display_name: spec.to_owned(),
                model: model.to_owned(),
                base_url,
                api_key: api_key.unwrap_or_default().into(),
                context_window: limits.context_window,
                images: limits.images,
                max_output_tokens: limits.required_output,
                http: self.http.clone(),
            })?));
        }
        Ok(Arc::new(OpenAiModel::new(OpenAiSettings {
            display_name: spec.to_owned(),
            model: model.to_owned(),
            base_url,
            api_key: api_key.map(Secret::from),
            api: OpenAiApi::responses_if(api == ApiKind::OpenaiResponses),
            context_window: limits.context_window,
            images: limits.images,
            max_output_tokens: limits.max_output_tokens,
            reasoning: limits.reasoning,
            http: self.http.clone(),
        })?))
    }

    fn var(&self, name: &str) -> Option<String> {
        (self.env)(name).filter(|v| !v.trim().is_empty())
    }

    fn base_url(
        &self,
        provider: &str,
        built_in: Option<&BuiltIn>,
        config: &ProviderConfig,
    ) -> Result<String, ModelError> {
        if let Some(url) = &config.base_url {
            return Ok(url.clone());
        }
        if provider == "ollama"
            && let Some(host) = self.var("OLLAMA_HOST")
        {
            let host = if host.contains("://") {
                host
            } else {
                format!("http://{host}")
            };
            return Ok(format!("{}/v1", host.trim_end_matches('/')));
        }
        if provider == "foundry"
            && self.var("AZURE_FOUNDRY_BASE_URL").is_none()
            && let Some(resource) = self.var("AZURE_FOUNDRY_RESOURCE")
        {
            return Ok(format!(
                "https://{resource}.services.ai.azure.com/anthropic"
            ));
        }
        match built_in {
            Some(b) => {
                let url = b
                    .base_url_env
                    .and_then(|name| self.var(name))
                    .unwrap_or_else(|| b.base_url.to_owned());
                if url.is_empty() {
                    return Err(ModelError::Config(format!(
                        "`{provider}` needs AZURE_FOUNDRY_RESOURCE (the resource's name) or \
                         AZURE_FOUNDRY_BASE_URL (https://RESOURCE.services.ai.azure.com/anthropic)"
                    )));
                }
                Ok(url)
            }
            None => Err(ModelError::Config(format!(
                "[providers.{provider}] needs a base_url"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn catalog_with<'a>(
        providers: &'a BTreeMap<String, ProviderConfig>,
        env: &'a dyn Fn(&str) -> Option<String>,
    ) -> ModelCatalog<'a> {
        ModelCatalog::new(providers, env)
    }

    #[test]
    fn keys_and_urls_follow_the_sdk_conventions() {
        let none = BTreeMap::new();
        let env = |name: &str| match name {
            "OPENAI_API_KEY" => Some("sk".to_owned()),
            "OPENAI_BASE_URL" => Some("http://127.0.0.1:9/v1".to_owned()),
            "OLLAMA_HOST" => Some("10.0.0.2:11434".to_owned()),
            _ => None,
        };
        let catalog = catalog_with(&none, &env);
        let model = catalog.open("openai/gpt-4.1").unwrap();
        assert_eq!(model.name(), "openai/gpt-4.1");
        assert_eq!(model.context_window(), Some(1_047_576));
        assert!(
            catalog.open("ollama/qwen3").is_ok(),
            "a local model needs no key"
        );
        let missing = catalog.open("anthropic/claude-sonnet-4-5").err().unwrap();
        assert!(
            missing.to_string().contains("set ANTHROPIC_API_KEY"),
            "{missing}"
        );
        assert_eq!(catalog.default_model().unwrap(), "openai/gpt-4.1");
        let unknown = catalog.open("nope/x").err().unwrap().to_string();
        assert!(
            unknown.contains("unknown provider `nope`") && unknown.contains("ollama"),
            "{unknown}"
        );
        assert!(catalog.open("gpt-4.1").is_err());
    }

    #[test]
    fn configured_providers_add_endpoints_and_override_limits() {
        let mut providers = BTreeMap::new();
        providers.insert(
            "work".to_owned(),
            ProviderConfig {
                base_url: Some("http://127.0.0.1:9/v1".into()),
                api_key_env: Some("WORK_KEY".into()),
                context_window: Some(8_000),
                images: Some(false),
                ..ProviderConfig::default()
            },
        );
        let env = |name: &str| (name == "WORK_KEY").then(|| "k".to_owned());
        let catalog = catalog_with(&providers, &env);
        let model = catalog.open("work/any-model").unwrap();
        assert_eq!(model.context_window(), Some(8_000));
        assert!(!model.accepts_images());
        assert!(catalog.open("ollama/m").unwrap().accepts_images());
        let no_key = |_: &str| None;
        let catalog = catalog_with(&providers, &no_key);
        assert!(
            catalog
                .open("work/m")
                .err()
                .unwrap()
                .to_string()
                .contains("set WORK_KEY")
        );
        assert!(
            catalog
                .default_model()
                .err()
                .unwrap()
                .to_string()
                .contains("ANTHROPIC_API_KEY or OPENAI_API_KEY")
        );
    }

    #[test]
    fn a_configured_price_wins_over_the_table_and_local_models_stay_unpriced() {
        let providers: BTreeMap<String, ProviderConfig> = toml_providers(
            r#"
            [anthropic.models."claude-sonnet-4-5"]
            price = { input = 2.5, output = 12.0, cache_read = 0.25 }
            [ollama.models."qwen3"]
            price = { input = 0, output = 0 }
            [broken.models."m"]
            price = { input = -1, output = 1 }
            "#,
        );
        let env = |name: &str| match name {
            "ANTHROPIC_API_KEY" | "OPENAI_API_KEY" => Some("k".to_owned()),
            _ => None,
        };
        let catalog = catalog_with(&providers, &env);
        let configured = catalog.open("anthropic/claude-sonnet-4-5").unwrap();
        let price = configured.price().unwrap();
        assert_eq!(
            (price.input, price.output, price.cache_read),
            (2.5, 12.0, Some(0.25))
        );
        let listed = catalog.open("anthropic/claude-haiku-4-5-20251001").unwrap();
        assert_eq!(
            listed.price().map(|p| (p.input, p.output)),
            Some((1.0, 5.0))
        );
        assert_eq!(listed.name(), "anthropic/claude-haiku-4-5-20251001");
        assert_eq!(listed.context_window(), Some(200_000));
        // A local server's model is priced only when the configuration says so: at zero here.
        assert_eq!(
            catalog.open("ollama/qwen3").unwrap().price(),
            Some(agentry::cost::Price::new(0.0, 0.0))
        );
        assert_eq!(catalog.open("ollama/llama3").unwrap().price(), None);
        // OpenRouter sells at prices of its own: the table's are not taken for them.
        let openrouter = BTreeMap::new();
        let openrouter_env = |name: &str| (name == "OPENROUTER_API_KEY").then(|| "k".to_owned());
        let catalog_or = catalog_with(&openrouter, &openrouter_env);
        assert_eq!(
            catalog_or
                .open("openrouter/openai/gpt-4.1")
                .unwrap()
                .price(),
            None
        );
        let error = catalog.price_of("broken/m").unwrap_err().to_string();
        assert!(
            error.contains("[providers.broken.models.\"m\"] price")
                && error.contains("`input` is -1"),
            "{error}"
        );
        // A misspelt key is an error, not a price left out.
        let misspelt: Result<ModelConfig, _> =
            toml::from_str("price = { input = 1, output = 2, cache_reads = 0.1 }");
        assert!(misspelt.is_err());
    }

    fn toml_providers(text: &str) -> BTreeMap<String, ProviderConfig> {
        toml::from_str(text).unwrap()
    }
}
