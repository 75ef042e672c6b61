//! What a line's redirections and here-documents do: the files they write (and the command
//! each belongs to), and what they feed the commands they belong to.

use super::Analysis;
use crate::rules::expansions::unseen_in_here_document;
use crate::rules::runs::lexically_normal;
use crate::rules::variables::is_local_name;
use crate::rules::words::{Word, text_of, word};
use tree_sitter::Node;

/// Files a redirection may write that are not files.
const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/stdout",
    "/dev/stderr",
    "/dev/tty",
    "/dev/fd/1",
    "/dev/fd/2",
];

impl Analysis {
    /// A redirection that writes a file records it; one whose file is only known when it runs
    /// is not understood.
    pub(super) fn redirect(&mut self, node: Node<'_>, source: &str, depth: usize) {
        let mut cursor = node.walk();
        let operator = node
            .children(&mut cursor)
            .find(|child| !child.is_named())
            .map(|child| child.kind())
            .unwrap_or_default();
        let Some(destination) = node.child_by_field_name("destination") else {
            return;
        };
        let target = word(destination, source);
        if let Some(variable) = descriptor_variable(node, source)
            && (!is_local_name(variable) || variable.contains('['))
        {
            self.hide(format!(
                "the redirection `{{{variable}}}` sets `{variable}`, which may change what commands do"
            ));
        }
        let path = lexically_normal(&target.text);
        if path.starts_with("/dev/tcp/") || path.starts_with("/dev/udp/") {
            return self.hide(format!("`{}` opens a network connection", target.text));
        }
        let duplicates = |text: &str| {
            text == "-"
                || text
                    .strip_suffix('-')
                    .unwrap_or(text)
                    .chars()
                    .all(|c| c.is_ascii_digit())
        };
        match operator {
            "<" | "<&" | "<&-" | ">&-" => {}
            ">&" if target.literal && duplicates(&target.text) => {}
            ">" | ">>" | ">|" | "&>" | "&>>" | "<>" | ">&" => {
                let owner = redirected_command(node)
                    .and_then(|command| self.commands.get(&(depth, command.id())).copied());
                self.write(target, owner);
            }
            other => self.hide(format!("the redirection `{other}` is not one rules read")),
        }
    }

    /// A redirection's write to `target`, by the simple command `owner` if it is one's.
    fn write(&mut self, target: Word, owner: Option<usize>) {
        if !target.is_exact() {
            return self.hide_write(format!(
                "writes to `{}`, a file only known when it runs",
                target.text
            ));
        }
        if target.text.starts_with('~') && target.text != "~" && !target.text.starts_with("~/") {
            return self.hide_write(format!("writes to `{}`, in another's home", target.text));
        }
        let path = lexically_normal(&target.text);
        if DEVICES.contains(&path.as_str()) {
            return;
        }
        if path.starts_with("/proc/") || path.starts_with("/dev/fd/") {
            // Which file that is depends on the process that opens it.
            return self.hide_write(format!(
                "writes to `{}`, a file named through a process",
                target.text
            ));
        }
        self.record_write(target.text, owner);
    }

    /// Records a file the line writes, and the simple command whose redirection it is.
    pub(super) fn record_write(&mut self, file: String, owner: Option<usize>) {
        self.writes.push(file);
        self.write_owners.push(owner);
    }

