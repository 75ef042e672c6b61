//! # agentry-builtin
//!
//! Tools that need nothing outside the agent: the agent's task list, shown by front-ends as its
//! plan (ACP's `plan` update, the WebSocket protocol's plan patch) after every change. Two
//! styles, as Claude Code has had them, work on the same list: **TodoWrite** replaces it whole;
//! **TaskCreate**, **TaskUpdate**, **TaskList** and **TaskGet** change it a task at a time.
//! [`Builtin`] offers TodoWrite; [`Builtin::with_task_style`] chooses. **AskUserQuestion**
//! asks the user multiple-choice questions, in chats whose front-end can ask.
//!
//! ```
//! use agentry::prelude::*;
//! use agentry_builtin::Builtin;
//!
//! # let model = agentry::model::scripted::ScriptedModel::new([]);
//! let builder = Agent::builder(model).provider(Builtin::default());
//! # let _ = builder;
//! ```

mod ask;
mod tasks;
mod todo;

pub use ask::{AskUserQuestion, AskUserQuestionInput};
pub use tasks::{
    SessionTasks, Task, TaskCreate, TaskCreateInput, TaskGet, TaskGetInput, TaskList,
    TaskListInput, TaskStatus, TaskUpdate, TaskUpdateInput,
};
pub use todo::{Todo, TodoStatus, TodoWrite, TodoWriteInput};

use agentry_plugin::provider::Provider;
use agentry_plugin::settings::{Configured, Making, Recipe, Settings, made};
use agentry_plugin::tool::{DynTool, erase};
use std::sync::Arc;

/// The configuration section the builtin provider reads: `[builtin]`.
pub const SECTION: &str = "builtin";

/// `[builtin]` in agentry's configuration (every key optional).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BuiltinSettings {
    /// Which tools keep the agent's task list: `todo` (TodoWrite, the default) or `tasks`
    /// (TaskCreate, TaskUpdate, TaskList, TaskGet).
    #[serde(default)]
    pub task_list: TaskStyle,
}

impl BuiltinSettings {
    /// The settings of a `[builtin]` section as written (TOML read as JSON); the defaults
    /// without one.
    pub fn from_section(section: Option<&serde_json::Value>) -> Result<Self, String> {
        section.map_or(Ok(Self::default()), |value| {
            serde_json::from_value(value.clone()).map_err(|e| format!("[{SECTION}]: {e}"))
        })
    }
}

/// Which tools the model gets for its task list.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStyle {
    /// TodoWrite, which replaces the whole list.
    #[default]
    Todo,
    /// TaskCreate, TaskUpdate, TaskList and TaskGet.
    Tasks,
}

impl std::str::FromStr for TaskStyle {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "todo" => Ok(TaskStyle::Todo),
            "tasks" => Ok(TaskStyle::Tasks),
            other => Err(format!(
                "unknown task list style `{other}` (expected todo or tasks)"
            )),
        }
    }
}

/// The `builtin` provider.
#[derive(Debug, Clone, Copy, Default)]
pub struct Builtin {
    style: TaskStyle,
}

impl Builtin {
    /// The provider offering this style of task tools.
    pub fn with_task_style(style: TaskStyle) -> Self {
        Self { style }
    }
}

impl Provider for Builtin {
    fn name(&self) -> &str {
        "builtin"
    }

    fn description(&self) -> String {
        "The agent's own tools: its task list, and questions to the user.".to_owned()
    }

    fn tools(&self) -> Vec<Arc<dyn DynTool>> {
        let tasks = match self.style {
            TaskStyle::Todo => vec![erase(TodoWrite)],
            TaskStyle::Tasks => vec![
                erase(TaskCreate),
                erase(TaskUpdate),
                erase(TaskList),
                erase(TaskGet),
            ],
        };
        tasks.into_iter().chain([erase(AskUserQuestion)]).collect()
    }
}

/// How the built-in tools are made, linked or as a plugin: the task-list tools `[builtin]`
/// chooses; an unusable table leaves them out.
pub const RECIPE: Recipe = Recipe {
    name: "builtin",
    sections: &[SECTION],
    make,
};

fn make(settings: Settings) -> Making {
    made(
        BuiltinSettings::from_section(settings.section(SECTION))
            .map(|chosen| Configured::new(Builtin::with_task_style(chosen.task_list))),
    )
}
