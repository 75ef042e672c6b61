//! A command line read with bash's grammar (tree-sitter-bash) into what it runs: the simple
//! commands chained with `&&`, `||`, `;`, `&` and newlines, in pipelines, subshells, `{ }`,
//! loops and conditionals, in `$( )`, backticks and `<( )`, in functions, after wrappers
//! (`sudo`, `nohup`, …) and in the scripts of `bash -c`; the files its redirections write; and
//! whether it is *understood*.
//!
//! Understanding is a positive rule: every construct of the line must be one this reader knows
//! runs nothing beyond what it reports. A command name must be a literal word (no expansion, no
//! glob); an argument a literal or an expansion that only reads a value; an assignment before a
//! command must be of a harmless variable; a redirection must name its file; an unquoted
//! here-document must expand nothing the grammar skips. Anything else — a construct the
//! grammar reads differently from bash, or one not listed here — leaves the line not
//! understood, with the reason: no allow rule covers it, and a deny or ask rule asks.

use crate::rules::expansions::{
    arithmetic_expression, braced_expansion_is_safe, is_literal_arithmetic,
};
use crate::rules::programs::{keeps_paths, leaves_arguments_alone, runs};
use crate::rules::runs::Runs;
use crate::rules::variables::{is_harmless_in_environment, is_local_name};
use crate::rules::words::{Word, joins_a_word, text_of, word};
use redirections::fed_input;
use std::collections::HashMap;
use std::ops::ControlFlow;
use std::time::{Duration, Instant};
use tree_sitter::{Node, ParseOptions, ParseState, Parser};

/// How long the grammar may take to read one script of a line.
const PARSE_BUDGET: Duration = Duration::from_millis(500);

/// How deep `bash -c "bash -c …"` is followed.
const MAX_SCRIPT_DEPTH: usize = 4;

/// How many words of a command, from one that may name a command it runs, deny rules see.
const MENTION_WORDS: usize = 16;

/// The most commands a line's arguments may name before they are not checked one by one.
const MAX_POSSIBLE: usize = 4096;

/// The longest command line read: a longer one cannot be given to bash as one argument.
const MAX_LINE_BYTES: usize = 128 * 1024;

/// The most here-documents a line may hold and still be read (the grammar's time grows with
/// the square of their number).
const MAX_HERE_DOCUMENTS: usize = 64;

/// What a command line runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Analysis {
    /// The simple commands (words after assignments): what allow rules must cover.
    pub parts: Vec<Vec<String>>,
    /// Other spellings of those commands that deny and ask rules see too: a wrapper's whole
    /// command line (`nohup rm x` beside `rm x`), a command named by its path with its file name
    /// alone (`rm x` beside `/bin/rm x`).
    pub variants: Vec<Vec<String>>,
    /// Commands a program may run from its arguments when it is not known to leave them alone
    /// (`setsid rm x`, `watch 'rm x'`): deny and ask rules that match one ask.
    pub possible: Vec<Vec<String>>,
    /// The files its redirections write, as written.
    pub writes: Vec<String>,
    /// Why it is not understood, if it is not.
    pub hidden: Option<String>,
    /// Whether it may write a file that cannot be named before it runs.
    pub writes_unseen: bool,
    /// Why a program's arguments may run a command no rule can see, if they may: deny and
    /// ask rules ask.
    pub arguments_unseen: Option<String>,
    /// Whether it changes its working folder (`cd`), after which a relative path is unknown.
    changes_folder: bool,
    /// The simple command nodes read so far, by script depth and node, numbered in order.
    commands: HashMap<(usize, usize), usize>,
    /// The number of the simple command being read.
    current_command: usize,
    /// The simple commands that run a program that may make links or put files in other
    /// files' places (any program not known to keep paths).
    path_changers: Vec<usize>,
    /// For each file of `writes`, the simple command whose redirection it is, if one is.
    write_owners: Vec<Option<usize>>,
    /// Whether some of its commands may run at the same time or again (a pipeline, `&`, a
    /// loop, a function, a substitution), so that their order in the line is not the order
    /// they run in.
    out_of_order: bool,
}

