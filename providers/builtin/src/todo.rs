//! **TodoWrite**: the agent's task list, shown to the user as its plan, replaced whole.

use crate::tasks::{SessionTasks, Task, TaskStatus};
use agentry_plugin::plan::PlanPriority;
use agentry_plugin::tool::{Tool, ToolContext, ToolError, ToolKind, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;
use std::fmt::Write as _;

/// Replaces the agent's task list.
#[derive(Debug, Clone, Copy, Default)]
pub struct TodoWrite;

/// TodoWrite's input.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TodoWriteInput {
    /// The whole task list, in order (it replaces the previous one).
    pub todos: Vec<Todo>,
}

/// One task.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Todo {
    /// What is to be done, in the imperative ("Run the tests").
    pub content: String,
    /// Where it stands; at most one task is in progress at a time.
    pub status: TodoStatus,
    /// The same, as it is being done ("Running the tests").
    #[serde(default, rename = "activeForm")]
    pub active_form: Option<String>,
    /// How much it matters (medium when not said).
    #[serde(default)]
    pub priority: Option<TodoPriority>,
    /// An identifier, as earlier versions of this tool asked for (accepted, not needed).
    #[serde(default)]
    pub id: Option<String>,
}

/// Where a task stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TodoStatus {
    /// Not started.
    Pending,
    /// Being done now.
    InProgress,
    /// Done.
    Completed,
}

/// How much a task matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TodoPriority {
    /// First.
    High,
    /// Normal.
    Medium,
    /// When there is time.
    Low,
}

impl Tool for TodoWrite {
    type Input = TodoWriteInput;
    type Output = ToolOutput;

    fn name(&self) -> &str {
        "TodoWrite"
    }

    fn description(&self) -> String {
        "Keeps your task list for work of several steps, shown to the user as your plan. Each call replaces the whole list: mark a task in_progress when you start it (one at a time) and completed as soon as it is done.".to_owned()
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Think
    }

    fn title(&self, input: &TodoWriteInput) -> String {
        match input
            .todos
            .iter()
            .find(|t| t.status == TodoStatus::InProgress)
        {
            Some(todo) => todo
                .active_form
                .clone()
                .unwrap_or_else(|| todo.content.clone()),
            None => "Update the plan".to_owned(),
        }
    }

    async fn call(&self, input: TodoWriteInput, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let in_progress = input
            .todos
            .iter()
            .filter(|t| t.status == TodoStatus::InProgress)
            .count();
        if in_progress > 1 {
            return Err(ToolError::InvalidInput(format!(
                "{in_progress} tasks are in_progress: keep one in progress at a time"
            )));
        }
        let list = SessionTasks::of(&ctx);
        list.replace(input.todos.iter().map(task));
        list.report(&ctx);
        let mut summary = String::from("The task list is updated:\n");
        for todo in &input.todos {
            let mark = match todo.status {
                TodoStatus::Pending => "[ ]",
                TodoStatus::InProgress => "[~]",
                TodoStatus::Completed => "[x]",
            };
            let _ = writeln!(summary, "{mark} {}", todo.content);
        }
        Ok(ToolOutput::text(summary))
    }
}

/// A todo as a task of the session's list (numbered by the list).
fn task(todo: &Todo) -> Task {
    Task {
        id: String::new(),
        subject: todo.content.clone(),
        description: String::new(),
        active_form: todo.active_form.clone(),
        status: match todo.status {
            TodoStatus::Pending => TaskStatus::Pending,
            TodoStatus::InProgress => TaskStatus::InProgress,
            TodoStatus::Completed => TaskStatus::Completed,
        },
        priority: match todo.priority.unwrap_or(TodoPriority::Medium) {
            TodoPriority::High => PlanPriority::High,
            TodoPriority::Medium => PlanPriority::Medium,
            TodoPriority::Low => PlanPriority::Low,
        },
        blocked_by: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentry::event::{AgentEvent, PlanStatus};
    use agentry::provider::SimpleProvider;
    use agentry::testing::ToolHarness;
    use serde_json::json;

    fn harness() -> (ToolHarness, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        let provider = SimpleProvider::new("builtin", "").with_tool(TodoWrite);
        (ToolHarness::new(&provider, dir.path()).unwrap(), dir)
    }

    #[tokio::test]
    async fn the_list_becomes_the_plan_and_the_models_summary() {
        let (harness, _dir) = harness();
        let outcome = harness
            .call(
                "TodoWrite",
                json!({"todos": [
                    {"content": "Read the code", "status": "completed"},
                    {"content": "Fix the bug", "status": "in_progress", "activeForm": "Fixing the bug", "priority": "high"},
                    {"content": "Run the tests", "status": "pending"},
                ]}),
            )
            .await;
        assert!(!outcome.result.is_error, "{}", outcome.text());
        assert_eq!(outcome.announced().unwrap().title, "Fixing the bug");
        let plan = outcome
            .events
            .iter()
            .find_map(|e| match e {
                AgentEvent::Plan { entries } => Some(entries.clone()),
                _ => None,
            })
            .expect("a plan event");
        assert_eq!(plan.len(), 3);
        assert_eq!(plan[1].priority, PlanPriority::High);
        assert_eq!(plan[1].status, PlanStatus::InProgress);
        assert_eq!(plan[2].priority, PlanPriority::Medium);
        assert!(outcome.text().contains("[x] Read the code"));
        assert!(outcome.text().contains("[~] Fix the bug"));
    }

    #[tokio::test]
    async fn items_with_an_id_are_taken_and_unknown_fields_named() {
        let (harness, _dir) = harness();
        let outcome = harness
            .call(
                "TodoWrite",
                json!({"todos": [{"id": "1", "content": "Ship", "status": "pending"}]}),
            )
            .await;
        assert!(!outcome.result.is_error, "{}", outcome.text());
        let refused = harness
            .call("TodoWrite", json!({"todos": [], "items": []}))
            .await;
        assert!(refused.result.is_error);
        assert!(
            refused
                .text()
                .contains("TodoWrite takes no `items`; its fields are: todos"),
            "{}",
            refused.text()
        );
    }

    #[tokio::test]
    async fn two_tasks_in_progress_are_refused() {
        let (harness, _dir) = harness();
        let outcome = harness
            .call(
                "TodoWrite",
                json!({"todos": [
                    {"content": "a", "status": "in_progress"},
                    {"content": "b", "status": "in_progress"},
                ]}),
            )
            .await;
        assert!(outcome.result.is_error);
        assert!(
            outcome.text().contains("one in progress at a time"),
            "{}",
            outcome.text()
        );
    }

    #[tokio::test]
    async fn todo_write_and_the_task_tools_share_one_list() {
        let dir = tempfile::tempdir().unwrap();
        let provider = SimpleProvider::new("builtin", "")
            .with_tool(TodoWrite)
            .with_tool(crate::TaskList)
            .with_tool(crate::TaskCreate);
        let h = ToolHarness::new(&provider, dir.path()).unwrap();
        h.call(
            "TodoWrite",
            json!({"todos": [
                {"content": "Plan", "status": "completed"},
                {"content": "Build", "status": "pending"},
            ]}),
        )
        .await;
        let listed = h.call("TaskList", json!({})).await.text();
        assert_eq!(listed, "1 [completed] Plan\n2 [pending] Build\n");
        let created = h
            .call("TaskCreate", json!({"subject": "Ship", "description": ""}))
            .await;
        assert_eq!(created.text(), "Task 3 created: Ship");
    }
}
