//! [`NamedModels`]: the models an agent opens by name besides its own — the one a side question
//! names (WebFetch's `[webfetch] model`), a sub-agent's `model` — each opened once and kept.

use super::{Model, ModelError};
use crate::sync::lock;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// How a name (`openai/gpt-4.1-mini`, an alias) becomes a model.
type Open = dyn Fn(&str) -> Result<Arc<dyn Model>, ModelError> + Send + Sync;

/// The models an agent opens by name, each opened once (its HTTP client kept) and shared.
pub struct NamedModels {
    open: Box<Open>,
    opened: Mutex<HashMap<String, Arc<dyn Model>>>,
}

impl NamedModels {
    /// Models opened by `open` (a configuration's catalog, say).
    pub fn new(
        open: impl Fn(&str) -> Result<Arc<dyn Model>, ModelError> + Send + Sync + 'static,
    ) -> Self {
        Self {
            open: Box::new(open),
            opened: Mutex::default(),
        }
    }

    /// The model `name` names, opened on first use.
    pub fn open(&self, name: &str) -> Result<Arc<dyn Model>, ModelError> {
        if let Some(model) = lock(&self.opened).get(name) {
            return Ok(model.clone());
        }
        let model = (self.open)(name)?;
        Ok(lock(&self.opened)
            .entry(name.to_owned())
            .or_insert(model)
            .clone())
    }
}

impl std::fmt::Debug for NamedModels {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let opened: Vec<String> = lock(&self.opened).keys().cloned().collect();
        f.debug_struct("NamedModels")
            .field("opened", &opened)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::scripted::ScriptedModel;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn a_model_is_opened_once_per_name_and_a_failure_is_not_kept() {
        let opens = Arc::new(AtomicUsize::new(0));
        let counted = opens.clone();
        let models = NamedModels::new(move |name| {
            counted.fetch_add(1, Ordering::SeqCst);
            match name {
                "small" => Ok(Arc::new(ScriptedModel::new(Vec::new())) as Arc<dyn Model>),
                other => Err(ModelError::Config(format!("no model `{other}`"))),
            }
        });
        let first = models.open("small").unwrap();
        let again = models.open("small").unwrap();
        assert!(Arc::ptr_eq(&first, &again));
        assert_eq!(opens.load(Ordering::SeqCst), 1);
        assert!(models.open("missing").is_err());
        assert!(models.open("missing").is_err());
        assert_eq!(opens.load(Ordering::SeqCst), 3, "a failure is tried again");
    }
}
