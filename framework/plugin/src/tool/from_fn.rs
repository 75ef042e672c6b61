//! A tool made from a name, a description, a kind and an async function: for tools that need
//! nothing from the [`Tool`] trait beyond `call` (no title, no locations).

use super::{IntoToolOutput, Tool, ToolContext, ToolError, ToolKind};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use std::future::Future;
use std::marker::PhantomData;

/// A tool whose call is a function; see [`tool_fn`].
pub struct FnTool<I, F> {
    name: String,
    description: String,
    kind: ToolKind,
    call: F,
    input: PhantomData<fn(I)>,
}

/// A tool named `name` whose calls run `call` with the typed input. The input's JSON Schema
/// (from its doc comments) is what the model sees, as for any [`Tool`].
///
/// ```
/// use agentry_plugin::tool::{ToolError, ToolKind, tool_fn};
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Input {
///     /// Who to greet.
///     name: String,
/// }
///
/// let hello = tool_fn("Hello", "Greets someone.", ToolKind::Other, |input: Input, _| async move {
///     Ok::<_, ToolError>(format!("Hello, {}!", input.name))
/// });
/// ```
pub fn tool_fn<I, O, F, Fut>(
    name: impl Into<String>,
    description: impl Into<String>,
    kind: ToolKind,
    call: F,
) -> FnTool<I, F>
where
    F: Fn(I, ToolContext) -> Fut,
    Fut: Future<Output = Result<O, ToolError>>,
{
    FnTool {
        name: name.into(),
        description: description.into(),
        kind,
        call,
        input: PhantomData,
    }
}

impl<I, O, F, Fut> Tool for FnTool<I, F>
where
    I: DeserializeOwned + JsonSchema + Send + 'static,
    O: IntoToolOutput + Send + 'static,
    F: Fn(I, ToolContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<O, ToolError>> + Send,
{
    type Input = I;
    type Output = O;

    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> String {
        self.description.clone()
    }

    fn kind(&self) -> ToolKind {
        self.kind
    }

    fn call(
        &self,
        input: I,
        ctx: ToolContext,
    ) -> impl Future<Output = Result<O, ToolError>> + Send {
        (self.call)(input, ctx)
    }
}
