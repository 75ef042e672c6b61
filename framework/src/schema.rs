//! JSON Schema checks shared by tool input validation and the output-schema loop.

use serde_json::Value;

/// Checks `value` against a compiled schema; the error lists every problem with where it is
/// (`at `/path`: …`), joined by `; `, for the model to read and correct.
pub fn check(validator: &jsonschema::Validator, value: &Value) -> Result<(), String> {
    let problems: Vec<String> = validator
        .iter_errors(value)
        .map(|error| {
            let at = error.instance_path.to_string();
            if at.is_empty() {
                error.to_string()
            } else {
                format!("at `{at}`: {error}")
            }
        })
        .collect();
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn problems_name_where_they_are() {
        let validator = jsonschema::validator_for(&json!({
            "type": "object", "required": ["a"], "properties": {"b": {"type": "integer"}}
        }))
        .unwrap();
        assert!(check(&validator, &json!({"a": 1, "b": 2})).is_ok());
        let problems = check(&validator, &json!({"b": "x"})).unwrap_err();
        assert!(
            problems.contains("\"a\" is a required property"),
            "{problems}"
        );
        assert!(problems.contains("at `/b`"), "{problems}");
    }
}
