//! A list of choices answered from the keyboard: arrows (or Ctrl-P / Ctrl-N) move, Enter picks,
//! a choice's own key or its number picks it at once, Space ticks choices of a multi-choice
//! list, Esc says no. Permission prompts, questions and pickers (sessions, models) use it.

use crate::palette::Palette;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::text::{Line, Span};
use std::collections::BTreeSet;

/// One choice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    /// What it says.
    pub label: String,
    /// A line under it, dimmed.
    pub detail: Option<String>,
    /// A key that picks it at once.
    pub key: Option<char>,
}

impl Choice {
    /// A choice with only a label.
    pub fn new(label: impl Into<String>) -> Self {
        Self {
            label: label.into(),
            detail: None,
            key: None,
        }
    }

    /// The same with a detail line.
    pub fn detail(mut self, detail: Option<String>) -> Self {
        self.detail = detail.filter(|d| !d.trim().is_empty());
        self
    }

    /// The same with a key of its own.
    pub fn key(mut self, key: char) -> Self {
        self.key = Some(key);
        self
    }
}

/// What a key did to the menu.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Picked {
    /// Nothing decided yet.
    Nothing,
    /// These choices (one for a single-choice list).
    Choices(Vec<usize>),
    /// Esc: none.
    Dismissed,
}

/// The menu's state.
#[derive(Debug, Clone)]
pub struct Menu {
    /// The question above the choices.
    pub title: Vec<Line<'static>>,
    choices: Vec<Choice>,
    highlighted: usize,
    multi: bool,
    ticked: BTreeSet<usize>,
    /// A line of key hints under the choices.
    hints: String,
}

impl Menu {
    /// A single-choice menu.
    pub fn new(title: Vec<Line<'static>>, choices: Vec<Choice>) -> Self {
        Self {
            title,
            choices,
            highlighted: 0,
            multi: false,
            ticked: BTreeSet::new(),
            hints: "↑/↓ move · enter pick · esc cancel".to_owned(),
        }
    }

    /// The same, several choices allowed.
    pub fn multi(mut self) -> Self {
        self.multi = true;
        self.hints = "↑/↓ move · space tick · enter confirm · esc cancel".to_owned();
        self
    }

    /// The choice the cursor is on.
    pub fn highlighted(&self) -> usize {
        self.highlighted
    }

    /// Applies a key.
    pub fn key(&mut self, key: KeyEvent) -> Picked {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let count = self.choices.len();
        match key.code {
            KeyCode::Up | KeyCode::BackTab => {
                self.highlighted = (self.highlighted + count - 1) % count.max(1)
            }
            KeyCode::Char('p') if ctrl => {
                self.highlighted = (self.highlighted + count - 1) % count.max(1)
            }
            KeyCode::Down | KeyCode::Tab => {
                self.highlighted = (self.highlighted + 1) % count.max(1)
            }
            KeyCode::Char('n') if ctrl => self.highlighted = (self.highlighted + 1) % count.max(1),
            KeyCode::Esc => return Picked::Dismissed,
            KeyCode::Char(' ') if self.multi => self.toggle(self.highlighted),
            KeyCode::Enter if self.multi => {
                let ticked: Vec<usize> = if self.ticked.is_empty() {
                    vec![self.highlighted]
                } else {
                    self.ticked.iter().copied().collect()
                };
                return Picked::Choices(ticked);
            }
            KeyCode::Enter => return Picked::Choices(vec![self.highlighted]),
            KeyCode::Char(c) if !ctrl => {
                let by_key = self.choices.iter().position(|choice| choice.key == Some(c));
                let by_number = c
                    .to_digit(10)
                    .and_then(|n| (n as usize).checked_sub(1))
                    .filter(|&n| n < count && count <= 9);
                if let Some(index) = by_key.or(by_number) {
                    self.highlighted = index;
                    if self.multi {
                        self.toggle(index);
                    } else {
                        return Picked::Choices(vec![index]);
                    }
                }
            }
            _ => {}
        }
        Picked::Nothing
    }

    fn toggle(&mut self, index: usize) {
        if !self.ticked.remove(&index) {
            self.ticked.insert(index);
        }
    }

    /// The menu's lines: title, choices (numbered, the highlighted one marked), hints.
    pub fn lines(&self, palette: Palette) -> Vec<Line<'static>> {
        let mut lines = self.title.clone();
        for (index, choice) in self.choices.iter().enumerate() {
            let here = index == self.highlighted;
            let pointer = if here { "❯ " } else { "  " };
            let tick = match (self.multi, self.ticked.contains(&index)) {
                (false, _) => "",
                (true, true) => "[x] ",
                (true, false) => "[ ] ",
            };
            let key = choice.key.map(|k| format!(" ({k})")).unwrap_or_default();
            let style = if here {
                palette.selected()
            } else {
                Default::default()
            };
            lines.push(Line::from(vec![
                Span::styled(pointer, palette.selected()),
                Span::styled(format!("{}. {tick}{}", index + 1, choice.label), style),
                Span::styled(key, palette.dim()),
            ]));
            if let Some(detail) = &choice.detail {
                lines.push(Line::from(Span::styled(
                    format!("     {detail}"),
                    palette.dim(),
                )));
            }
        }
        lines.push(Line::from(Span::styled(self.hints.clone(), palette.dim())));
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn press(menu: &mut Menu, code: KeyCode) -> Picked {
        menu.key(KeyEvent::new(code, KeyModifiers::NONE))
    }

    #[test]
    fn single_choice_by_arrows_number_or_key() {
        let choices = vec![Choice::new("Yes").key('y'), Choice::new("No").key('n')];
        let mut menu = Menu::new(Vec::new(), choices);
        assert_eq!(press(&mut menu, KeyCode::Down), Picked::Nothing);
        assert_eq!(press(&mut menu, KeyCode::Enter), Picked::Choices(vec![1]));
        assert_eq!(
            press(&mut menu, KeyCode::Char('1')),
            Picked::Choices(vec![0])
        );
        assert_eq!(
            press(&mut menu, KeyCode::Char('n')),
            Picked::Choices(vec![1])
        );
        assert_eq!(press(&mut menu, KeyCode::Char('x')), Picked::Nothing);
        assert_eq!(press(&mut menu, KeyCode::Esc), Picked::Dismissed);
        let text: Vec<String> = menu
            .lines(Palette::new(false))
            .iter()
            .map(|l| l.to_string())
            .collect();
        assert_eq!(text[1], "❯ 2. No (n)");
    }

    #[test]
    fn several_choices_are_ticked_with_space() {
        let choices = ["a", "b", "c"].map(Choice::new).to_vec();
        let mut menu = Menu::new(Vec::new(), choices).multi();
        press(&mut menu, KeyCode::Char(' '));
        press(&mut menu, KeyCode::Down);
        press(&mut menu, KeyCode::Down);
        press(&mut menu, KeyCode::Char(' '));
        assert_eq!(
            press(&mut menu, KeyCode::Enter),
            Picked::Choices(vec![0, 2])
        );
    }
}
