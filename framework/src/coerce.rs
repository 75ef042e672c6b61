//! Lenient, not sloppy, tool input: before a call's arguments are validated, the executor
//! forgives what models trained on other versions of a tool send.
//!
//! - **Aliases**, declared per tool in its input schema under [`ALIASES`]: an object mapping
//!   another name to the field's own (`{"context": "-C"}`); an alias is renamed when the field
//!   itself is absent. Tools declare them with schemars:
//!   `#[schemars(extend("x-agentry-aliases" = {"context": "-C"}))]`. An alias may also bring the
//!   defaults of the tool version that spelt it so, for fields the input leaves out:
//!   `{"bash_id": {"field": "task_id", "defaults": {"block": false}}}`. The keyword is taken out
//!   of the definitions models see.
//! - **Scalars as strings**: `"5"` where the schema says integer or number, `"true"` /
//!   `"false"` where it says boolean, at the top level of the input.
//! - **`null` for a field left out**: a top-level field the schema neither requires nor lets be
//!   `null` is dropped when it is `null` (models taught that optional means nullable send it so).
//!
//! Unknown fields stay an error; [`expected_fields`] names what the tool takes, for the message.

use serde_json::{Map, Value};

/// The schema keyword that declares a tool's field aliases.
pub const ALIASES: &str = "x-agentry-aliases";

/// `input` with the declared aliases renamed and string scalars read as the schema's types.
pub fn coerce(schema: &Value, mut input: Value) -> Value {
    let Some(fields) = input.as_object_mut() else {
        return input;
    };
    if let Some(aliases) = schema.get(ALIASES).and_then(Value::as_object) {
        rename_aliases(fields, aliases);
    }
    if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
        let required = |name: &str| {
            schema
                .get("required")
                .and_then(Value::as_array)
                .is_some_and(|required| required.iter().any(|field| field == name))
        };
        fields.retain(|name, value| {
            !value.is_null() || required(name) || properties.get(name).is_none_or(allows_null)
        });
        for (name, value) in fields.iter_mut() {
            if let (Some(text), Some(property)) = (value.as_str(), properties.get(name))
                && let Some(read) = scalar_from_text(text, property)
            {
                *value = read;
            }
        }
    }
    input
}

/// The schema without what only the executor reads (the aliases), as models are shown it.
pub fn for_model(schema: &Value) -> Value {
    let mut schema = schema.clone();
    if let Some(object) = schema.as_object_mut() {
        object.remove(ALIASES);
    }
    schema
}

/// The fields a tool takes, sorted, as `a, b, c` (for a message about a field it does not).
pub fn expected_fields(schema: &Value) -> Option<String> {
    let properties = schema.get("properties")?.as_object()?;
    let mut names: Vec<&str> = properties.keys().map(String::as_str).collect();
    names.sort_unstable();
    Some(names.join(", "))
}

/// The fields of `input` that `schema` does not name.
pub fn unknown_fields<'a>(schema: &Value, input: &'a Value) -> Vec<&'a str> {
    let properties = schema.get("properties").and_then(Value::as_object);
    input
        .as_object()
        .into_iter()
        .flat_map(|fields| fields.keys())
        .filter(|name| properties.is_none_or(|p| !p.contains_key(name.as_str())))
        .map(String::as_str)
        .collect()
}

fn rename_aliases(fields: &mut Map<String, Value>, aliases: &Map<String, Value>) {
    for (alias, declared) in aliases {
        let (field, defaults) = match declared {
            Value::String(field) => (field.as_str(), None),
            Value::Object(declared) => match declared.get("field").and_then(Value::as_str) {
                Some(field) => (field, declared.get("defaults").and_then(Value::as_object)),
                None => continue,
            },
            _ => continue,
        };
        if fields.contains_key(field) {
            continue;
        }
        let Some(value) = fields.remove(alias) else {
            continue;
        };
        fields.insert(field.to_owned(), value);
        for (name, default) in defaults.into_iter().flatten() {
            fields
                .entry(name.clone())
                .or_insert_with(|| default.clone());
        }
    }
}

