//! `${NAME}` in configured strings (headers, API keys) replaced by environment variables, so
//! secrets stay out of configuration files.

/// `text` with each `${NAME}` replaced by the variable `NAME` as `lookup` gives it; a variable
/// that is not set is an error naming it. `$` not followed by `{` stays as it is.
///
/// ```
/// let env = |name: &str| (name == "TOKEN").then(|| "s3cret".to_owned());
/// assert_eq!(agentry_plugin::env_vars::expand_with("Bearer ${TOKEN}", env).unwrap(), "Bearer s3cret");
/// assert!(agentry_plugin::env_vars::expand_with("${MISSING}", env).is_err());
/// ```
pub fn expand_with(text: &str, lookup: impl Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after
            .find('}')
            .ok_or_else(|| format!("`{text}`: `${{` without a closing `}}`"))?;
        let name = &after[..end];
        let value = lookup(name).ok_or_else(|| {
            format!("the environment variable {name} is not set (used in `{text}`)")
        })?;
        out.push_str(&value);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// [`expand_with`] the process's environment.
pub fn expand(text: &str) -> Result<String, String> {
    expand_with(text, |name| std::env::var(name).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variables_are_replaced_and_missing_ones_named() {
        let env = |name: &str| match name {
            "A" => Some("1".to_owned()),
            "B" => Some("two".to_owned()),
            _ => None,
        };
        assert_eq!(expand_with("x${A}y${B}$z", env).unwrap(), "x1ytwo$z");
        assert_eq!(expand_with("plain", env).unwrap(), "plain");
        let missing = expand_with("key ${NOPE}", env).unwrap_err();
        assert!(missing.contains("NOPE is not set"), "{missing}");
        assert!(expand_with("${A", env).unwrap_err().contains("closing"));
    }
}
