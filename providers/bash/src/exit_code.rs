//! What a command's exit code means. Most commands fail with any code but 0; a few use 1 to
//! answer a question (`grep` found nothing, `diff` found differences, `test` found the
//! condition false), which is an answer for the model, not a failed tool call — as Claude
//! Code treats them.

/// How a finished command's exit code reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Meaning {
    /// It succeeded.
    Success,
    /// It answered "no" (the words say what it means).
    Answer(&'static str),
    /// It failed.
    Failure,
}

/// The commands whose exit code 1 is an answer, and what it says.
const ANSWERS: &[(&str, &str)] = &[
    ("grep", "no lines matched"),
    ("egrep", "no lines matched"),
    ("fgrep", "no lines matched"),
    ("rg", "no lines matched"),
    ("diff", "the files differ"),
    ("cmp", "the files differ"),
    ("test", "the condition is false"),
    ("[", "the condition is false"),
    ("[[", "the condition is false"),
];

/// What `code` means for `command`: judged by the program of its last simple command (the
/// one whose status a pipeline or list returns).
pub fn meaning(command: &str, code: i32) -> Meaning {
    match code {
        0 => Meaning::Success,
        1 => {
            let program = last_program(command);
            ANSWERS
                .iter()
                .find(|(name, _)| Some(*name) == program)
                .map_or(Meaning::Failure, |(_, answer)| Meaning::Answer(answer))
        }
        _ => Meaning::Failure,
    }
}

/// The program of the last simple command of `command` (after the last `|`, `;`, `&&`,
/// `||` or newline), past variable assignments and `!`.
fn last_program(command: &str) -> Option<&str> {
    let last = command
        .rsplit(['|', ';', '&', '\n'])
        .find(|part| !part.trim().is_empty())?;
    last.split_whitespace()
        .find(|word| *word != "!" && !is_assignment(word))
        .map(|word| word.rsplit('/').next().unwrap_or(word))
}

fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// How a foreground command ended.
pub(crate) enum Ending {
    /// It exited, with its code (`None`: killed by a signal).
    Exited(Option<i32>),
    /// It ran out of time.
    TimedOut,
    /// The call was cancelled.
    Cancelled,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_1_answers_for_grep_diff_and_test_and_fails_otherwise() {
        assert_eq!(
            meaning("grep -r foo src", 1),
            Meaning::Answer("no lines matched")
        );
        assert_eq!(
            meaning("cat a | /usr/bin/grep x", 1),
            Meaning::Answer("no lines matched")
        );
        assert_eq!(meaning("diff a b", 1), Meaning::Answer("the files differ"));
        assert_eq!(
            meaning("[ -f x ]", 1),
            Meaning::Answer("the condition is false")
        );
        assert_eq!(
            meaning("cd src && LC_ALL=C test -d x", 1),
            Meaning::Answer("the condition is false")
        );
        assert_eq!(meaning("grep foo src", 2), Meaning::Failure);
        assert_eq!(meaning("grep foo src; false", 1), Meaning::Failure);
        assert_eq!(meaning("cargo build", 1), Meaning::Failure);
        assert_eq!(meaning("anything", 0), Meaning::Success);
    }
}
