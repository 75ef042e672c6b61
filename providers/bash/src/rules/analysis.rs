//! A command line read with bash's grammar (tree-sitter-bash) into the simple commands it runs:
//! those chained with `&&`, `||`, `;`, `&` and newlines, in pipelines, subshells, `{ }`,
//! loops and conditionals, in `$( )`, backticks and `<( )`, in functions, after wrappers
//! (`sudo`, `xargs`, `find -exec`, …) and in the scripts of `bash -c`; and what it does that no
//! rule can see.

use crate::rules::words::{Word, text_of, word};
use crate::rules::wrappers::{DANGEROUS_VARIABLES, Runs, runs};
use tree_sitter::{Node, Parser};

/// How deep `bash -c "bash -c …"` is followed.
const MAX_SCRIPT_DEPTH: usize = 4;

/// What a command line runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Analysis {
    /// The simple commands (words after assignments), and each file an output redirection
    /// writes (as `>` and the file): what allow rules must cover.
    pub parts: Vec<Vec<String>>,
    /// Other spellings of those commands that deny and ask rules see too: a wrapper's whole
    /// command line (`nohup rm x` beside `rm x`), a command named by its path with its file name
    /// alone (`rm x` beside `/bin/rm x`).
    pub variants: Vec<Vec<String>>,
    /// Why part of it cannot be seen, if it cannot.
    pub hidden: Option<String>,
}

/// Reads `command` as bash would.
pub fn analyse(command: &str) -> Analysis {
    let mut analysis = Analysis::default();
    analysis.script(command, 0);
    analysis
}

impl Analysis {
    fn hide(&mut self, why: impl Into<String>) {
        self.hidden.get_or_insert_with(|| why.into());
    }

    fn script(&mut self, script: &str, depth: usize) {
        if depth > MAX_SCRIPT_DEPTH {
            return self.hide("shells within shells, too deep to follow");
        }
        let mut parser = Parser::new();
        if parser
            .set_language(&tree_sitter_bash::LANGUAGE.into())
            .is_err()
        {
            return self.hide("the bash grammar could not be loaded");
        }
        let Some(tree) = parser.parse(script, None) else {
            return self.hide("the command line could not be read");
        };
        let root = tree.root_node();
        if root.has_error() {
            // What does parse still counts for deny rules.
            self.hide("the command line does not parse as bash");
        }
        // Depth first, with a stack of its own: a hostile command line may nest deeply.
        let mut stack = vec![root];
        while let Some(node) = stack.pop() {
            match node.kind() {
                "command" => self.command(node, script, depth),
                "variable_assignment" => self.assignment(node, script),
                "file_redirect" => self.redirect(node, script),
                _ => {}
            }
            let mut cursor = node.walk();
            let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
            stack.extend(children.into_iter().rev());
        }
    }

    /// A simple command node: its name and arguments.
    fn command(&mut self, node: Node<'_>, source: &str, depth: usize) {
        let Some(name) = node.child_by_field_name("name") else {
            return;
        };
        let mut cursor = node.walk();
        let words: Vec<Word> = std::iter::once(word(name, source))
            .chain(
                node.children_by_field_name("argument", &mut cursor)
                    .map(|argument| word(argument, source)),
            )
            .collect();
        self.simple_command(&words, depth);
    }

    fn simple_command(&mut self, words: &[Word], depth: usize) {
        let Some(first) = words.first() else {
            return;
        };
        if !first.literal {
            return self.hide(format!(
                "`{}` is a command name only known when it runs",
                first.text
            ));
        }
        let texts: Vec<String> = words.iter().map(|w| w.text.clone()).collect();
        let name = first.text.rsplit('/').next().unwrap_or_default();
        match runs(name, words) {
            Runs::Nothing => self.part(texts),
            Runs::Wrapped(at) => {
                self.variant(texts);
                self.simple_command(&words[at..], depth);
            }
            Runs::Privileged(at) => {
                self.part(texts);
                self.simple_command(&words[at..], depth);
            }
            Runs::Also(commands) => {
                self.part(texts);
                for range in commands {
                    self.simple_command(&words[range], depth);
                }
            }
            Runs::Script(at) => {
                self.variant(texts);
                match &words[at] {
                    Word {
                        text,
                        literal: true,
                    } => self.script(text, depth + 1),
                    Word { text, .. } => {
                        self.hide(format!("the script `{text}` is only known when it runs"))
                    }
                }
            }
            Runs::Hidden(why) => {
                self.part(texts);
                self.hide(why);
            }
        }
    }

    /// A simple command that allow rules must cover; named by a path, deny rules also see it
    /// by its file name.
    fn part(&mut self, words: Vec<String>) {
        if let Some(short) = by_file_name(&words) {
            self.variants.push(short);
        }
        self.parts.push(words);
    }

    /// A spelling of a command that only deny and ask rules see.
    fn variant(&mut self, words: Vec<String>) {
        if let Some(short) = by_file_name(&words) {
            self.variants.push(short);
        }
        self.variants.push(words);
    }

