//! Opening `bedrock/MODEL_ID` (or a `[providers.NAME]` with `api = "bedrock"`): the region,
//! the runtime endpoint and the credentials from AWS's variables and files, found when the
//! model is opened, so a missing one is said before any request.

use super::{ModelCatalog, ProviderConfig};
use agentry::model::{Model, ModelError};
use std::sync::Arc;

impl ModelCatalog<'_> {
    /// A Bedrock model: region from the configuration, `AWS_REGION`, `AWS_DEFAULT_REGION` or
    /// the profile; endpoint from `base_url`, `AWS_ENDPOINT_URL_BEDROCK_RUNTIME`,
    /// `AWS_ENDPOINT_URL` or the region's; a Bedrock API key from `AWS_BEARER_TOKEN_BEDROCK`
    /// (or the variable `api_key_env` names), else SigV4 with AWS's credential chain.
    #[cfg(feature = "bedrock")]
    pub(super) fn bedrock(
        &self,
        spec: &str,
        model: &str,
        config: &ProviderConfig,
    ) -> Result<Arc<dyn Model>, ModelError> {
        use crate::aws::{chain, credentials::CredentialChain};
        use crate::bedrock::{BedrockAuth, BedrockModel, BedrockSettings};
        let region = config
            .region
            .clone()
            .or_else(|| chain::region(self.env))
            .ok_or_else(|| {
                ModelError::Config(format!(
                    "`{spec}` needs an AWS region: set AWS_REGION (or AWS_DEFAULT_REGION, or \
                     region in the profile's section of ~/.aws/config)"
                ))
            })?;
        let endpoint = config
            .base_url
            .clone()
            .or_else(|| self.var("AWS_ENDPOINT_URL_BEDROCK_RUNTIME"))
            .or_else(|| self.var("AWS_ENDPOINT_URL"))
            .unwrap_or_else(|| format!("https://bedrock-runtime.{region}.amazonaws.com"));
        let key_env = config
            .api_key_env
            .as_deref()
            .unwrap_or("AWS_BEARER_TOKEN_BEDROCK");
        let auth = match self.var(key_env) {
            Some(key) => BedrockAuth::ApiKey(key.into()),
            None => {
                let source = chain::find(self.env, &region).map_err(|error| match error {
                    ModelError::Config(why) => ModelError::Config(format!("`{spec}`: {why}")),
                    other => other,
                })?;
                BedrockAuth::SigV4 {
                    region,
                    credentials: Arc::new(CredentialChain::new(source)),
                }
            }
        };
        let limits = super::ModelLimits::of(config, model);
        Ok(Arc::new(BedrockModel::new(BedrockSettings {
            display_name: spec.to_owned(),
            model: model.to_owned(),
            endpoint,
            auth,
            context_window: limits.context_window,
            images: limits.images,
            max_output_tokens: limits.required_output,
            http: self.http.clone(),
        })?))
    }

    /// Without the `bedrock` feature, a clear refusal.
    #[cfg(not(feature = "bedrock"))]
    pub(super) fn bedrock(
        &self,
        spec: &str,
        _model: &str,
        _config: &ProviderConfig,
    ) -> Result<Arc<dyn Model>, ModelError> {
        Err(super::without_feature(spec, "a Bedrock model", "bedrock"))
    }
}
