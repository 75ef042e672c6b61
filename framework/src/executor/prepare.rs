//! Reading a call's input: coerced and validated against the tool's schema, then prepared by
//! the tool.

use super::CallScope;
use crate::event::Refusal;
use crate::provider::{InputProblem, RegisteredTool};
use crate::tool::PreparedCall;
use serde_json::Value;

/// Validates the input against the tool's schema and lets the tool read it.
pub(super) fn prepare(
    tool: &RegisteredTool,
    input: Value,
    scope: &CallScope,
) -> Result<Box<dyn PreparedCall>, Refusal> {
    let name = tool.tool.name();
    let input = crate::coerce::coerce(tool.schema(), input);
    tool.validate(&input).map_err(|problem| match problem {
        InputProblem::Mismatch(mut problems) => {
            let unknown = crate::coerce::unknown_fields(tool.schema(), &input);
            if let (false, Some(expected)) = (
                unknown.is_empty(),
                crate::coerce::expected_fields(tool.schema()),
            ) {
                problems.push_str(&format!(
                    " ({name} takes no `{}`; its fields are: {expected})",
                    unknown.join("`, `")
                ));
            }
            Refusal::SchemaMismatch {
                tool: name.to_owned(),
                problems,
            }
        }
        InputProblem::BrokenSchema(problem) => Refusal::BrokenSchema {
            tool: name.to_owned(),
            problem,
        },
    })?;
    // A tool that keeps a folder of its own (Bash after a `cd`) is prepared, judged and run
    // there.
    let folder = scope
        .state
        .tool_folder(name)
        .unwrap_or_else(|| scope.cwd.clone());
    tool.tool
        .prepare(input, &folder)
        .map_err(|error| Refusal::InvalidInput {
            tool: name.to_owned(),
            problem: error.to_string(),
        })
}
