//! A search result, the domain filters, and the numbered list the model reads.

use agentry_plugin::domains::host_in_domain;
use serde::Serialize;

/// One result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Hit {
    /// Its title.
    pub title: String,
    /// Its address.
    pub url: String,
    /// What the back-end says of it.
    pub snippet: String,
}

/// `hits` kept when their host is in `allowed` (if any are named) and not in `blocked`.
pub fn filter(hits: Vec<Hit>, allowed: &[String], blocked: &[String]) -> Vec<Hit> {
    hits.into_iter()
        .filter(|hit| {
            let Some(host) = url::Url::parse(&hit.url)
                .ok()
                .and_then(|u| u.host_str().map(str::to_owned))
            else {
                return allowed.is_empty();
            };
            (allowed.is_empty() || allowed.iter().any(|d| host_in_domain(&host, d)))
                && !blocked.iter().any(|d| host_in_domain(&host, d))
        })
        .collect()
}

/// The results as a numbered list: title, address, snippet.
pub fn numbered(query: &str, hits: &[Hit]) -> String {
    if hits.is_empty() {
        return format!("No results for \"{query}\".");
    }
    let mut out = format!("Results for \"{query}\":\n");
    for (n, hit) in hits.iter().enumerate() {
        out.push_str(&format!(
            "\n{}. {}\n   {}\n",
            n + 1,
            hit.title.trim(),
            hit.url
        ));
        let snippet = without_emphasis(hit.snippet.trim()).replace('\n', " ");
        if !snippet.is_empty() {
            out.push_str(&format!("   {snippet}\n"));
        }
    }
    out
}

/// `text` without the emphasis tags search APIs mark matches with (`<strong>`, `<b>`, `<em>`).
fn without_emphasis(text: &str) -> String {
    ["<strong>", "</strong>", "<b>", "</b>", "<em>", "</em>"]
        .iter()
        .fold(text.to_owned(), |text, tag| text.replace(tag, ""))
}
