//! What the model is shown of each built-in tool, as reviewed snapshots: a change to a name, a
//! description or a schema is a visible diff in `tests/snapshots/`.
#![allow(clippy::unwrap_used, missing_docs)]

use std::sync::Arc;

#[test]
fn every_builtin_tool_as_the_model_sees_it() {
    use agentry_builtin::{Builtin, TaskStyle};
    for style in [TaskStyle::Todo, TaskStyle::Tasks] {
        let provider = Arc::new(Builtin::with_task_style(style));
        for (name, shown) in agentry::testing::tool_definitions(provider).unwrap() {
            insta::with_settings!({sort_maps => true, prepend_module_to_snapshot => false}, {
                insta::assert_json_snapshot!(name, shown);
            });
        }
    }
}
