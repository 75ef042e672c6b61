//! A program's options read as its own parser reads them, from the list of options it has. An
//! option not on the list — an abbreviated long option (`--sp=` for `--split-string=`), a
//! cluster holding a letter the list lacks (`-iS`), a word only known when it runs (`"$p"`) —
//! is not read: the command is then not understood, whatever that option would have done.

use crate::rules::words::Word;

/// The options a program has.
pub struct OptionSpec {
    /// Short options that take no value (`-i`), which may be clustered (`-it`).
    pub flags: &'static str,
    /// Short options that take a value: the rest of the word (`-uNAME`) or the next word.
    pub values: &'static str,
    /// Long options that take no value, without their dashes.
    pub long_flags: &'static [&'static str],
    /// Long options that take a value (`--name=VALUE` or `--name VALUE`), without dashes.
    pub long_values: &'static [&'static str],
}

/// One option as given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GivenOption {
    /// Its name: the letter of a short option, the name of a long one.
    pub name: String,
    /// Its value, for an option that takes one.
    pub value: Option<Word>,
}

/// The options at the start of `words[start..]`, and where the operands start (after `--`,
/// at the first word that is not an option, or at `-` alone); or the word that is not an
/// option the program has.
pub fn read_options(
    words: &[Word],
    start: usize,
    spec: &OptionSpec,
) -> Result<(Vec<GivenOption>, usize), String> {
    let mut given = Vec::new();
    let mut at = start;
    while let Some(word) = words.get(at) {
        let text = word.text.as_str();
        if !word.literal {
            // It might start with a dash once it runs.
            return Err(text.to_owned());
        }
        if text == "--" {
            return Ok((given, at + 1));
        }
        if !text.starts_with('-') || text == "-" {
            return Ok((given, at));
        }
        if let Some(long) = text.strip_prefix("--") {
            let (name, attached) = match long.split_once('=') {
                Some((name, value)) => (name, Some(value)),
                None => (long, None),
            };
            if spec.long_flags.contains(&name) && attached.is_none() {
                given.push(option(name, None));
                at += 1;
                continue;
            }
            if !spec.long_values.contains(&name) {
                return Err(text.to_owned());
            }
            let value = match attached {
                Some(value) => Some(Word {
                    text: value.to_owned(),
                    ..word.clone()
                }),
                None => {
                    at += 1;
                    Some(words.get(at).ok_or_else(|| text.to_owned())?.clone())
                }
            };
            given.push(option(name, value));
            at += 1;
            continue;
        }
        let letters = &text[1..];
        for (index, letter) in letters.char_indices() {
            if spec.flags.contains(letter) {
                given.push(option(&letter.to_string(), None));
                continue;
            }
            if !spec.values.contains(letter) {
                return Err(text.to_owned());
            }
            let rest = &letters[index + letter.len_utf8()..];
            let value = if rest.is_empty() {
                at += 1;
                words.get(at).ok_or_else(|| text.to_owned())?.clone()
            } else {
                Word {
                    text: rest.to_owned(),
                    ..word.clone()
                }
            };
            given.push(option(&letter.to_string(), Some(value)));
            break;
        }
        at += 1;
    }
    Ok((given, at))
}

fn option(name: &str, value: Option<Word>) -> GivenOption {
    GivenOption {
        name: name.to_owned(),
        value,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ENV: OptionSpec = OptionSpec {
        flags: "i0",
        values: "u",
        long_flags: &["ignore-environment", "null"],
        long_values: &["unset"],
    };

    fn words(line: &str) -> Vec<Word> {
        line.split(' ').map(Word::plain).collect()
    }

    fn names(given: &[GivenOption]) -> Vec<String> {
        given
            .iter()
            .map(|option| match &option.value {
                Some(value) => format!("{}={}", option.name, value.text),
                None => option.name.clone(),
            })
            .collect()
    }

    #[test]
    fn options_are_read_as_the_program_reads_them() {
        let (given, at) =
            read_options(&words("env -iu A -uB --unset=C --null x"), 1, &ENV).unwrap();
        assert_eq!(names(&given), ["i", "u=A", "u=B", "unset=C", "null"]);
        assert_eq!(at, 6);
        let (given, at) = read_options(&words("env -- -i"), 1, &ENV).unwrap();
        assert!(given.is_empty());
        assert_eq!(at, 2);
        assert_eq!(read_options(&words("env - x"), 1, &ENV).unwrap().1, 1);
    }

    #[test]
    fn an_option_the_program_lacks_or_an_abbreviation_is_not_read() {
        for line in [
            "env -S x",
            "env -iS x",
            "env --split-string=x",
            "env --sp=x",
            "env --ignore",
            "env -C dir x",
            "env -u",
        ] {
            assert!(read_options(&words(line), 1, &ENV).is_err(), "{line}");
        }
        let unknown = vec![
            Word::plain("env"),
            Word {
                text: "\"$p\"".to_owned(),
                literal: false,
                pattern: false,
            },
        ];
        assert!(read_options(&unknown, 1, &ENV).is_err());
    }
}
