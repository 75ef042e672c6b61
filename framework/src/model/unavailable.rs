//! [`UnavailableModel`]: the stand-in for a model that could not be opened.

use super::{Model, ModelError, ModelRequest, ModelStream};

/// A model that could not be opened (no API key, an unknown provider, a missing script). Every
/// request fails with the reason, so a front-end that must start anyway (an editor's agent
/// process) can run and tell the user what is missing instead of dying silently.
#[derive(Debug, Clone)]
pub struct UnavailableModel {
    reason: String,
}

impl UnavailableModel {
    /// A model that is unavailable for `reason` (shown to the user as it is).
    pub fn new(reason: impl Into<String>) -> Self {
        Self {
            reason: reason.into(),
        }
    }

    /// Why there is no model.
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

#[async_trait::async_trait]
impl Model for UnavailableModel {
    fn name(&self) -> String {
        "unavailable".to_owned()
    }

    async fn stream(&self, _request: ModelRequest) -> Result<ModelStream, ModelError> {
        Err(ModelError::Config(self.reason.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn every_request_fails_with_the_reason() {
        let model = UnavailableModel::new("set ANTHROPIC_API_KEY");
        let error = model
            .stream(ModelRequest {
                system: String::new(),
                messages: Vec::new(),
                tools: Vec::new(),
                environment: None,
                max_output_tokens: None,
            })
            .await
            .err()
            .unwrap()
            .to_string();
        assert!(error.contains("set ANTHROPIC_API_KEY"), "{error}");
    }
}
