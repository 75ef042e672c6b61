//! What takes the input's place while the user must choose: a permission prompt (four
//! answers on single keys), the model's questions (a menu per question, several choices with
//! Space, a free-text answer), pickers of sessions and models, and a rewind's menus.

use crate::editor::{Edit, Editor};
use crate::menu::{Choice, Menu, Picked};
use crate::palette::Palette;
use agentry::ids::SessionId;
use agentry::permission::{PermissionOptionKind, PermissionOutcome, PermissionRequest};
use agentry::question::{Answers, QuestionOutcome, QuestionRequest};
use agentry::tool::ToolKind;
use crossterm::event::{KeyCode, KeyEvent};
use ratatui::style::Color;
use ratatui::text::{Line, Span};
use serde_json::Value;
use tokio::sync::oneshot;

/// What a finished overlay leaves for the loop to do.
pub enum Outcome {
    /// Still open.
    Open,
    /// Answered (the answer went back to the chat).
    Closed,
    /// A session was picked.
    Session(SessionId),
    /// A model was picked.
    Model(String),
    /// A rewind's menu decided (`None`: cancelled).
    Rewind(Option<crate::rewind::Step>),
}

/// An open overlay.
pub enum Overlay {
    /// May a call run?
    Permission {
        /// The menu of the four answers.
        menu: Menu,
        /// The kinds, in the menu's order.
        kinds: Vec<PermissionOptionKind>,
        /// Where the answer goes.
        answer: Option<oneshot::Sender<PermissionOutcome>>,
    },
    /// The model's questions, one at a time.
    Questions(QuestionsOverlay),
    /// A stored session to take up.
    PickSession {
        /// The sessions.
        menu: Menu,
        /// Their ids, in the menu's order.
        ids: Vec<SessionId>,
    },
    /// A model to switch to.
    PickModel {
        /// The models.
        menu: Menu,
        /// As users write them, in the menu's order.
        specs: Vec<String>,
    },
    /// A rewind being chosen.
    Rewind {
        /// The menu of its stage.
        menu: Menu,
        /// Its stage.
        stage: crate::rewind::Stage,
    },
}

impl Overlay {
    /// The permission prompt for `request`.
    pub fn permission(
        request: &PermissionRequest,
        answer: oneshot::Sender<PermissionOutcome>,
        palette: Palette,
    ) -> Self {
        let call = &request.tool_call;
        let mut title = vec![Line::from(vec![
            Span::styled("Allow ", palette.bold()),
            Span::styled(
                asked_about(call),
                palette.bold().patch(palette.paint(Color::Yellow)),
            ),
            Span::styled("?", palette.bold()),
        ])];
        let input = input_lines(call.kind, &call.raw_input);
        let shown = if input.len() <= PROMPT_INPUT_LINES {
            input.len()
        } else {
            PROMPT_INPUT_LINES - 1
        };
        for line in &input[..shown] {
            title.push(Line::from(Span::styled(format!("  {line}"), palette.dim())));
        }
        if shown < input.len() {
            title.push(Line::from(Span::styled(
                format!(
                    "  … {} more lines: all {} are shown above",
                    input.len() - shown,
                    input.len()
                ),
                palette.bold(),
            )));
        }
        if let Some(why) = &request.unseen {
            title.push(Line::from(Span::styled(
                format!("  No rule can allow it: {why}."),
                palette.dim(),
            )));
        }
        let mut kinds = Vec::new();
        let choices = request
            .options
            .iter()
            .map(|option| {
                kinds.push(option.kind);
                let key = match option.kind {
                    PermissionOptionKind::AllowOnce => 'y',
                    PermissionOptionKind::AllowAlways => 'a',
                    PermissionOptionKind::RejectOnce => 'n',
                    PermissionOptionKind::RejectAlways => 'x',
                };
                Choice::new(option.name.clone()).key(key)
            })
            .collect();
        Overlay::Permission {
            menu: Menu::new(title, choices),
            kinds,
            answer: Some(answer),
        }
    }

    /// Whether the chat that asked stopped waiting (it was cancelled): the overlay goes.
    pub fn abandoned(&self) -> bool {
        match self {
            Overlay::Permission { answer, .. } => answer.as_ref().is_none_or(|a| a.is_closed()),
            Overlay::Questions(questions) => {
                questions.answer.as_ref().is_none_or(|a| a.is_closed())
            }
            _ => false,
        }
    }

