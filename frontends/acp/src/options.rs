//! The session's config options (`configOptions`), changed with `session/set_config_option`:
//! the model (category `model`) when the agent offers a choice, and the sandbox its commands
//! run in when the agent has one.

use crate::live::LiveSession;
use agent_client_protocol::v1::schema as acp;
use agent_client_protocol::{Error, ErrorCode};
use agentry::model::ModelChoices;
use agentry::tool::SandboxMode;

/// The id of the model option.
const MODEL_OPTION: &str = "model";
/// The id of the sandbox option.
const SANDBOX_OPTION: &str = "sandbox";

/// What a session's config options offer.
#[derive(Clone, Copy)]
pub struct Offered<'a> {
    /// The models a session may switch to.
    pub models: Option<&'a dyn ModelChoices>,
    /// Whether the session's sandbox may be chosen.
    pub sandbox: bool,
}

/// The session's config options as they are now; `None` when there are none.
pub fn config_options(
    offered: Offered<'_>,
    live: &LiveSession,
) -> Option<Vec<acp::SessionConfigOption>> {
    let options: Vec<acp::SessionConfigOption> = offered
        .models
        .map(|choices| model_option(choices, &live.model_spec()))
        .into_iter()
        .chain(
            offered
                .sandbox
                .then(|| sandbox_option(live.sandbox().unwrap_or_default())),
        )
        .collect();
    (!options.is_empty()).then_some(options)
}

/// The model option, with the current one selected.
fn model_option(choices: &dyn ModelChoices, current: &str) -> acp::SessionConfigOption {
    let mut offered = choices.offered();
    if !offered.iter().any(|spec| spec == current) {
        offered.insert(0, current.to_owned());
    }
    let options: Vec<acp::SessionConfigSelectOption> = offered
        .into_iter()
        .map(|spec| acp::SessionConfigSelectOption::new(spec.clone(), spec))
        .collect();
    acp::SessionConfigOption::select(MODEL_OPTION, "Model", current.to_owned(), options)
        .category(acp::SessionConfigOptionCategory::Model)
}

/// The sandbox option, with the session's mode selected.
fn sandbox_option(current: SandboxMode) -> acp::SessionConfigOption {
    let options: Vec<acp::SessionConfigSelectOption> = SandboxMode::ALL
        .into_iter()
        .map(|mode| {
            acp::SessionConfigSelectOption::new(mode.as_str(), mode.as_str())
                .description(mode.description())
        })
        .collect();
    acp::SessionConfigOption::select(SANDBOX_OPTION, "Sandbox", current.as_str(), options)
        .description("How far the agent's commands are confined")
}

/// Applies `session/set_config_option` to a session (from its next turn on). Returns the
/// options as they now are.
pub fn set_option(
    offered: Offered<'_>,
    live: &LiveSession,
    request: &acp::SetSessionConfigOptionRequest,
) -> Result<Vec<acp::SessionConfigOption>, Error> {
    let invalid = |message: String| Error::new(ErrorCode::INVALID_PARAMS, message);
    let id = request.config_id.to_string();
    let acp::SessionConfigOptionValue::ValueId { value } = &request.value else {
        return Err(invalid(format!("the {id} option takes a value id")));
    };
    let value = value.to_string();
    match (id.as_str(), offered.models) {
        (MODEL_OPTION, Some(choices)) => set_model(choices, live, value)?,
        (SANDBOX_OPTION, _) if offered.sandbox => {
            live.set_sandbox(Some(value.parse().map_err(invalid)?));
        }
        _ => {
            let known: Vec<String> = config_options(offered, live)
                .unwrap_or_default()
                .iter()
                .map(|option| format!("`{}`", option.id))
                .collect();
            return Err(invalid(format!(
                "unknown config option `{id}` (this agent has {})",
                if known.is_empty() {
                    "none".to_owned()
                } else {
                    known.join(", ")
                }
            )));
        }
    }
    Ok(config_options(offered, live).unwrap_or_default())
}

/// Switches the session to the model `spec`, one of those offered.
fn set_model(choices: &dyn ModelChoices, live: &LiveSession, spec: String) -> Result<(), Error> {
    let invalid = |message: String| Error::new(ErrorCode::INVALID_PARAMS, message);
    if !choices.offered().contains(&spec) && spec != live.model_spec() {
        return Err(invalid(format!(
            "`{spec}` is not one of the models offered ({})",
            choices.offered().join(", ")
        )));
    }
    let model = choices
        .open(&spec)
        .map_err(|problem| invalid(format!("cannot use `{spec}`: {problem}")))?;
    live.set_model(spec, model);
    Ok(())
}