    /// `<<EOF`: an unquoted delimiter expands the body like a double-quoted word.
    pub(super) fn here_document(&mut self, node: Node<'_>, source: &str) {
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
        let delimiter = children
            .iter()
            .find(|child| child.kind() == "heredoc_start")
            .map(|start| text_of(*start, source))
            .unwrap_or_default();
        let Some(quoted) = delimiter_is_quoted(delimiter) else {
            // Bash removes the quotes of `$'EOF'` or `E""OF` and ends the body at `EOF`; the
            // grammar waits for the delimiter as written.
            return self.hide(format!(
                "the here-document delimiter `{delimiter}` is one bash and the grammar read differently"
            ));
        };
        let strips_tabs = children.iter().any(|child| child.kind() == "<<-");
        let bare = delimiter.trim().trim_matches(['\'', '"']);
        let bodies = || {
            children
                .iter()
                .filter(|child| child.kind() == "heredoc_body")
        };
        for body in bodies() {
            // Bash ends the body at the first line that is the delimiter, whatever the grammar
            // read into it (`$(cat <<'X'` in an unquoted body hides the rest from the grammar).
            let ends_early = text_of(*body, source).lines().any(|line| {
                let line = if strips_tabs {
                    line.trim_start_matches('\t')
                } else {
                    line
                };
                line == bare
            });
            if ends_early {
                return self.hide(format!(
                    "a here-document's body holds a line `{bare}`, where bash ends it and the grammar does not"
                ));
            }
        }
        if quoted {
            return;
        }
        for body in bodies() {
            let mut cursor = body.walk();
            let read: Vec<usize> = body
                .named_children(&mut cursor)
                .filter(|child| child.kind() == "command_substitution")
                .map(|child| child.start_byte() - body.start_byte())
                .collect();
            if let Some(why) = unseen_in_here_document(text_of(*body, source), &read) {
                self.hide(why);
            }
        }
    }
}

/// What a simple command is fed on its standard input by here-strings and here-documents.
pub(super) fn fed_input(command: Node<'_>, source: &str) -> Vec<Word> {
    let mut redirects: Vec<Node<'_>> = Vec::new();
    let mut cursor = command.walk();
    redirects.extend(command.children(&mut cursor));
    if let Some(parent) = command
        .parent()
        .filter(|parent| parent.kind() == "redirected_statement")
    {
        let mut cursor = parent.walk();
        redirects.extend(parent.children(&mut cursor));
    }
    redirects
        .into_iter()
        .filter(|redirect| redirected_command(*redirect) == Some(command))
        .filter_map(|redirect| {
            let mut cursor = redirect.walk();
            let children: Vec<Node<'_>> = redirect.named_children(&mut cursor).collect();
            match redirect.kind() {
                "herestring_redirect" => children.last().map(|value| word(*value, source)),
                "heredoc_redirect" => children
                    .iter()
                    .find(|child| child.kind() == "heredoc_body")
                    .map(|body| Word::plain(text_of(*body, source))),
                _ => None,
            }
        })
        .collect()
}

/// The simple command a redirection belongs to (`cmd > file`), if it belongs to one rather
/// than to a group, a loop or the shell (`{ …; } > file`, `exec > file`).
fn redirected_command(redirect: Node<'_>) -> Option<Node<'_>> {
    let parent = redirect.parent()?;
    match parent.kind() {
        "command" => Some(parent),
        "redirected_statement" => parent
            .child_by_field_name("body")
            .filter(|body| body.kind() == "command"),
        _ => None,
    }
}

/// The variable a redirection assigns its descriptor to (`{fd}>file`): the `{NAME}` word right
/// before it, which the grammar reads as an argument.
fn descriptor_variable<'s>(node: Node<'_>, source: &'s str) -> Option<&'s str> {
    let before = source.get(..node.start_byte())?;
    let inner = before.strip_suffix('}')?;
    let open = inner.rfind('{')?;
    let name = &inner[open + 1..];
    let starts_word = inner[..open]
        .chars()
        .next_back()
        .is_none_or(|c| c.is_whitespace() || ";&|()".contains(c));
    (starts_word && !name.contains(char::is_whitespace)).then_some(name)
}

/// Whether a here-document's delimiter (`EOF`, `'EOF'`, `"EOF"`, `-EOF` after `<<-`) is quoted,
/// which keeps its body from expanding; `None` for any other spelling, which bash and the
/// grammar may end at different lines.
fn delimiter_is_quoted(delimiter: &str) -> Option<bool> {
    let bare = |text: &str| {
        !text.is_empty()
            && text
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
    };
    let delimiter = delimiter.trim();
    if bare(delimiter) {
        return Some(false);
    }
    let quoted = ['\'', '"'].iter().any(|quote| {
        delimiter
            .strip_prefix(*quote)
            .and_then(|rest| rest.strip_suffix(*quote))
            .is_some_and(bare)
    });
    quoted.then_some(true)
}
