//! Opening `gemini/MODEL` (or a `[providers.NAME]` with `api = "gemini"`): the Gemini API at
//! its base URL, with its key.

use super::{Endpoint, ModelCatalog};
use agentry::model::{Model, ModelError};
use std::sync::Arc;

impl ModelCatalog<'_> {
    /// A Gemini API model at a resolved endpoint.
    #[cfg(feature = "gemini")]
    pub(super) fn gemini(
        &self,
        spec: &str,
        model: &str,
        endpoint: Endpoint,
    ) -> Result<Arc<dyn Model>, ModelError> {
        use crate::gemini::{GeminiModel, GeminiSettings};
        Ok(Arc::new(GeminiModel::new(GeminiSettings {
            display_name: spec.to_owned(),
            model: model.to_owned(),
            base_url: endpoint.base_url,
            api_key: endpoint.api_key.unwrap_or_default().into(),
            context_window: endpoint.limits.context_window,
            images: endpoint.limits.images,
            max_output_tokens: endpoint.limits.max_output_tokens,
            http: self.http.clone(),
        })?))
    }

    /// Without the `gemini` feature, a clear refusal.
    #[cfg(not(feature = "gemini"))]
    pub(super) fn gemini(
        &self,
        spec: &str,
        _model: &str,
        _endpoint: Endpoint,
    ) -> Result<Arc<dyn Model>, ModelError> {
        Err(super::without_feature(spec, "a Gemini model", "gemini"))
    }
}
