//! An `http` hook's run: a POST of the event's JSON to the hook's address alone (redirects are
//! not followed, so nothing goes to a host the hook does not name), with its headers —
//! `$VAR` and `${VAR}` in them taken from the environment only for the variables the hook's
//! `allowedEnvVars` names, others left empty. A 2xx reply's body is read as a command's
//! stdout; any other status, or no reply, is a failure the user is told of.

use super::output::Ran;
use std::collections::BTreeMap;
use std::time::Duration;

/// POSTs `input` to `url`.
pub(crate) async fn run(
    url: &str,
    headers: &BTreeMap<String, String>,
    allowed_env_vars: &[String],
    input: &str,
    timeout: Duration,
) -> Ran {
    let client = match reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(timeout)
        .build()
    {
        Ok(client) => client,
        Err(error) => return Ran::Unstartable(error.to_string()),
    };
    let mut request = client
        .post(url)
        .header("content-type", "application/json")
        .body(input.to_owned());
    for (name, value) in headers {
        request = request.header(name, interpolated(value, allowed_env_vars));
    }
    match request.send().await {
        Ok(response) if response.status().is_success() => {
            Ran::Exited(0, response.text().await.unwrap_or_default(), String::new())
        }
        Ok(response) => {
            let status = response.status();
            let body = response.text().await.unwrap_or_default();
            Ran::Unstartable(format!("{url} answered {status}: {}", body.trim()))
        }
        Err(error) if error.is_timeout() => Ran::TimedOut(timeout),
        Err(error) => Ran::Unstartable(error.to_string()),
    }
}

/// `value` with `$VAR` and `${VAR}` replaced: by the variable's value when `allowed` names it,
/// by nothing when not.
fn interpolated(value: &str, allowed: &[String]) -> String {
    let is_name = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut out = String::new();
    let mut rest = value;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let (name, tail) = match after.strip_prefix('{') {
            Some(braced) => match braced.find('}') {
                Some(end) if braced[..end].chars().all(is_name) => {
                    (&braced[..end], &braced[end + 1..])
                }
                _ => ("", after),
            },
            None => {
                let end = after.find(|c: char| !is_name(c)).unwrap_or(after.len());
                (&after[..end], &after[end..])
            }
        };
        if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
            out.push('$');
            rest = after;
            continue;
        }
        if allowed.iter().any(|allowed| allowed == name) {
            out.push_str(&std::env::var(name).unwrap_or_default());
        }
        rest = tail;
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_allowed_variables_reach_the_headers() {
        let allowed = vec!["PATH".to_owned()];
        let path = std::env::var("PATH").unwrap();
        assert_eq!(
            interpolated("Bearer ${PATH}", &allowed),
            format!("Bearer {path}")
        );
        assert_eq!(interpolated("$PATH/x", &allowed), format!("{path}/x"));
        assert_eq!(interpolated("Bearer $HOME", &allowed), "Bearer ");
        assert_eq!(interpolated("a ${HOME} b", &allowed), "a  b");
        assert_eq!(interpolated("costs $5 or $", &allowed), "costs $5 or $");
    }
}
