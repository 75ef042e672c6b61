//! Opening `vertex/MODEL` (or a `[providers.NAME]` with `api = "vertex"`): the project, the
//! location and Google's Application Default Credentials, found when the model is opened, so a
//! missing one is said before any request.

use super::{ModelCatalog, ProviderConfig};
use agentry::model::{Model, ModelError};
use std::sync::Arc;

/// Where a Vertex AI model is reached: its project, location and base URL.
#[cfg(feature = "vertex")]
pub(super) struct VertexPlace {
    pub project: Option<String>,
    pub location: String,
    pub base_url: String,
}

impl ModelCatalog<'_> {
    /// The project (`project`, `GOOGLE_CLOUD_PROJECT`), location (`region`,
    /// `GOOGLE_CLOUD_LOCATION`, else `global`) and base URL (`base_url`, `VERTEX_BASE_URL`, else
    /// the location's) of a Vertex AI provider.
    #[cfg(feature = "vertex")]
    pub(super) fn vertex_place(&self, config: &ProviderConfig) -> VertexPlace {
        let location = config
            .region
            .clone()
            .or_else(|| self.var("GOOGLE_CLOUD_LOCATION"))
            .unwrap_or_else(|| "global".to_owned());
        let base_url = config
            .base_url
            .clone()
            .or_else(|| self.var("VERTEX_BASE_URL"))
            .unwrap_or_else(|| vertex_base_url(&location));
        VertexPlace {
            project: config
                .project
                .clone()
                .or_else(|| self.var("GOOGLE_CLOUD_PROJECT")),
            location,
            base_url,
        }
    }

    /// A Vertex AI model, Gemini or Claude, with tokens from Application Default Credentials;
    /// the project may also come from the credentials (a service account's).
    #[cfg(feature = "vertex")]
    pub(super) fn vertex(
        &self,
        spec: &str,
        model: &str,
        config: &ProviderConfig,
    ) -> Result<Arc<dyn Model>, ModelError> {
        use crate::google::{GoogleTokens, adc};
        use crate::vertex::{VertexModel, VertexSettings};
        let place = self.vertex_place(config);
        let source = adc::find(self.env).map_err(|error| match error {
            ModelError::Config(why) => ModelError::Config(format!("`{spec}`: {why}")),
            other => other,
        })?;
        let project = place
            .project
            .or_else(|| source.project().map(str::to_owned))
            .ok_or_else(|| {
                ModelError::Config(format!(
                    "`{spec}` needs a Google Cloud project: set GOOGLE_CLOUD_PROJECT (or project \
                     in [providers.vertex])"
                ))
            })?;
        let limits = super::ModelLimits::of(config, model);
        Ok(Arc::new(VertexModel::new(VertexSettings {
            display_name: spec.to_owned(),
            model: model.to_owned(),
            base_url: place.base_url,
            project,
            location: place.location,
            tokens: Arc::new(GoogleTokens::new(source)),
            context_window: limits.context_window,
            images: limits.images,
            max_output_tokens: limits.required_output,
            http: self.http.clone(),
        })))
    }

    /// Without the `vertex` feature, a clear refusal.
    #[cfg(not(feature = "vertex"))]
    pub(super) fn vertex(
        &self,
        spec: &str,
        _model: &str,
        _config: &ProviderConfig,
    ) -> Result<Arc<dyn Model>, ModelError> {
        Err(super::without_feature(spec, "a Vertex AI model", "vertex"))
    }
}

/// The base URL of a location: `https://aiplatform.googleapis.com` for `global`, else
/// `https://LOCATION-aiplatform.googleapis.com`.
#[cfg(feature = "vertex")]
fn vertex_base_url(location: &str) -> String {
    if location == "global" {
        "https://aiplatform.googleapis.com".to_owned()
    } else {
        format!("https://{location}-aiplatform.googleapis.com")
    }
}
