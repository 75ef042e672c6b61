//! Markdown documents that start with YAML front matter between `---` lines: prompt templates,
//! sub-agent definitions, skills. Errors give the line in the whole file.

use serde::de::DeserializeOwned;

/// Why a document's front matter cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{message}", line.map(|l| format!("line {l}: ")).unwrap_or_default())]
pub struct FrontMatterError {
    /// The line of the file the problem is on, when known.
    pub line: Option<u64>,
    /// What is wrong.
    pub message: String,
}

/// Splits `---`-fenced front matter from the body; `None` when the text has none.
pub fn split(text: &str) -> (Option<&str>, &str) {
    let Some(after_open) = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
    else {
        return (None, text);
    };
    let mut offset = 0;
    for line in after_open.split_inclusive('\n') {
        if line.trim_end() == "---" {
            let body = &after_open[offset + line.len()..];
            return (Some(&after_open[..offset]), body);
        }
        offset += line.len();
    }
    (None, text)
}

/// The front matter read as `T` (its default when there is none or it is empty), and the body.
pub fn read<T: DeserializeOwned + Default>(text: &str) -> Result<(T, &str), FrontMatterError> {
    let (front, body) = split(text);
    let front = match front {
        Some(yaml) if !yaml.trim().is_empty() => {
            serde_saphyr::from_str(yaml).map_err(|error: serde_saphyr::Error| {
                // The front matter starts on the file's second line.
                let line = error
                    .location()
                    .map(|location| location.line() + 1)
                    .filter(|&line| line > 1);
                let message = error.to_string();
                let message = message.lines().next().unwrap_or_default().to_owned();
                FrontMatterError { line, message }
            })?
        }
        _ => T::default(),
    };
    Ok((front, body))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Default, PartialEq, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Front {
        name: Option<String>,
        count: Option<u32>,
    }

    #[test]
    fn front_matter_and_body_are_split_and_read() {
        let (front, body) = read::<Front>("---\nname: x\ncount: 3\n---\nBody\n").unwrap();
        assert_eq!(
            front,
            Front {
                name: Some("x".into()),
                count: Some(3)
            }
        );
        assert_eq!(body, "Body\n");
        let (front, body) = read::<Front>("No front matter\n").unwrap();
        assert_eq!((front, body), (Front::default(), "No front matter\n"));
    }

    #[test]
    fn errors_name_the_line_of_the_file() {
        let error = read::<Front>("---\nname: x\ncount: many\n---\nBody\n").unwrap_err();
        assert_eq!(error.line, Some(3), "{error}");
        assert!(error.to_string().starts_with("line 3: "), "{error}");
    }
}
