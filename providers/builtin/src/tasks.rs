//! The session's task list, and the task tools of the newer style — **TaskCreate**,
//! **TaskUpdate**, **TaskList**, **TaskGet** — which change it one task at a time. TodoWrite
//! replaces the same list whole. Every change is reported as the whole plan.

use agentry_plugin::plan::{PlanEntry, PlanPriority, PlanStatus};
use agentry_plugin::sync::lock;
use agentry_plugin::tool::{
    HookTask, Tool, ToolContext, ToolError, ToolHookEvent, ToolKind, ToolOutput, ToolProgress,
};
use schemars::JsonSchema;
use serde::Deserialize;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex};

/// Where a task stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// Not started.
    Pending,
    /// Being done now.
    InProgress,
    /// Done.
    Completed,
}

impl TaskStatus {
    fn word(self) -> &'static str {
        match self {
            TaskStatus::Pending => "pending",
            TaskStatus::InProgress => "in_progress",
            TaskStatus::Completed => "completed",
        }
    }
}

/// One task of the list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Task {
    /// Its id (`1`, `2`, …).
    pub id: String,
    /// What is to be done, in the imperative.
    pub subject: String,
    /// The details.
    pub description: String,
    /// The subject as it is being done ("Running the tests").
    pub active_form: Option<String>,
    /// Where it stands.
    pub status: TaskStatus,
    /// How much it matters.
    pub priority: PlanPriority,
    /// Tasks that must be done first, by id.
    pub blocked_by: Vec<String>,
}

/// The session's task list.
#[derive(Debug, Default)]
pub struct SessionTasks {
    book: Mutex<TaskBook>,
}

/// The tasks, and the last id given (ids are never reused while the list lives).
#[derive(Debug, Default)]
struct TaskBook {
    tasks: Vec<Task>,
    last_id: u64,
}

impl SessionTasks {
    /// The list of the call's session.
    pub fn of(ctx: &ToolContext) -> Arc<SessionTasks> {
        ctx.state.get_or_init(SessionTasks::default)
    }

    /// The tasks, in order.
    pub fn tasks(&self) -> Vec<Task> {
        lock(&self.book).tasks.clone()
    }

    /// Replaces every task (TodoWrite), numbering them afresh.
    pub fn replace(&self, tasks: impl IntoIterator<Item = Task>) {
        let mut book = lock(&self.book);
        book.last_id = 0;
        book.tasks.clear();
        for task in tasks {
            book.last_id += 1;
            let id = book.last_id.to_string();
            book.tasks.push(Task { id, ..task });
        }
    }

    fn add(&self, task: Task) -> String {
        let mut book = lock(&self.book);
        book.last_id += 1;
        let id = book.last_id.to_string();
        book.tasks.push(Task {
            id: id.clone(),
            ..task
        });
        id
    }

    /// The list as the plan front-ends show.
    pub fn plan(&self) -> Vec<PlanEntry> {
        lock(&self.book)
            .tasks
            .iter()
            .map(|task| PlanEntry {
                content: task.subject.clone(),
                priority: task.priority,
                status: match task.status {
                    TaskStatus::Pending => PlanStatus::Pending,
                    TaskStatus::InProgress => PlanStatus::InProgress,
                    TaskStatus::Completed => PlanStatus::Completed,
                },
            })
            .collect()
    }

    /// Reports the whole list as the plan.
    pub fn report(&self, ctx: &ToolContext) {
        ctx.progress.report(ToolProgress::Plan(self.plan()));
    }

    fn unknown(&self, id: &str) -> ToolError {
        let ids: Vec<String> = lock(&self.book)
            .tasks
            .iter()
            .map(|t| t.id.clone())
            .collect();
        ToolError::InvalidInput(if ids.is_empty() {
            format!("there is no task `{id}`: the list is empty (add tasks with TaskCreate)")
        } else {
            format!("there is no task `{id}`; the tasks are: {}", ids.join(", "))
        })
    }
}

/// Why the session's hooks refuse `event`, when they do.
async fn refused(ctx: &ToolContext, event: ToolHookEvent) -> Option<String> {
    let hooks = ctx.host.hooks.as_ref()?;
    hooks.report(ctx, event).await.blocked
}

