//! Opening `azure/DEPLOYMENT` (or a `[providers.NAME]` with `api = "azure"`) and
//! `foundry/MODEL`: the resource's endpoint and API version from Azure's variables, and its key
//! or, without one, Microsoft Entra ID credentials — found when the model is opened, so a
//! missing one is said before any request.

use super::{ModelCatalog, ProviderConfig};
use agentry::model::{Model, ModelError};
use std::sync::Arc;

impl ModelCatalog<'_> {
    /// An Azure OpenAI deployment: endpoint from `base_url` or `AZURE_OPENAI_ENDPOINT`, key from
    /// `AZURE_OPENAI_API_KEY` (or the variable `api_key_env` names) else Entra ID, the classic
    /// API when `api_version` or `AZURE_OPENAI_API_VERSION` gives a version; Responses with
    /// `responses`.
    #[cfg(feature = "azure")]
    pub(super) fn azure(
        &self,
        spec: &str,
        deployment: &str,
        config: &ProviderConfig,
        responses: bool,
    ) -> Result<Arc<dyn Model>, ModelError> {
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
        let limits = super::ModelLimits::of(config, deployment);
        Ok(Arc::new(azure_openai(AzureSettings {
            display_name: spec.to_owned(),
            deployment: deployment.to_owned(),
            endpoint,
            api_version: config
                .api_version
                .clone()
                .or_else(|| self.var("AZURE_OPENAI_API_VERSION")),
            auth: self.azure_auth(spec, key_env)?,
            api: OpenAiApi::responses_if(responses),
            context_window: limits.context_window,
            images: limits.images,
            max_output_tokens: limits.max_output_tokens,
            reasoning: limits.reasoning,
            http: self.http.clone(),
        })?))
    }

    /// Claude on Azure AI Foundry at `base_url`, with `AZURE_FOUNDRY_API_KEY` (or the variable
    /// `api_key_env` names) else Entra ID.
    #[cfg(feature = "azure")]
    pub(super) fn foundry(
        &self,
        spec: &str,
        model: &str,
        config: &ProviderConfig,
        base_url: String,
    ) -> Result<Arc<dyn Model>, ModelError> {
        use crate::anthropic::AnthropicSettings;
        use crate::azure::foundry_claude;
        use crate::secret::Secret;
        let key_env = config
            .api_key_env
            .as_deref()
            .unwrap_or("AZURE_FOUNDRY_API_KEY");
        let auth = self.azure_auth(spec, key_env)?;
        let limits = super::ModelLimits::of(config, model);
        let settings = AnthropicSettings {
            display_name: spec.to_owned(),
            model: model.to_owned(),
            base_url,
            api_key: Secret::default(),
            context_window: limits.context_window,
            images: limits.images,
            max_output_tokens: limits.required_output,
            http: self.http.clone(),
        };
        Ok(Arc::new(foundry_claude(settings, &auth)?))
    }

    /// The resource's key from `key_env`, else Entra ID tokens from the first credentials
    /// found; an error names both.
    #[cfg(feature = "azure")]
    fn azure_auth(&self, spec: &str, key_env: &str) -> Result<crate::azure::AzureAuth, ModelError> {
        use crate::azure::{AzureAuth, EntraTokens, entra};
        if let Some(key) = self.var(key_env) {
            return Ok(AzureAuth::ApiKey(key.into()));
        }
        match entra::find(self.env) {
            Ok(source) => Ok(AzureAuth::Entra(Arc::new(EntraTokens::new(source)))),
            Err(ModelError::Config(why)) => Err(ModelError::Config(format!(
                "`{spec}` needs the resource's key in {key_env}, or Microsoft Entra ID \
                 credentials, and has neither: {why}"
            ))),
            Err(other) => Err(other),
        }
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
        Err(super::without_feature(spec, "a model on Azure", "azure"))
    }

    /// Without the `azure` feature, a clear refusal.
    #[cfg(not(feature = "azure"))]
    pub(super) fn foundry(
        &self,
        spec: &str,
        _model: &str,
        _config: &ProviderConfig,
        _base_url: String,
    ) -> Result<Arc<dyn Model>, ModelError> {
        Err(super::without_feature(spec, "a model on Azure", "azure"))
    }
}