    /// Applies a key.
    pub fn key(&mut self, key: KeyEvent) -> Outcome {
        match self {
            Overlay::Permission {
                menu,
                kinds,
                answer,
            } => {
                let kind = match menu.key(key) {
                    Picked::Nothing => return Outcome::Open,
                    Picked::Dismissed => PermissionOptionKind::RejectOnce,
                    Picked::Choices(picked) => kinds[picked[0]],
                };
                if let Some(answer) = answer.take() {
                    let _ = answer.send(PermissionOutcome::Selected { kind });
                }
                Outcome::Closed
            }
            Overlay::Questions(questions) => questions.key(key),
            Overlay::PickSession { menu, ids } => match menu.key(key) {
                Picked::Nothing => Outcome::Open,
                Picked::Dismissed => Outcome::Closed,
                Picked::Choices(picked) => Outcome::Session(ids[picked[0]].clone()),
            },
            Overlay::PickModel { menu, specs } => match menu.key(key) {
                Picked::Nothing => Outcome::Open,
                Picked::Dismissed => Outcome::Closed,
                Picked::Choices(picked) => Outcome::Model(specs[picked[0]].clone()),
            },
            Overlay::Rewind { menu, stage } => match stage.key(menu, key) {
                None => Outcome::Open,
                Some(step) => Outcome::Rewind(step),
            },
        }
    }

    /// Answers "cancelled" to a chat still waiting.
    pub fn cancel(&mut self) {
        match self {
            Overlay::Permission { answer, .. } => {
                if let Some(answer) = answer.take() {
                    let _ = answer.send(PermissionOutcome::Cancelled);
                }
            }
            Overlay::Questions(questions) => {
                if let Some(answer) = questions.answer.take() {
                    let _ = answer.send(QuestionOutcome::Cancelled);
                }
            }
            _ => {}
        }
    }

    /// The overlay's lines and where the cursor goes in them (when text is typed).
    pub fn lines(
        &self,
        palette: Palette,
        width: u16,
    ) -> (Vec<Line<'static>>, Option<(usize, usize)>) {
        let menu = match self {
            Overlay::Permission { menu, .. }
            | Overlay::PickSession { menu, .. }
            | Overlay::PickModel { menu, .. }
            | Overlay::Rewind { menu, .. } => menu,
            Overlay::Questions(questions) => return questions.lines(palette, width),
        };
        (menu.lines(palette), None)
    }
}

/// The model's questions being answered.
pub struct QuestionsOverlay {
    request: QuestionRequest,
    answer: Option<oneshot::Sender<QuestionOutcome>>,
    index: usize,
    answers: Answers,
    menu: Menu,
    /// The free-text answer being typed, once "Type an answer" was chosen.
    typing: Option<Editor>,
    palette: Palette,
}

impl QuestionsOverlay {
    /// The overlay for `request`, at its first question.
    pub fn new(
        request: QuestionRequest,
        answer: oneshot::Sender<QuestionOutcome>,
        palette: Palette,
    ) -> Self {
        let menu = question_menu(&request, 0, palette);
        Self {
            request,
            answer: Some(answer),
            index: 0,
            answers: Answers::default(),
            menu,
            typing: None,
            palette,
        }
    }

    fn key(&mut self, key: KeyEvent) -> Outcome {
        if let Some(editor) = &mut self.typing {
            if key.code == KeyCode::Esc {
                self.typing = None;
                return Outcome::Open;
            }
            if editor.key(key) == Edit::Enter && !editor.text().trim().is_empty() {
                let text = editor.text().trim().to_owned();
                self.typing = None;
                self.answers.custom.insert(self.index.to_string(), text);
                return self.next();
            }
            return Outcome::Open;
        }
        let question = &self.request.questions[self.index];
        let other = question.options.len();
        match self.menu.key(key) {
            Picked::Nothing => Outcome::Open,
            Picked::Dismissed => {
                if let Some(answer) = self.answer.take() {
                    let _ = answer.send(QuestionOutcome::Declined);
                }
                Outcome::Closed
            }
            Picked::Choices(picked) => {
                let chosen: Vec<usize> = picked.iter().copied().filter(|&i| i < other).collect();
                if !chosen.is_empty() {
                    self.answers
                        .selections
                        .insert(self.index.to_string(), chosen);
                }
                if picked.contains(&other) {
                    self.typing = Some(Editor::new());
                    return Outcome::Open;
                }
                self.next()
            }
        }
    }

    /// On to the next question, or sends the answers after the last.
    fn next(&mut self) -> Outcome {
        self.index += 1;
        if self.index < self.request.questions.len() {
            self.menu = question_menu(&self.request, self.index, self.palette);
            return Outcome::Open;
        }
        if let Some(answer) = self.answer.take() {
            let _ = answer.send(QuestionOutcome::Answered(std::mem::take(&mut self.answers)));
        }
        Outcome::Closed
    }

