//! Opening `azure/DEPLOYMENT` (or a `[providers.NAME]` with `api = "azure"`): the resource's
//! endpoint, key and API version from Azure's variables.

use super::{ModelCatalog, ProviderConfig};
use agentry::model::{Model, ModelError};
use std::sync::Arc;

impl ModelCatalog<'_> {
    /// An Azure OpenAI deployment: endpoint from `base_url` or `AZURE_OPENAI_ENDPOINT`, key from
    /// `AZURE_OPENAI_API_KEY` (or the variable `api_key_env` names), the classic API when
    /// `api_version` or `AZURE_OPENAI_API_VERSION` gives a version; Responses with `responses`.
    #[cfg(feature = "azure")]
    pub(super) fn azure(
        &self,
        spec: &str,
        deployment: &str,
        config: &ProviderConfig,
        responses: bool,
    ) -> Result<Arc<dyn Model>, ModelError> {
        use super::known_limits;
        use crate::azure::{AzureSettings, azure_openai};
        use crate::openai::OpenAiApi;
        let endpoint = config
            .base_url
            .clone()
            .or_else(|| self.var("AZURE_OPENAI_ENDPOINT"))
            .ok_or_else(|| {
                ModelError::Config(format!(
                    "`{spec}` needs AZURE_OPENAI_ENDPOINT (https://RESOURCE.openai.azure.com)"
                ))
            })?;
        let key_env = config
            .api_key_env
            .as_deref()
            .unwrap_or("AZURE_OPENAI_API_KEY");
        let api_key = self.var(key_env).ok_or_else(|| {
            ModelError::Config(format!(
                "`{spec}` needs an API key: set {key_env} (the resource's key)"
            ))
        })?;
        let known = known_limits(deployment);
        Ok(Arc::new(azure_openai(AzureSettings {
            display_name: spec.to_owned(),
            deployment: deployment.to_owned(),
            endpoint,
            api_version: config
                .api_version
                .clone()
                .or_else(|| self.var("AZURE_OPENAI_API_VERSION")),
            api_key,
            api: if responses {
                OpenAiApi::Responses
            } else {
                OpenAiApi::ChatCompletions
            },
            context_window: config.context_window.or(known.map(|k| k.0)),
            images: config.images.unwrap_or(true),
            max_output_tokens: config.max_output_tokens,
            http: self.http.clone(),
        })?))
    }

    /// Without the `azure` feature, a clear refusal.
    #[cfg(not(feature = "azure"))]
    pub(super) fn azure(
        &self,
        spec: &str,
        _deployment: &str,
        _config: &ProviderConfig,
        _responses: bool,
    ) -> Result<Arc<dyn Model>, ModelError> {
        Err(ModelError::Config(format!(
            "`{spec}` is an Azure OpenAI deployment, and this build of agentry-models has no `azure` feature"
        )))
    }
}
