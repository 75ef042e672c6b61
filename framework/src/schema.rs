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

/// Why a schema from outside (an MCP server's, a plugin's) would run a validator without end,
/// if it would: `$ref`s (or `allOf`, `anyOf`, `oneOf`, `not`, `if`/`then`/`else`,
/// `dependentSchemas` that lead back to a `$ref`) forming a cycle that applies schemas to the
/// same value again and again. A cycle through `properties` or `items` is fine: each step goes
/// one level into the value. Followed with a stack of its own, not by recursion.
pub fn runaway_references(schema: &Value) -> Option<String> {
    /// Where a DFS is in a node.
    #[derive(Clone, Copy, PartialEq, Eq)]
    enum Seen {
        Open,
        Done,
    }
    let mut seen: std::collections::HashMap<String, Seen> = std::collections::HashMap::new();
    let mut roots = vec![String::new()];
    every_schema_pointer(schema, &mut roots);
    for root in roots {
        if seen.contains_key(&root) {
            continue;
        }
        // (node, its edges, the next edge to follow)
        let mut stack: Vec<(String, Vec<String>, usize)> =
            vec![(root.clone(), same_value_edges(schema, &root), 0)];
        seen.insert(root, Seen::Open);
        while let Some((node, edges, next)) = stack.last_mut() {
            let Some(target) = edges.get(*next).cloned() else {
                seen.insert(node.clone(), Seen::Done);
                stack.pop();
                continue;
            };
            *next += 1;
            match seen.get(&target) {
                Some(Seen::Open) => {
                    return Some(format!(
                        "its `$ref`s loop back to `#{target}` without going into the value"
                    ));
                }
                Some(Seen::Done) => {}
                None => {
                    seen.insert(target.clone(), Seen::Open);
                    let edges = same_value_edges(schema, &target);
                    stack.push((target, edges, 0));
                }
            }
        }
    }
    None
}

/// The JSON pointers of every object in `schema` (each a place a `$ref` may lead).
fn every_schema_pointer(schema: &Value, pointers: &mut Vec<String>) {
    let mut stack = vec![(String::new(), schema)];
    while let Some((pointer, value)) = stack.pop() {
        match value {
            Value::Object(object) => {
                pointers.push(pointer.clone());
                for (key, child) in object {
                    stack.push((format!("{pointer}/{}", escape(key)), child));
                }
            }
            Value::Array(items) => {
                for (index, child) in items.iter().enumerate() {
                    stack.push((format!("{pointer}/{index}"), child));
                }
            }
            _ => {}
        }
    }
}

/// The schemas the schema at `pointer` applies to the same value it is applied to.
fn same_value_edges(schema: &Value, pointer: &str) -> Vec<String> {
    let Some(object) = schema.pointer(pointer).and_then(Value::as_object) else {
        return Vec::new();
    };
    let mut edges = Vec::new();
    for keyword in ["$ref", "$dynamicRef", "$recursiveRef"] {
        if let Some(target) = object
            .get(keyword)
            .and_then(Value::as_str)
            .and_then(|reference| resolve_local(schema, reference))
        {
            edges.push(target);
        }
    }
    for keyword in ["allOf", "anyOf", "oneOf"] {
        if let Some(items) = object.get(keyword).and_then(Value::as_array) {
            edges.extend((0..items.len()).map(|index| format!("{pointer}/{keyword}/{index}")));
        }
    }
    for keyword in ["not", "if", "then", "else"] {
        if object.get(keyword).is_some_and(Value::is_object) {
            edges.push(format!("{pointer}/{keyword}"));
        }
    }
    if let Some(dependent) = object.get("dependentSchemas").and_then(Value::as_object) {
        edges.extend(
            dependent
                .keys()
                .map(|key| format!("{pointer}/dependentSchemas/{}", escape(key))),
        );
    }
    edges
}

/// The JSON pointer a local reference (`#`, `#/$defs/a`, `#name` for an `$anchor`) leads to.
fn resolve_local(schema: &Value, reference: &str) -> Option<String> {
    let fragment = reference.strip_prefix('#')?;
    if fragment.is_empty() || fragment.starts_with('/') {
        let pointer = percent_decoded(fragment);
        return schema.pointer(&pointer).is_some().then_some(pointer);
    }
    let mut pointers = Vec::new();
    every_schema_pointer(schema, &mut pointers);
    pointers.into_iter().find(|pointer| {
        schema
            .pointer(pointer)
            .and_then(|found| found.get("$anchor"))
            .and_then(Value::as_str)
            == Some(fragment)
    })
}

/// A key as a JSON pointer writes it (`~` as `~0`, `/` as `~1`).
fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// A URI fragment with its `%XX` escapes decoded.
fn percent_decoded(fragment: &str) -> String {
    let bytes = fragment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        let hex = bytes
            .get(at + 1..at + 3)
            .and_then(|pair| std::str::from_utf8(pair).ok())
            .and_then(|pair| u8::from_str_radix(pair, 16).ok());
        match (bytes[at], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                at += 3;
            }
            (byte, _) => {
                out.push(byte);
                at += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reference_cycles_on_the_same_value_are_found_and_recursion_into_it_is_not() {
        let cycles = [
            json!({"properties": {"n": {"$ref": "#/$defs/a"}}, "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}}),
            json!({"$ref": "#"}),
            json!({"allOf": [{"$ref": "#"}]}),
            json!({"$defs": {"x": {"$anchor": "here", "anyOf": [{"$ref": "#here"}]}}, "$ref": "#/$defs/x"}),
            json!({"$defs": {"a b": {"$ref": "#/$defs/a%20b"}}, "$ref": "#/$defs/a%20b"}),
        ];
        for schema in cycles {
            assert!(runaway_references(&schema).is_some(), "{schema}");
        }
        let fine = [
            json!({"type": "object", "properties": {"child": {"$ref": "#"}}}),
            json!({"$defs": {"node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/node"}}}}, "$ref": "#/$defs/node"}),
            json!({"items": {"$ref": "#"}}),
            json!({"type": "object", "properties": {"a": {"type": "string"}}}),
            json!({"$ref": "https://example.com/elsewhere"}),
        ];
        for schema in fine {
            assert_eq!(runaway_references(&schema), None, "{schema}");
        }
    }

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
