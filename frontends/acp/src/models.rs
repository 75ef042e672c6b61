//! The model as a session config option (`configOptions`, category `model`), changed with
//! `session/set_config_option`.

use crate::live::LiveSession;
use agent_client_protocol::v1::schema as acp;
use agent_client_protocol::{Error, ErrorCode};
use agentry::model::catalog::ModelChoices;

/// The id of the model option.
const MODEL_OPTION: &str = "model";

/// The session's config options: the model, with the current one selected.
pub fn config_options(choices: &dyn ModelChoices, current: &str) -> Vec<acp::SessionConfigOption> {
    let mut offered = choices.offered();
    if !offered.iter().any(|spec| spec == current) {
        offered.insert(0, current.to_owned());
    }
    let options: Vec<acp::SessionConfigSelectOption> = offered
        .into_iter()
        .map(|spec| acp::SessionConfigSelectOption::new(spec.clone(), spec))
        .collect();
    vec![
        acp::SessionConfigOption::select(MODEL_OPTION, "Model", current.to_owned(), options)
            .category(acp::SessionConfigOptionCategory::Model),
    ]
}

/// Applies `session/set_config_option` to a session: the new model takes over from its next
/// turn. Returns the options as they now are.
pub fn set_option(
    choices: &dyn ModelChoices,
    live: &LiveSession,
    request: &acp::SetSessionConfigOptionRequest,
) -> Result<Vec<acp::SessionConfigOption>, Error> {
    let invalid = |message: String| Error::new(ErrorCode::INVALID_PARAMS, message);
    if request.config_id.to_string() != MODEL_OPTION {
        return Err(invalid(format!(
            "unknown config option `{}` (this agent has `{MODEL_OPTION}`)",
            request.config_id
        )));
    }
    let acp::SessionConfigOptionValue::ValueId { value } = &request.value else {
        return Err(invalid("the model option takes a model id".to_owned()));
    };
    let spec = value.to_string();
    if !choices.offered().contains(&spec) && spec != live.model_spec() {
        return Err(invalid(format!(
            "`{spec}` is not one of the models offered ({})",
            choices.offered().join(", ")
        )));
    }
    let model = choices
        .open(&spec)
        .map_err(|problem| invalid(format!("cannot use `{spec}`: {problem}")))?;
    live.set_model(spec.clone(), model);
    Ok(config_options(choices, &spec))
}