/// Adds a task to the list.
#[derive(Debug, Clone, Copy, Default)]
pub struct TaskCreate;

/// TaskCreate's input.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskCreateInput {
    /// What is to be done, in the imperative ("Run the tests").
    pub subject: String,
    /// What it involves.
    pub description: String,
    /// The subject as it is being done ("Running the tests").
    #[serde(default, rename = "activeForm")]
    pub active_form: Option<String>,
}

impl Tool for TaskCreate {
    type Input = TaskCreateInput;
    type Output = ToolOutput;

    fn name(&self) -> &str {
        "TaskCreate"
    }

    fn description(&self) -> String {
        "Adds a task to your task list (shown to the user as your plan) for work of several \
         steps; it starts pending. Track it with TaskUpdate."
            .to_owned()
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Think
    }

    fn title(&self, input: &TaskCreateInput) -> String {
        format!("Add task: {}", input.subject)
    }

    async fn call(
        &self,
        input: TaskCreateInput,
        ctx: ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let list = SessionTasks::of(&ctx);
        let description = input.description.clone();
        let id = list.add(Task {
            id: String::new(),
            subject: input.subject.clone(),
            description: input.description.clone(),
            active_form: input.active_form,
            status: TaskStatus::Pending,
            priority: PlanPriority::Medium,
            blocked_by: Vec::new(),
        });
        let task = HookTask {
            task_id: id.clone(),
            task_subject: input.subject.clone(),
            task_description: Some(description),
        };
        if let Some(reason) = refused(&ctx, ToolHookEvent::TaskCreated(task)).await {
            lock(&list.book).tasks.retain(|task| task.id != id);
            return Err(ToolError::failed(format!(
                "A TaskCreated hook refused the task, which was not added: {reason}"
            )));
        }
        list.report(&ctx);
        Ok(
            ToolOutput::text(format!("Task {id} created: {}", input.subject))
                .with_raw_output(serde_json::json!({"taskId": id})),
        )
    }
}

/// Changes one task.
#[derive(Debug, Clone, Copy, Default)]
pub struct TaskUpdate;

/// A task's new status, or its removal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum NewStatus {
    /// Not started.
    Pending,
    /// Being done now.
    InProgress,
    /// Done.
    Completed,
    /// Removed from the list.
    Deleted,
}

/// TaskUpdate's input.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskUpdateInput {
    /// The task's id.
    #[serde(rename = "taskId")]
    pub task_id: String,
    /// Its new status (`deleted` removes it).
    pub status: Option<NewStatus>,
    /// A new subject.
    pub subject: Option<String>,
    /// A new description.
    pub description: Option<String>,
    /// A new active form.
    #[serde(rename = "activeForm")]
    pub active_form: Option<String>,
    /// Tasks (by id) that must be done before this one.
    #[serde(default, rename = "addBlockedBy")]
    pub add_blocked_by: Vec<String>,
}

impl Tool for TaskUpdate {
    type Input = TaskUpdateInput;
    type Output = ToolOutput;

    fn name(&self) -> &str {
        "TaskUpdate"
    }

    fn description(&self) -> String {
        "Changes a task of your list: mark it in_progress when you start it (one at a time), \
         completed as soon as it is done, or deleted; or change its subject, description or \
         what blocks it."
            .to_owned()
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Think
    }

    fn title(&self, input: &TaskUpdateInput) -> String {
        match input.status {
            Some(status) => format!("Task {}: {}", input.task_id, new_status_word(status)),
            None => format!("Update task {}", input.task_id),
        }
    }