/// Reads `command` as bash would.
pub fn analyse(command: &str) -> Analysis {
    let mut analysis = Analysis::default();
    analysis.script(command, 0);
    if analysis.changes_folder
        && let Some(relative) = analysis
            .writes
            .iter()
            .find(|file| !file.starts_with('/') && !file.starts_with('~'))
    {
        let why = format!(
            "the line changes folder, then writes `{relative}`: which file is only known when it runs"
        );
        analysis.hide_write(why);
    }
    // A program run before a redirection, or beside it, may make the file it names a link
    // first.
    let runs_first = |changer: usize, owner: Option<usize>| match owner {
        Some(owner) if changer == owner => false,
        Some(owner) if !analysis.out_of_order => changer < owner,
        _ => true,
    };
    let changed = analysis
        .writes
        .iter()
        .zip(&analysis.write_owners)
        .find(|(_, owner)| {
            analysis
                .path_changers
                .iter()
                .any(|changer| runs_first(*changer, **owner))
        })
        .map(|(file, _)| file.clone());
    if let Some(file) = changed {
        analysis.hide_write(format!(
            "the line runs a program that may make `{file}` a link before it writes it: which file that is is only known when it runs"
        ));
    }
    analysis
}

impl Analysis {
    fn hide(&mut self, why: impl Into<String>) {
        self.hidden.get_or_insert_with(|| why.into());
    }

    /// Not understood because of a file it writes, which no rule can name.
    fn hide_write(&mut self, why: impl Into<String>) {
        self.writes_unseen = true;
        self.hide(why);
    }

    fn script(&mut self, script: &str, depth: usize) {
        if depth > MAX_SCRIPT_DEPTH {
            return self.hide("shells within shells, too deep to follow");
        }
        if script.len() > MAX_LINE_BYTES {
            return self.hide_write("the command line is longer than bash can be given");
        }
        if script.matches("<<").count() > MAX_HERE_DOCUMENTS {
            return self.hide_write("more here-documents than rules read");
        }
        if let Some(control) = script
            .chars()
            .find(|c| c.is_ascii_control() && !matches!(c, '\t' | '\n'))
        {
            // The grammar takes a carriage return, a vertical tab or a form feed for a blank;
            // bash does not.
            return self.hide_write(format!(
                "a control character ({}) that bash and the grammar read differently",
                control.escape_default()
            ));
        }
        if joins_a_word(script) {
            // Bash joins the lines before reading words; the grammar splits the word there.
            self.hide("a backslash-newline inside a word");
        }
        let mut parser = Parser::new();
        if parser
            .set_language(&tree_sitter_bash::LANGUAGE.into())
            .is_err()
        {
            return self.hide("the bash grammar could not be loaded");
        }
        // The grammar's time grows faster than the line for some inputs (many substitutions
        // in a here-document): past its budget the line is not read.
        let deadline = Instant::now() + PARSE_BUDGET;
        let mut within_budget = |_: &ParseState| {
            if Instant::now() < deadline {
                ControlFlow::Continue(())
            } else {
                ControlFlow::Break(())
            }
        };
        let bytes = script.as_bytes();
        let tree = parser.parse_with_options(
            &mut |at, _| bytes.get(at..).unwrap_or_default(),
            None,
            Some(ParseOptions::new().progress_callback(&mut within_budget)),
        );
        let Some(tree) = tree else {
            return self.hide_write("the command line takes too long to read");
        };
        let root = tree.root_node();
        if root.has_error() {
            // What does parse still counts for deny rules.
            self.hide("the command line does not parse as bash");
        }
        // Depth first, with a stack of its own: a hostile command line may nest deeply.
        let mut stack = vec![root];
        while let Some(node) = stack.pop() {
            self.node(node, script, depth);
            let mut cursor = node.walk();
            let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
            stack.extend(children.into_iter().rev());
        }
    }