    fn lines(&self, palette: Palette, width: u16) -> (Vec<Line<'static>>, Option<(usize, usize)>) {
        let mut lines = self.menu.lines(palette);
        let Some(editor) = &self.typing else {
            return (lines, None);
        };
        lines.pop();
        let (typed, (row, column)) =
            editor.lines(Span::styled("answer › ", palette.selected()), width);
        let at = lines.len() + row;
        lines.extend(typed);
        lines.push(Line::from(Span::styled(
            "enter send · esc back to the choices",
            palette.dim(),
        )));
        (lines, Some((at, column)))
    }
}

/// The menu of question `index`: its options, then "Type an answer".
fn question_menu(request: &QuestionRequest, index: usize, palette: Palette) -> Menu {
    let question = &request.questions[index];
    let count = request.questions.len();
    let progress = if count > 1 {
        format!(" ({}/{count})", index + 1)
    } else {
        String::new()
    };
    let title = vec![
        Line::from(vec![Span::styled(
            format!("{}{progress}", question.header),
            palette.paint(Color::Cyan),
        )]),
        Line::from(Span::styled(question.question.clone(), palette.bold())),
    ];
    let mut choices: Vec<Choice> = question
        .options
        .iter()
        .map(|option| Choice::new(option.label.clone()).detail(option.description.clone()))
        .collect();
    choices.push(Choice::new("Type an answer…"));
    let menu = Menu::new(title, choices);
    if question.multi_select {
        menu.multi()
    } else {
        menu
    }
}

/// A few lines saying what a call would do: the command, the file, or its input.
fn input_lines(kind: ToolKind, input: &Value) -> Vec<String> {
    let field = |name: &str| input.get(name).and_then(Value::as_str).map(str::to_owned);
    if kind == ToolKind::Execute
        && let Some(command) = field("command")
    {
        return command.lines().map(|l| format!("$ {l}")).collect();
    }
    if let Some(path) = field("file_path")
        .or_else(|| field("path"))
        .or_else(|| field("notebook_path"))
    {
        return vec![path];
    }
    if let Some(url) = field("url") {
        return vec![url];
    }
    let json = serde_json::to_string_pretty(input).unwrap_or_default();
    if json == "{}" || json == "null" {
        return Vec::new();
    }
    json.lines().map(str::to_owned).collect()
}

/// What the prompt asks about: a command's tool and what the model says it does (the command
/// itself is shown below, whole), else the call's title.
fn asked_about(call: &agentry::event::ToolCallSnapshot) -> String {
    let field = |name: &str| call.raw_input.get(name).and_then(Value::as_str);
    match (call.kind, field("command"), field("description")) {
        (ToolKind::Execute, Some(_), Some(description)) if !description.trim().is_empty() => {
            format!("{} — {}", call.tool_name, description.trim())
        }
        (ToolKind::Execute, Some(_), _) => call.tool_name.clone(),
        _ => call.title.clone(),
    }
}

/// How many lines of a call's input the permission prompt shows; a longer input is printed
/// whole above the prompt first ([`whole_input`]), so no part of what is allowed is hidden.
const PROMPT_INPUT_LINES: usize = 8;

/// The call's input whole, for the scrollback, when the permission prompt cannot show it all.
pub fn whole_input(request: &PermissionRequest, palette: Palette) -> Option<Vec<Line<'static>>> {
    let call = &request.tool_call;
    let input = input_lines(call.kind, &call.raw_input);
    if input.len() <= PROMPT_INPUT_LINES {
        return None;
    }
    let heading = Line::from(Span::styled(
        format!("{} asks to run ({} lines):", call.tool_name, input.len()),
        palette.bold(),
    ));
    Some(
        std::iter::once(heading)
            .chain(
                input
                    .into_iter()
                    .map(|line| Line::from(Span::raw(format!("  {line}")))),
            )
            .collect(),
    )
}

/// The picker of stored sessions.
pub fn session_picker(sessions: &[agentry::session::SessionMeta], palette: Palette) -> Overlay {
    let title = vec![Line::from(Span::styled(
        "Resume which session?",
        palette.bold(),
    ))];
    let choices = sessions
        .iter()
        .map(|meta| {
            Choice::new(
                meta.title
                    .clone()
                    .unwrap_or_else(|| "(untitled)".to_owned()),
            )
            .detail(Some(format!("{} · {}", meta.updated_at, meta.id)))
        })
        .collect();
    Overlay::PickSession {
        menu: Menu::new(title, choices),
        ids: sessions.iter().map(|meta| meta.id.clone()).collect(),
    }
}

/// The picker of offered models, the current one first.
pub fn model_picker(specs: Vec<String>, current: &str, palette: Palette) -> Overlay {
    let title = vec![Line::from(Span::styled(
        format!("Switch from {current} to which model?"),
        palette.bold(),
    ))];
    let choices = specs.iter().map(Choice::new).collect();
    Overlay::PickModel {
        menu: Menu::new(title, choices),
        specs,
    }
}