    async fn call(
        &self,
        input: TaskUpdateInput,
        ctx: ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let list = SessionTasks::of(&ctx);
        let completing = list
            .tasks()
            .into_iter()
            .find(|task| task.id == input.task_id && task.status != TaskStatus::Completed)
            .filter(|_| input.status == Some(NewStatus::Completed));
        if let Some(task) = completing {
            let task = HookTask {
                task_id: task.id,
                task_subject: task.subject,
                task_description: Some(task.description),
            };
            if let Some(reason) = refused(&ctx, ToolHookEvent::TaskCompleted(task)).await {
                return Err(ToolError::failed(format!(
                    "A TaskCompleted hook refused: the task is not completed: {reason}"
                )));
            }
        }
        let said = {
            let mut book = lock(&list.book);
            let tasks = &mut book.tasks;
            let Some(at) = tasks.iter().position(|t| t.id == input.task_id) else {
                drop(book);
                return Err(list.unknown(&input.task_id));
            };
            if let Some(missing) = input
                .add_blocked_by
                .iter()
                .find(|id| !tasks.iter().any(|t| &t.id == *id))
            {
                let missing = missing.clone();
                drop(book);
                return Err(list.unknown(&missing));
            }
            if input.status == Some(NewStatus::InProgress)
                && let Some(other) = tasks
                    .iter()
                    .find(|t| t.status == TaskStatus::InProgress && t.id != input.task_id)
            {
                return Err(ToolError::InvalidInput(format!(
                    "task {} is in progress: complete it (or set it back to pending) first — one task at a time",
                    other.id
                )));
            }
            if input.status == Some(NewStatus::Deleted) {
                let removed = tasks.remove(at);
                for task in tasks.iter_mut() {
                    task.blocked_by.retain(|id| *id != removed.id);
                }
                format!("Task {} deleted.", removed.id)
            } else {
                let task = &mut tasks[at];
                if let Some(status) = input.status {
                    task.status = match status {
                        NewStatus::Pending => TaskStatus::Pending,
                        NewStatus::InProgress => TaskStatus::InProgress,
                        _ => TaskStatus::Completed,
                    };
                }
                if let Some(subject) = input.subject {
                    task.subject = subject;
                }
                if let Some(description) = input.description {
                    task.description = description;
                }
                if let Some(active_form) = input.active_form {
                    task.active_form = Some(active_form);
                }
                for id in input.add_blocked_by {
                    if !task.blocked_by.contains(&id) && id != task.id {
                        task.blocked_by.push(id);
                    }
                }
                format!(
                    "Task {} is {}: {}",
                    task.id,
                    task.status.word(),
                    task.subject
                )
            }
        };
        list.report(&ctx);
        Ok(ToolOutput::text(said))
    }
}

fn new_status_word(status: NewStatus) -> &'static str {
    match status {
        NewStatus::Pending => "pending",
        NewStatus::InProgress => "in progress",
        NewStatus::Completed => "completed",
        NewStatus::Deleted => "deleted",
    }
}

/// Lists the tasks.
#[derive(Debug, Clone, Copy, Default)]
pub struct TaskList;

/// TaskList's input (none).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskListInput {}

impl Tool for TaskList {
    type Input = TaskListInput;
    type Output = ToolOutput;

    fn name(&self) -> &str {
        "TaskList"
    }

    fn description(&self) -> String {
        "Lists your tasks: id, status, subject, and what blocks each.".to_owned()
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Think
    }

    fn title(&self, _input: &TaskListInput) -> String {
        "List tasks".to_owned()
    }

    async fn call(&self, _input: TaskListInput, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let tasks = SessionTasks::of(&ctx).tasks();
        if tasks.is_empty() {
            return Ok(ToolOutput::text("The task list is empty."));
        }
        let mut text = String::new();
        for task in &tasks {
            let _ = write!(
                text,
                "{} [{}] {}",
                task.id,
                task.status.word(),
                task.subject
            );
            if !task.blocked_by.is_empty() {
                let _ = write!(text, " (blocked by {})", task.blocked_by.join(", "));
            }
            text.push('\n');
        }
        Ok(ToolOutput::text(text))
    }
}

/// Shows one task whole.
#[derive(Debug, Clone, Copy, Default)]
pub struct TaskGet;

/// TaskGet's input.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskGetInput {
    /// The task's id.
    #[serde(rename = "taskId")]
    pub task_id: String,
}

impl Tool for TaskGet {
    type Input = TaskGetInput;
    type Output = ToolOutput;

    fn name(&self) -> &str {
        "TaskGet"
    }

    fn description(&self) -> String {
        "Shows one task whole: subject, description, status and what blocks it.".to_owned()
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Think
    }

    fn title(&self, input: &TaskGetInput) -> String {
        format!("Task {}", input.task_id)
    }

