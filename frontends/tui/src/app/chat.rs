//! Chats: what the user submits (a prompt with its `@file` attachments, a slash command, a
//! shell line), the chat's task, its questions, and what follows when it ends.

use super::{App, MOST_ATTACHED_BYTES, Running};
use crate::ask::Asked;
use crate::commands::Builtin;
use crate::overlay::{Outcome, Overlay, QuestionsOverlay};
use agentry::agent::{ChatIo, ChatOptions, Session};
use agentry::commands::{CommandPrompt, PromptPart};
use agentry::error::AgentError;
use agentry::event::ChatSummary;
use agentry::tool::ContentBlock;
use std::sync::Arc;
use std::time::Instant;
use tokio_util::sync::CancellationToken;

impl App {
    pub(super) async fn submit(&mut self) {
        let text = self.editor.take();
        self.completion = None;
        self.exit_armed = None;
        if text.trim().is_empty() {
            return;
        }
        self.history.record(&text);
        if self.busy() {
            self.queued.push_back(text);
            return;
        }
        self.dispatch(text).await;
    }

    /// Runs what was typed: a shell command, a command, or a message to the agent.
    pub(super) async fn dispatch(&mut self, text: String) {
        let trimmed = text.trim();
        if let Some(command) = trimmed.strip_prefix('!') {
            return self.start_shell(command.trim().to_owned());
        }
        if let Some((builtin, rest)) = Builtin::parse(trimmed) {
            let rest = rest.to_owned();
            return self.builtin(builtin, &rest).await;
        }
        let mut prompt = if trimmed.starts_with('/') {
            match self.agent.slash_commands().expand(trimmed).await {
                Some(Ok(prompt)) => prompt,
                Some(Err(problem)) => return self.note_error(&problem),
                None if is_command_word(trimmed) => {
                    let name = trimmed.split_whitespace().next().unwrap_or_default();
                    return self.note_error(&format!("Unknown command {name}: /help lists them."));
                }
                None => self.attachments(&text).into(),
            }
        } else {
            self.attachments(&text).into()
        };
        for output in self.context.drain(..).rev() {
            prompt
                .parts
                .insert(0, PromptPart::Content(ContentBlock::text(output)));
        }
        self.start_chat(prompt);
    }

    /// The message with the files its `@path`s name attached.
    pub(super) fn attachments(&mut self, text: &str) -> Vec<ContentBlock> {
        let mut content = vec![ContentBlock::text(text)];
        let mut problems = Vec::new();
        for word in text.split_whitespace() {
            let Some(name) = word.strip_prefix('@') else {
                continue;
            };
            let name = name.trim_end_matches([',', '.', ')', ':', ';', '!', '?']);
            let path = self.settings.cwd.join(name);
            let Ok(metadata) = std::fs::metadata(&path) else {
                continue;
            };
            let uri = format!("file://{}", path.display());
            if metadata.is_dir() {
                content.push(ContentBlock::ResourceLink {
                    uri,
                    name: name.to_owned(),
                    mime_type: None,
                    description: Some("a folder".to_owned()),
                });
            } else if metadata.len() > MOST_ATTACHED_BYTES {
                problems.push(format!(
                    "@{name} is over 256 KiB: not attached (the agent can read it)"
                ));
            } else {
                match std::fs::read_to_string(&path) {
                    Ok(text) => content.push(ContentBlock::Resource {
                        uri,
                        mime_type: Some("text/plain".to_owned()),
                        text: Some(text),
                    }),
                    Err(_) => problems.push(format!("@{name} is not a text file: not attached")),
                }
            }
        }
        for problem in problems {
            self.note_error(&problem);
        }
        content
    }

    pub(super) fn start_chat(&mut self, prompt: CommandPrompt) {
        let Some(mut session) = self.session.take() else {
            return;
        };
        let cancel = CancellationToken::new();
        let io = ChatIo {
            events: Arc::new(self.events.clone()),
            permissions: Arc::new(self.ask.clone()),
            cancel: cancel.clone(),
            questions: Some(Arc::new(self.ask.clone())),
        };
        let task = tokio::spawn(async move {
            let outcome = session
                .prompt_with(prompt, &ChatOptions::default(), &io)
                .await;
            (session, outcome)
        });
        self.running = Some(Running {
            task,
            cancel,
            started: Instant::now(),
        });
    }

    pub(super) async fn chat_ended(
        &mut self,
        finished: Result<(Session, Result<ChatSummary, AgentError>), tokio::task::JoinError>,
    ) {
        self.running = None;
        self.overlay = None;
        self.waiting_questions.clear();
        match finished {
            Ok((session, _)) => self.session = Some(session),
            Err(error) => {
                self.note_error(&format!("The chat stopped: {error}. A new session starts."));
                if let Err(error) = self.new_session() {
                    self.note_error(&error.to_string());
                }
            }
        }
        self.send_queued().await;
    }

    pub(super) async fn send_queued(&mut self) {
        if let Some(next) = self.queued.pop_front() {
            Box::pin(self.dispatch(next)).await;
        }
    }

    pub(super) fn asked(&mut self, question: Asked) {
        if self.overlay.is_some() {
            self.waiting_questions.push_back(question);
            return;
        }
        self.completion = None;
        self.overlay = Some(match question {
            Asked::Permission(request, answer) => {
                if let Some(whole) = crate::overlay::whole_input(&request, self.palette) {
                    self.conversation.note(whole);
                }
                Overlay::permission(&request, answer, self.palette)
            }
            Asked::Questions(request, answer) => {
                Overlay::Questions(QuestionsOverlay::new(request, answer, self.palette))
            }
        });
    }

    pub(super) fn next_question(&mut self) {
        if let Some(question) = self.waiting_questions.pop_front() {
            self.asked(question);
        }
    }

    pub(super) async fn overlay_outcome(&mut self, outcome: Outcome) {
        match outcome {
            Outcome::Open => return,
            Outcome::Closed => {}
            Outcome::Session(id) => {
                if let Err(error) = self.resume(&id) {
                    self.note_error(&error.to_string());
                }
            }
            Outcome::Model(spec) => self.switch_model(&spec),
            // Its next menu, if any, takes the overlay's place.
            Outcome::Rewind(step) => return self.rewind_step(step).await,
        }
        self.overlay = None;
        self.next_question();
    }
}

/// Whether text reads as a command name (`/name`), not a path (`/usr/bin …`).
fn is_command_word(text: &str) -> bool {
    let word = text.split_whitespace().next().unwrap_or_default();
    word.len() > 1
        && word[1..]
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ':' | '.'))
}