    /// One node of the tree: what it runs, and whether it is understood. Its children are
    /// visited after it.
    fn node(&mut self, node: Node<'_>, source: &str, depth: usize) {
        if !node.is_named() {
            // Keywords and punctuation.
            self.out_of_order |= node.kind() == "&";
            return;
        }
        self.out_of_order |= matches!(
            node.kind(),
            "pipeline"
                | "while_statement"
                | "for_statement"
                | "c_style_for_statement"
                | "function_definition"
                | "command_substitution"
                | "process_substitution"
        );
        let text = text_of(node, source);
        match node.kind() {
            "command" => self.command(node, source, depth),
            "variable_assignment" => self.assignment(node, source),
            "declaration_command" => self.declaration(node, source),
            "file_redirect" => self.redirect(node, source, depth),
            "heredoc_redirect" => self.here_document(node, source),
            "test_command" => self.test_command(node, source),
            "for_statement" => {
                if let Some(variable) = node.child_by_field_name("variable") {
                    let name = text_of(variable, source);
                    if !is_local_name(name) {
                        self.hide(format!(
                            "the loop sets `{name}`, which changes what commands do"
                        ));
                    }
                }
            }
            "unset_command" => self.unset(node, source),
            "array" => self.array(node, source),
            "expansion" if !braced_expansion_is_safe(text) => {
                self.hide(format!("the expansion `{text}` may run code"));
            }
            "arithmetic_expansion" | "compound_statement"
                if arithmetic_expression(text).is_some_and(|e| !is_literal_arithmetic(e)) =>
            {
                self.hide(format!(
                    "the arithmetic `{text}` evaluates names, whose subscripts run `$( )`"
                ));
            }
            "c_style_for_statement" => {
                self.hide("`for ((…))` evaluates names as arithmetic");
            }
            "command_substitution" if text.starts_with('`') && text.contains('\\') => {
                self.hide("a backquoted command with backslashes, which bash reads twice");
            }
            "ERROR" => self.hide("the command line does not parse as bash"),
            // Structure, and words whose parts are checked as nodes of their own.
            "program"
            | "list"
            | "pipeline"
            | "subshell"
            | "redirected_statement"
            | "if_statement"
            | "elif_clause"
            | "else_clause"
            | "while_statement"
            | "do_group"
            | "case_statement"
            | "case_item"
            | "negated_command"
            | "function_definition"
            | "comment"
            | "command_name"
            | "variable_assignments"
            | "process_substitution"
            | "command_substitution"
            | "compound_statement"
            | "herestring_redirect"
            | "heredoc_start"
            | "heredoc_body"
            | "heredoc_content"
            | "heredoc_end"
            | "word"
            | "string"
            | "string_content"
            | "raw_string"
            | "ansi_c_string"
            | "number"
            | "concatenation"
            | "translated_string"
            | "brace_expression"
            | "extglob_pattern"
            | "regex"
            | "test_operator"
            | "file_descriptor"
            | "simple_expansion"
            | "variable_name"
            | "special_variable_name"
            | "subscript"
            | "expansion"
            | "arithmetic_expansion"
            | "binary_expression"
            | "unary_expression"
            | "postfix_expression"
            | "ternary_expression"
            | "parenthesized_expression" => {}
            other => self.hide(format!("`{other}` is a construct rules do not read")),
        }
    }

    /// A simple command node: its name and arguments.
    fn command(&mut self, node: Node<'_>, source: &str, depth: usize) {
        let Some(name) = node.child_by_field_name("name") else {
            return;
        };
        self.current_command = self.commands.len() + 1;
        self.commands
            .insert((depth, node.id()), self.current_command);
        let mut cursor = node.walk();
        let words: Vec<Word> = std::iter::once(word(name, source))
            .chain(
                node.children_by_field_name("argument", &mut cursor)
                    .map(|argument| word(argument, source)),
            )
            .collect();
        self.simple_command(&words, depth);
        // What it reads from a here-string or here-document may be commands it runs
        // (`ed -s f <<< '!rm x'`).
        let input: Vec<Word> = std::iter::once(words[0].clone())
            .chain(fed_input(node, source))
            .collect();
        if input.len() > 1 {
            let name = words[0].text.rsplit('/').next().unwrap_or_default();
            self.mentions(name, &input, depth);
        }
    }