    async fn call(&self, input: TaskGetInput, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let list = SessionTasks::of(&ctx);
        let task = list
            .tasks()
            .into_iter()
            .find(|t| t.id == input.task_id)
            .ok_or_else(|| list.unknown(&input.task_id))?;
        let mut text = format!(
            "Task {}: {}\nStatus: {}\n",
            task.id,
            task.subject,
            task.status.word()
        );
        if !task.blocked_by.is_empty() {
            let _ = writeln!(text, "Blocked by: {}", task.blocked_by.join(", "));
        }
        let _ = write!(text, "\n{}", task.description);
        Ok(ToolOutput::text(text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentry::event::AgentEvent;
    use agentry::provider::SimpleProvider;
    use agentry::testing::{CallOutcome, ToolHarness};
    use serde_json::json;

    fn harness() -> (ToolHarness, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        let provider = SimpleProvider::new("builtin", "")
            .with_tool(TaskCreate)
            .with_tool(TaskUpdate)
            .with_tool(TaskList)
            .with_tool(TaskGet);
        (ToolHarness::new(&provider, dir.path()).unwrap(), dir)
    }

    /// The plan a call reported: (content, status) per entry.
    fn plan(outcome: &CallOutcome) -> Vec<(String, PlanStatus)> {
        let plans: Vec<&Vec<PlanEntry>> = outcome
            .events
            .iter()
            .filter_map(|e| match e {
                AgentEvent::Plan { entries } => Some(entries),
                _ => None,
            })
            .collect();
        assert_eq!(plans.len(), 1, "one plan event per change");
        plans[0]
            .iter()
            .map(|e| (e.content.clone(), e.status))
            .collect()
    }

    #[tokio::test]
    async fn tasks_are_created_updated_and_deleted_one_at_a_time_and_each_change_is_the_whole_plan()
    {
        let (h, _dir) = harness();
        let first = h
            .call(
                "TaskCreate",
                json!({"subject": "Read the code", "description": "Start at main.rs"}),
            )
            .await;
        assert_eq!(first.text(), "Task 1 created: Read the code");
        let second = h
            .call(
                "TaskCreate",
                json!({"subject": "Fix the bug", "description": "The loop never ends", "activeForm": "Fixing the bug"}),
            )
            .await;
        assert_eq!(
            plan(&second),
            [
                ("Read the code".to_owned(), PlanStatus::Pending),
                ("Fix the bug".to_owned(), PlanStatus::Pending)
            ]
        );
        let started = h
            .call(
                "TaskUpdate",
                json!({"taskId": "1", "status": "in_progress"}),
            )
            .await;
        assert_eq!(started.text(), "Task 1 is in_progress: Read the code");
        assert_eq!(plan(&started)[0].1, PlanStatus::InProgress);
        let two_at_once = h
            .call(
                "TaskUpdate",
                json!({"taskId": "2", "status": "in_progress"}),
            )
            .await;
        assert!(two_at_once.result.is_error);
        assert!(
            two_at_once.text().contains("task 1 is in progress"),
            "{}",
            two_at_once.text()
        );
        h.call("TaskUpdate", json!({"taskId": "2", "addBlockedBy": ["1"]}))
            .await;
        let listed = h.call("TaskList", json!({})).await.text();
        assert_eq!(
            listed,
            "1 [in_progress] Read the code\n2 [pending] Fix the bug (blocked by 1)\n"
        );
        let got = h.call("TaskGet", json!({"taskId": "2"})).await.text();
        assert_eq!(
            got,
            "Task 2: Fix the bug\nStatus: pending\nBlocked by: 1\n\nThe loop never ends"
        );
        let deleted = h
            .call("TaskUpdate", json!({"taskId": "1", "status": "deleted"}))
            .await;
        assert_eq!(
            plan(&deleted),
            [("Fix the bug".to_owned(), PlanStatus::Pending)]
        );
        assert_eq!(
            h.call("TaskList", json!({})).await.text(),
            "2 [pending] Fix the bug\n"
        );
        let unknown = h.call("TaskGet", json!({"taskId": "9"})).await;
        assert!(unknown.result.is_error);
        assert!(
            unknown
                .text()
                .contains("there is no task `9`; the tasks are: 2"),
            "{}",
            unknown.text()
        );
    }
}
