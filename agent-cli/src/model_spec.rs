//! Turning a model name as users write it into a [`Model`].

use crate::exit::CliError;
use agentry::model::Model;
use agentry::model::scripted::ScriptedModel;
use anyhow::anyhow;
use std::path::Path;
use std::sync::Arc;

/// Opens the model a spec names: `scripted:PATH` plays a script file.
pub fn open_model(spec: &str) -> Result<Arc<dyn Model>, CliError> {
    match spec.split_once(':') {
        Some(("scripted", path)) => ScriptedModel::from_file(Path::new(path))
            .map(|model| Arc::new(model) as Arc<dyn Model>)
            .map_err(CliError::usage),
        _ => Err(CliError::usage(anyhow!(
            "model `{spec}` is not available in this build: the hosted and local model clients \
             are not built yet; use --model scripted:PATH"
        ))),
    }
}