    fn simple_command(&mut self, words: &[Word], depth: usize) {
        let Some(first) = words.first() else {
            return;
        };
        if !first.is_exact() {
            return self.hide(format!(
                "`{}` is a command name only known when it runs",
                first.text
            ));
        }
        let texts: Vec<String> = words.iter().map(|w| w.text.clone()).collect();
        let name = first.text.rsplit('/').next().unwrap_or_default();
        if matches!(name, "cd" | "pushd" | "popd") {
            self.changes_folder = true;
        }
        if !keeps_paths(name) && self.path_changers.last() != Some(&self.current_command) {
            self.path_changers.push(self.current_command);
        }
        if name == "nohup" {
            // Its output goes to `nohup.out` when it is a terminal's, as the tool's is.
            let owner = Some(self.current_command);
            self.record_write("nohup.out".to_owned(), owner);
        }
        match runs(name, words) {
            Runs::Nothing => {
                self.part(texts);
                self.mentions(name, words, depth);
            }
            Runs::Wrapped(at) => {
                self.variant(texts);
                self.simple_command(&words[at..], depth);
            }
            Runs::Privileged(at) => {
                self.part(texts);
                self.simple_command(&words[at..], depth);
            }
            Runs::Script(at, unseen) => {
                self.variant(texts);
                if let Some(why) = unseen {
                    self.hide(why);
                }
                match &words[at] {
                    script if script.literal => self.script(&script.text, depth + 1),
                    script => self.hide(format!(
                        "the script `{}` is only known when it runs",
                        script.text
                    )),
                }
            }
            Runs::Hidden(why, commands) => {
                self.part(texts);
                self.hide(why);
                for range in commands {
                    self.simple_command(&words[range], depth);
                }
                self.mentions(name, words, depth);
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

    /// The commands the arguments of `words` may name, for a program not known to leave them
    /// alone: any word of a literal argument may start a command (`setsid rm x`,
    /// `--exec=rm x`, `-c '!rm x'`, `'.shell rm x'`), and one with spaces or operators may be
    /// a command line (`watch 'rm x'`), which, building a name when it runs (`x=r; ${x}m`),
    /// leaves the arguments not seen through.
    fn mentions(&mut self, name: &str, words: &[Word], depth: usize) {
        if leaves_arguments_alone(name) {
            return;
        }
        for (at, argument) in words.iter().enumerate().skip(1) {
            if !argument.literal {
                continue;
            }
            let text = argument.text.as_str();
            if depth < MAX_SCRIPT_DEPTH
                && (text.contains(char::is_whitespace) || text.contains([';', '&', '|', '`', '$']))
            {
                let mut inner = Analysis::default();
                inner.script(text, depth + 1);
                self.possible.extend(inner.parts);
                self.possible.extend(inner.variants);
                self.possible.extend(inner.possible);
                if text.contains(['$', '`'])
                    && let Some(why) = inner.hidden.or(inner.arguments_unseen)
                {
                    self.arguments_unseen
                        .get_or_insert(format!("an argument of `{name}` may run a command: {why}"));
                }
            }
            let tokens = command_words(text);
            for (from, token) in tokens.iter().enumerate() {
                if self.possible.len() >= MAX_POSSIBLE {
                    self.arguments_unseen.get_or_insert(format!(
                        "the arguments of `{name}` name more commands than rules check"
                    ));
                    return;
                }
                if !token.starts_with(|c: char| c.is_ascii_alphanumeric() || "/._~".contains(c)) {
                    continue;
                }
                let mention: Vec<String> = tokens[from..]
                    .iter()
                    .cloned()
                    .chain(words[at + 1..].iter().map(|w| w.text.clone()))
                    .take(MENTION_WORDS)
                    .collect();
                if let Some(short) = by_file_name(&mention) {
                    self.possible.push(short);
                }
                self.possible.push(mention);
            }
        }
    }

    /// `NAME=value`: before a command only a harmless variable; alone, only the line's own.
    fn assignment(&mut self, node: Node<'_>, source: &str) {
        let Some(target) = node.child_by_field_name("name") else {
            return;
        };
        let name = if target.kind() == "subscript" {
            let index = target
                .child_by_field_name("index")
                .map(|index| text_of(index, source))
                .unwrap_or_default();
            if !index.chars().all(|c| c.is_ascii_digit()) || index.is_empty() {
                self.hide(format!(
                    "the subscript of `{}` is evaluated as arithmetic",
                    text_of(target, source)
                ));
            }
            target
                .child_by_field_name("name")
                .map(|name| text_of(name, source))
                .unwrap_or_default()
        } else {
            text_of(target, source)
        };
        match node.parent().map(|parent| parent.kind()) {
            Some("command") if !is_harmless_in_environment(name) => {
                self.hide(format!(
                    "`{name}=` set for a command may change what it does"
                ));
            }
            // Judged with the declaration's options.
            Some("command" | "declaration_command") => {}
            _ if !is_local_name(name) => {
                self.hide(format!("`{name}=` changes what later commands do"));
            }
            _ => {}
        }
    }

    /// `export`, `declare`, `local`, `readonly`, `typeset`: an exported name must be harmless,
    /// an assigned one the line's own; `-i` and `-n` evaluate or redirect later assignments.
    fn declaration(&mut self, node: Node<'_>, source: &str) {
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
        let keyword = children
            .first()
            .map(|k| text_of(*k, source))
            .unwrap_or_default();
        let options: String = children
            .iter()
            .map(|child| text_of(*child, source))
            .filter(|text| text.starts_with('-'))
            .collect();
        if options.contains(['i', 'n']) {
            return self.hide(format!(
                "`{keyword} {options}` makes later assignments evaluate or redirect"
            ));
        }
        let exported = keyword == "export" || options.contains('x');
        for child in children.iter().skip(1) {
            let text = text_of(*child, source);
            let (name, assigned) = match child.kind() {
                "variable_assignment" => {
                    if let Some(why) = declared_value_unseen(*child, source) {
                        self.hide(format!("`{keyword} {text}`: {why}"));
                    }
                    (
                        child
                            .child_by_field_name("name")
                            .map(|name| text_of(name, source))
                            .unwrap_or_default(),
                        true,
                    )
                }
                "variable_name" => (text, false),
                "word" if text.starts_with(['-', '+']) => continue,
                _ => {
                    self.hide(format!(
                        "`{keyword}` is given `{text}`, a name only known when it runs"
                    ));
                    continue;
                }
            };
            let (name, subscript) = name.split_once('[').unwrap_or((name, ""));
            let index = subscript.strip_suffix(']').unwrap_or(subscript);
            if !index.chars().all(|c| c.is_ascii_digit()) {
                self.hide(format!(
                    "the subscript of `{name}[{index}]` is evaluated as arithmetic"
                ));
            }
            if exported && !is_harmless_in_environment(name) {
                self.hide(format!(
                    "exporting `{name}` may change what later commands do"
                ));
            } else if assigned && !is_local_name(name) {
                self.hide(format!(
                    "`{keyword} {name}=` changes what later commands do"
                ));
            }
        }
    }

    /// `unset NAME…`: only the line's own names (with `PATH` unset, bash looks for programs in
    /// the current folder), and no subscript (evaluated as arithmetic).
    fn unset(&mut self, node: Node<'_>, source: &str) {
        let mut cursor = node.walk();
        for argument in node.named_children(&mut cursor) {
            let text = text_of(argument, source);
            if text.starts_with('-') && argument.kind() == "word" {
                continue;
            }
            if !is_local_name(text) {
                self.hide(format!("`unset {text}` may change what later commands do"));
            }
        }
    }

    /// `(a b [2]=c)`: a subscript in an array's elements is evaluated as arithmetic.
    fn array(&mut self, node: Node<'_>, source: &str) {
        let mut cursor = node.walk();
        for element in node.named_children(&mut cursor) {
            let text = text_of(element, source);
            let Some(index) = text
                .strip_prefix('[')
                .and_then(|rest| rest.split_once(']'))
                .map(|(index, _)| index)
            else {
                continue;
            };
            if index.is_empty() || !index.chars().all(|c| c.is_ascii_digit()) {
                self.hide(format!(
                    "the subscript of `{text}` is evaluated as arithmetic"
                ));
            }
        }
    }

    /// `[[ … ]]`: `-eq` and its kin evaluate their operands as arithmetic, and `-v` a subscript.
    fn test_command(&mut self, node: Node<'_>, source: &str) {
        let mut stack = vec![node];
        while let Some(node) = stack.pop() {
            let operator = node
                .child_by_field_name("operator")
                .map(|operator| text_of(operator, source))
                .unwrap_or_default();
            match (node.kind(), operator) {
                ("binary_expression", "-eq" | "-ne" | "-lt" | "-le" | "-gt" | "-ge") => {
                    for side in ["left", "right"] {
                        let operand = node
                            .child_by_field_name(side)
                            .map(|operand| text_of(operand, source))
                            .unwrap_or_default();
                        if !is_number_valued(operand) {
                            self.hide(format!("`{operator}` evaluates `{operand}` as arithmetic"));
                        }
                    }
                }
                ("unary_expression", "-v" | "-R")
                    if text_of(node, source).contains(['[', '$', '`']) =>
                {
                    self.hide(format!("`{operator}` evaluates a subscript as arithmetic"));
                }
                _ => {}
            }
            let mut cursor = node.walk();
            stack.extend(node.named_children(&mut cursor));
        }
    }
}

/// Why the value a declaration assigns (`declare -a a='(…)'`) may run code, if it may: given to
/// an array (`-a`, `-A`, or one the shell already has), a value that is `(…)` once expanded
/// is read again as an array's elements, whose subscripts and substitutions run.
fn declared_value_unseen(assignment: Node<'_>, source: &str) -> Option<&'static str> {
    let value = assignment.child_by_field_name("value")?;
    if value.kind() == "array" {
        // Read as one here, element by element.
        return None;
    }
    let value = word(value, source);
    let may_open_a_list = if value.literal {
        value.text.starts_with('(')
    } else {
        // Its first character is only known when it runs.
        !value
            .text
            .trim_start_matches(['"', '\''])
            .starts_with(|c: char| c.is_ascii_alphanumeric() || matches!(c, '/' | '.' | '-' | '_'))
    };
    may_open_a_list
        .then_some("a declared value that may open with `(` is read again as an array's elements")
}

/// The words of an argument that may each start a command the program runs: quotes and
/// backslashes removed (a shell the program starts joins `r""m` into `rm`), split at every
/// character a command name does not hold (`!rm`, `exec=rm`, `$(shell rm`).
fn command_words(argument: &str) -> Vec<String> {
    let joined: String = argument
        .chars()
        .filter(|c| !matches!(c, '\'' | '"' | '\\'))
        .collect();
    joined
        .split(|c: char| !(c.is_alphanumeric() || "_-./+~".contains(c)))
        .filter(|word| !word.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Whether an operand of `-eq` is a number, or an expansion that is one (`${#x}`, `$#`, `$?`).
fn is_number_valued(operand: &str) -> bool {
    let length = operand
        .strip_prefix("${#")
        .and_then(|rest| rest.strip_suffix('}'))
        .is_some_and(|name| {
            name.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '@' || c == '*')
        });
    length
        || matches!(operand, "$#" | "$?" | "$$" | "$!")
        || (!operand.is_empty() && is_literal_arithmetic(operand))
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

mod redirections;
#[cfg(test)]
mod tests;
