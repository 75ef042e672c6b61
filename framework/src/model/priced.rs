//! [`Priced`]: a model with the price its opener knows (a catalog's table, a configuration's
//! override), for models whose client does not know its own.

use super::{Model, ModelError, ModelRequest, ModelStream};
use crate::cost::Price;
use std::sync::Arc;

/// `inner`, answering [`Model::price`] with `price`.
pub struct Priced {
    inner: Arc<dyn Model>,
    price: Price,
}

impl Priced {
    /// `inner` at `price`.
    pub fn new(inner: Arc<dyn Model>, price: Price) -> Self {
        Self { inner, price }
    }
}

#[async_trait::async_trait]
impl Model for Priced {
    fn name(&self) -> String {
        self.inner.name()
    }
    fn context_window(&self) -> Option<u64> {
        self.inner.context_window()
    }
    fn accepts_images(&self) -> bool {
        self.inner.accepts_images()
    }
    fn price(&self) -> Option<Price> {
        Some(self.price)
    }
    async fn stream(&self, request: ModelRequest) -> Result<ModelStream, ModelError> {
        self.inner.stream(request).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::scripted::{ScriptedModel, ScriptedResponse};
    use futures::StreamExt;

    #[tokio::test]
    async fn it_is_its_model_with_a_price() {
        let inner: Arc<dyn Model> = Arc::new(ScriptedModel::new([ScriptedResponse::text("hi")]));
        assert_eq!(inner.price(), None);
        let priced = Priced::new(inner.clone(), Price::new(1.0, 2.0));
        assert_eq!(priced.name(), inner.name());
        assert_eq!(priced.price(), Some(Price::new(1.0, 2.0)));
        let request = ModelRequest::for_model(&priced, String::new(), Vec::new(), Vec::new());
        let events: Vec<_> = priced.stream(request).await.unwrap().collect().await;
        assert!(!events.is_empty());
    }
}
