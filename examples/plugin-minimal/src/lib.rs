use agentry_plugin::provider::SimpleProvider;
use agentry_plugin::tool::{ToolKind, tool_fn};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Input {
    /// Who to greet.
    name: String,
}

agentry_plugin_abi::export_plugin!(
    SimpleProvider::new("greetings", "Greets people.").with_tool(tool_fn(
        "Hello",
        "Greets someone by name.",
        ToolKind::Think,
        |input: Input, _| async move { Ok(format!("Hello, {}!", input.name)) }
    ))
);