/// The types a property's schema allows (`type`, or the types of its `anyOf` / `oneOf`).
fn allowed_types(property: &Value) -> Vec<&str> {
    let own = match property.get("type") {
        Some(Value::String(kind)) => vec![kind.as_str()],
        Some(Value::Array(kinds)) => kinds.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    let alternatives = ["anyOf", "oneOf"]
        .iter()
        .filter_map(|key| property.get(key).and_then(Value::as_array))
        .flatten()
        .flat_map(allowed_types);
    own.into_iter().chain(alternatives).collect()
}

/// Whether a property's schema takes `null` (or says nothing of its type).
fn allows_null(property: &Value) -> bool {
    let types = allowed_types(property);
    types.is_empty() || types.contains(&"null")
}

/// `text` as the scalar its property wants, when the property does not take a string.
fn scalar_from_text(text: &str, property: &Value) -> Option<Value> {
    let types = allowed_types(property);
    if types.is_empty() || types.contains(&"string") {
        return None;
    }
    let text = text.trim();
    if types.contains(&"integer")
        && let Ok(number) = text.parse::<i64>()
    {
        return Some(Value::from(number));
    }
    if types.contains(&"number")
        && let Ok(number) = text.parse::<f64>()
        && number.is_finite()
    {
        return Some(Value::from(number));
    }
    if types.contains(&"boolean") {
        return match text {
            "true" => Some(Value::Bool(true)),
            "false" => Some(Value::Bool(false)),
            _ => None,
        };
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "pattern": {"type": "string"},
                "-C": {"type": ["integer", "null"], "minimum": 0},
                "-i": {"type": "boolean"},
                "ratio": {"anyOf": [{"type": "number"}, {"type": "null"}]},
                "name": {"type": "string"}
            },
            "additionalProperties": false,
            ALIASES: {"context": "-C"}
        })
    }

    #[test]
    fn aliases_are_renamed_and_string_scalars_read_as_the_schema_says() {
        let input =
            json!({"pattern": "x", "context": "3", "-i": "true", "ratio": "0.5", "name": "7"});
        assert_eq!(
            coerce(&schema(), input),
            json!({"pattern": "x", "-C": 3, "-i": true, "ratio": 0.5, "name": "7"})
        );
    }

    #[test]
    fn an_alias_brings_its_versions_defaults_for_fields_left_out() {
        let schema = json!({
            "type": "object",
            "properties": {"task_id": {"type": "string"}, "block": {"type": "boolean"}},
            ALIASES: {
                "bash_id": {"field": "task_id", "defaults": {"block": false}},
                "shell_id": "task_id"
            }
        });
        let coerce = |input| coerce(&schema, input);
        assert_eq!(
            coerce(json!({"bash_id": "b1"})),
            json!({"task_id": "b1", "block": false})
        );
        assert_eq!(
            coerce(json!({"bash_id": "b1", "block": "true"})),
            json!({"task_id": "b1", "block": true})
        );
        assert_eq!(coerce(json!({"task_id": "b1"})), json!({"task_id": "b1"}));
        assert_eq!(coerce(json!({"shell_id": "b1"})), json!({"task_id": "b1"}));
    }

    #[test]
    fn null_for_an_optional_field_that_takes_no_null_is_a_field_left_out() {
        let mut schema = schema();
        schema["required"] = json!(["pattern", "name"]);
        let input = json!({"pattern": "x", "-i": null, "-C": null, "ratio": null, "name": null});
        // "-C" and "ratio" take null; "name" is required, so its null is for validation.
        assert_eq!(
            coerce(&schema, input),
            json!({"pattern": "x", "-C": null, "ratio": null, "name": null})
        );
    }

    #[test]
    fn what_cannot_be_read_is_left_for_validation_to_refuse() {
        let input = json!({"-C": "three", "-i": "yes", "context": 1, "-C ": 2});
        let coerced = coerce(&schema(), input);
        // "-C" is present, so the alias is left as it is (and will be refused as unknown).
        assert_eq!(
            coerced,
            json!({"-C": "three", "-i": "yes", "context": 1, "-C ": 2})
        );
        assert_eq!(coerce(&schema(), json!("text")), json!("text"));
    }

    #[test]
    fn models_see_no_aliases_and_messages_name_the_fields() {
        assert!(for_model(&schema()).get(ALIASES).is_none());
        assert_eq!(
            expected_fields(&schema()).unwrap(),
            "-C, -i, name, pattern, ratio"
        );
    }
}
