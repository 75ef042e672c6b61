//! A model's tool input as the executor reads it: aliases renamed, string scalars coerced to
//! the schema's types, then checked against the schema (a Grep-like one).
#![no_main]

use serde_json::{Value, json};
use std::sync::LazyLock;

static SCHEMA: LazyLock<Value> = LazyLock::new(|| {
    json!({
        "type": "object",
        "additionalProperties": false,
        "x-agentry-aliases": {"context": "-C", "path": "file_path"},
        "required": ["pattern"],
        "properties": {
            "pattern": {"type": "string"},
            "file_path": {"type": ["string", "null"]},
            "-C": {"type": ["integer", "null"], "minimum": 0},
            "-i": {"type": ["boolean", "null"]},
            "head_limit": {"type": ["integer", "null"], "minimum": 0},
            "output_mode": {"enum": ["content", "files_with_matches", "count"]},
            "globs": {"type": "array", "items": {"type": "string"}}
        }
    })
});

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(input) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let input = agentry::coerce::coerce(&SCHEMA, input);
    let _ = agentry::coerce::unknown_fields(&SCHEMA, &input);
    if let Ok(validator) = jsonschema::validator_for(&SCHEMA) {
        let _ = agentry::schema::check(&validator, &input);
    }
});