    /// `NAME=value`: a name that changes which program runs hides what follows.
    fn assignment(&mut self, node: Node<'_>, source: &str) {
        let name = node
            .child_by_field_name("name")
            .map(|name| text_of(name, source))
            .unwrap_or_default();
        if DANGEROUS_VARIABLES.contains(&name) {
            self.hide(format!("`{name}=` changes which program a command runs"));
        }
    }

    /// A redirection that writes a file is a part of its own: `>` and the file.
    fn redirect(&mut self, node: Node<'_>, source: &str) {
        let mut cursor = node.walk();
        let writes = node
            .children(&mut cursor)
            .any(|child| matches!(child.kind(), ">" | ">>" | ">|" | "&>" | "&>>" | "<>"));
        let Some(destination) = node.child_by_field_name("destination") else {
            return;
        };
        let target = word(destination, source).text;
        let harmless = matches!(
            target.as_str(),
            "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/tty" | "-"
        ) || target.chars().all(|c| c.is_ascii_digit());
        if writes && !harmless {
            self.parts.push(vec![">".to_owned(), target]);
        }
    }
}

/// The command with its name's file name alone, when its name is a path (`/bin/rm` → `rm`).
fn by_file_name(words: &[String]) -> Option<Vec<String>> {
    let (name, rest) = words.split_first()?;
    let short = name.rsplit('/').next().filter(|short| *short != name)?;
    Some(
        std::iter::once(short.to_owned())
            .chain(rest.iter().cloned())
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(command: &str) -> Vec<String> {
        analyse(command)
            .parts
            .iter()
            .map(|words| words.join(" "))
            .collect()
    }

    #[test]
    fn every_simple_command_is_found() {
        assert_eq!(
            parts("echo hi && rm -f victim"),
            ["echo hi", "rm -f victim"]
        );
        assert_eq!(
            parts("a | b || c; d & e\nf"),
            ["a", "b", "c", "d", "e", "f"]
        );
        assert_eq!(
            parts("echo $(rm x) `ls`"),
            ["echo $(rm x) `ls`", "rm x", "ls"]
        );
        assert_eq!(parts("(cd a && make) ; { b; }"), ["cd a", "make", "b"]);
        assert_eq!(parts("diff <(sort a) b"), ["diff <(sort a) b", "sort a"]);
        assert_eq!(parts("for f in *; do rm \"$f\"; done"), ["rm \"$f\""]);
        assert_eq!(parts("f() { rm x; }; f"), ["rm x", "f"]);
        assert_eq!(parts("FOO=1 BAR=2 make all"), ["make all"]);
        assert_eq!(
            parts("bash -c 'git status && rm x'"),
            ["git status", "rm x"]
        );
        assert_eq!(parts("echo \"$(rm x)\""), ["echo \"$(rm x)\"", "rm x"]);
        assert_eq!(parts("cat <<EOF\n$(rm x)\nEOF"), ["cat", "rm x"]);
    }

    #[test]
    fn quoting_and_escapes_give_the_words_bash_runs() {
        assert_eq!(parts(r"r\m -f x"), ["rm -f x"]);
        assert_eq!(parts(r#""rm" -f 'a b'"#), ["rm -f a b"]);
        assert_eq!(parts("'r'm x"), ["rm x"]);
        assert_eq!(parts(r"$'\x72m' x"), ["rm x"]);
    }

    #[test]
    fn wrappers_paths_and_redirections() {
        let sudo = analyse("sudo rm x");
        assert_eq!(sudo.parts, [vec!["sudo", "rm", "x"], vec!["rm", "x"]]);
        let nohup = analyse("nohup /bin/rm x > log 2>&1");
        assert_eq!(nohup.parts, [vec!["/bin/rm", "x"], vec![">", "log"]]);
        assert!(
            nohup
                .variants
                .contains(&vec!["rm".to_owned(), "x".to_owned()])
        );
        assert!(nohup.variants.contains(&vec![
            "nohup".to_owned(),
            "/bin/rm".to_owned(),
            "x".to_owned()
        ]));
        assert_eq!(parts("ls > /dev/null 2>&1"), ["ls"]);
        assert_eq!(
            parts("find . -exec rm {} \\;"),
            ["find . -exec rm {} ;", "rm {}"]
        );
    }

    #[test]
    fn what_no_rule_can_see_is_hidden() {
        for hidden in [
            "eval 'rm x'",
            "$CMD x",
            "$(echo rm) x",
            "bash -c \"$S\"",
            "echo rm x | bash",
            "PATH=/tmp ls",
            "export PATH=/tmp; ls",
            "echo (",
            "env -S 'rm x'",
        ] {
            assert!(analyse(hidden).hidden.is_some(), "{hidden}");
        }
        for seen in ["echo $HOME", "ls -la", "git commit -m \"$(date)\""] {
            assert_eq!(analyse(seen).hidden, None, "{seen}");
        }
    }
}
