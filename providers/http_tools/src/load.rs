//! Building the configured tools: plain endpoints from what the entry declares, LangServe
//! runnables from the schema they publish (`GET {base}/input_schema`), and several runnables
//! under one base from the paths named (or found in the base's `openapi.json`).

use crate::settings::HttpToolEntry;
use crate::tool::{Endpoint, HttpTool, client};
use agentry_plugin::tool::ToolKind;
use serde_json::{Map, Value, json};
use std::time::Duration;

/// The environment `${NAME}` is read from.
pub type Env<'a> = &'a (dyn Fn(&str) -> Option<String> + Sync);

/// The tools of `entries`; an entry that cannot be used is left out and said why.
/// No entries make no HTTP client (which reads the system's certificates, milliseconds).
pub async fn tools(entries: &[HttpToolEntry], env: Env<'_>) -> (Vec<HttpTool>, Vec<String>) {
    if entries.is_empty() {
        return (Vec::new(), Vec::new());
    }
    let client = match client() {
        Ok(client) => client,
        Err(error) => return (Vec::new(), vec![format!("[[http_tools]]: {error}")]),
    };
    let mut tools = Vec::new();
    let mut problems = Vec::new();
    for (index, entry) in entries.iter().enumerate() {
        let label = entry
            .name
            .clone()
            .or_else(|| entry.langserve.clone())
            .unwrap_or_else(|| format!("entry {}", index + 1));
        match entry_tools(entry, env, &client).await {
            Ok(built) => tools.extend(built),
            Err(problem) => problems.push(format!("[[http_tools]] {label}: {problem}")),
        }
    }
    (tools, problems)
}

async fn entry_tools(
    entry: &HttpToolEntry,
    env: Env<'_>,
    client: &reqwest::Client,
) -> Result<Vec<HttpTool>, String> {
    let expand = |text: &str| agentry_plugin::env_vars::expand_with(text, |name| env(name));
    let headers = entry
        .headers
        .iter()
        .map(|(name, value)| Ok((name.clone(), expand(value)?)))
        .collect::<Result<Vec<_>, String>>()?;
    let kind = match &entry.kind {
        Some(kind) => kind.parse::<ToolKind>().map_err(|_| {
            format!("kind `{kind}` is not a tool kind (fetch, read, search, execute, edit, other)")
        })?,
        None => ToolKind::Fetch,
    };
    let timeout = Duration::from_secs(entry.timeout_secs.unwrap_or(60));
    let tool = |name: String, description: String, input_schema: Value, endpoint: Endpoint| {
        check_name(&name)?;
        Ok::<_, String>(HttpTool {
            name,
            description,
            kind,
            input_schema,
            endpoint,
            headers: headers.clone(),
            timeout,
            client: client.clone(),
        })
    };
    match (&entry.url, &entry.langserve) {
        (Some(url), None) => {
            let name = entry.name.clone().ok_or("a plain endpoint needs a name")?;
            let get = entry
                .method
                .as_deref()
                .is_some_and(|m| m.eq_ignore_ascii_case("GET"));
            if let Some(method) = &entry.method
                && !matches!(method.to_ascii_uppercase().as_str(), "GET" | "POST")
            {
                return Err(format!("method `{method}`: GET or POST"));
            }
            let schema = entry
                .input_schema
                .clone()
                .unwrap_or_else(|| json!({"type": "object", "properties": {}}));
            if schema.get("type").and_then(Value::as_str) != Some("object") {
                return Err(
                    "input_schema must describe an object (\"type\": \"object\")".to_owned(),
                );
            }
            let endpoint = Endpoint::Plain {
                url: expand(url)?,
                get,
            };
            Ok(vec![tool(
                name,
                entry.description.clone().unwrap_or_default(),
                schema,
                endpoint,
            )?])
        }
        (None, Some(base)) => {
            let base = expand(base)?.trim_end_matches('/').to_owned();
            let paths = match entry.tools.as_slice() {
                [] => vec![String::new()],
                [all] if all == "*" => runnables_in(client, &base, &headers).await?,
                named => named
                    .iter()
                    .map(|p| p.trim_matches('/').to_owned())
                    .collect(),
            };
            let mut built = Vec::new();
            for path in paths {
                let runnable = if path.is_empty() {
                    base.clone()
                } else {
                    format!("{base}/{path}")
                };
                let published =
                    get_json(client, &format!("{runnable}/input_schema"), &headers).await?;
                let (schema, wrapped) = as_object_schema(published.clone());
                let name = match (&entry.name, path.is_empty()) {
                    (Some(name), true) => name.clone(),
                    (Some(prefix), false) => format!("{prefix}_{}", path.replace('/', "_")),
                    (None, true) => last_segment(&base),
                    (None, false) => path.replace('/', "_"),
                };
                let description = entry
                    .description
                    .clone()
                    .filter(|_| path.is_empty())
                    .or_else(|| {
                        published
                            .get("description")
                            .and_then(Value::as_str)
                            .map(str::to_owned)
                    })
                    .unwrap_or_else(|| format!("Runs the LangServe runnable at {runnable}."));
                built.push(tool(
                    name,
                    description,
                    schema,
                    Endpoint::LangServe {
                        base: runnable,
                        wrapped,
                    },
                )?);
            }
            Ok(built)
        }
        (Some(_), Some(_)) => {
            Err("give either url (a plain endpoint) or langserve, not both".to_owned())
        }
        (None, None) => {
            Err("give url (a plain endpoint) or langserve (a LangServe base)".to_owned())
        }
    }
}

/// A name models accept: 1–64 of letters, digits, `_` and `-`.
fn check_name(name: &str) -> Result<(), String> {
    let fits = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if fits {
        Ok(())
    } else {
        Err(format!(
            "`{name}` is not a tool name (1–64 letters, digits, _ or -)"
        ))
    }
}

fn last_segment(base: &str) -> String {
    url::Url::parse(base)
        .ok()
        .and_then(|url| {
            url.path_segments()?
                .rfind(|s| !s.is_empty())
                .map(str::to_owned)
        })
        .unwrap_or_else(|| "runnable".to_owned())
        .replace(
            |c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'),
            "_",
        )
}

/// The runnables a LangServe app serves: the paths of its OpenAPI document ending in `/invoke`.
async fn runnables_in(
    client: &reqwest::Client,
    base: &str,
    headers: &[(String, String)],
) -> Result<Vec<String>, String> {
    let document = get_json(client, &format!("{base}/openapi.json"), headers).await?;
    let paths = document
        .get("paths")
        .and_then(Value::as_object)
        .ok_or("its openapi.json has no paths")?;
    let mut found: Vec<String> = paths
        .keys()
        .filter_map(|path| path.strip_suffix("/invoke"))
        .map(|path| path.trim_matches('/').to_owned())
        .filter(|path| !path.contains('{'))
        .collect();
    found.sort();
    found.dedup();
    if found.is_empty() {
        return Err("its openapi.json lists no …/invoke paths".to_owned());
    }
    Ok(found)
}

async fn get_json(
    client: &reqwest::Client,
    url: &str,
    headers: &[(String, String)],
) -> Result<Value, String> {
    let request = headers
        .iter()
        .fold(client.get(url), |request, (name, value)| {
            request.header(name, value)
        })
        .timeout(Duration::from_secs(30));
    let response = request
        .send()
        .await
        .map_err(|e| format!("GET {url}: {e}"))?;
    let status = response.status();
    let body = response
        .text()
        .await
        .map_err(|e| format!("GET {url}: {e}"))?;
    if !status.is_success() {
        return Err(format!(
            "GET {url} answered {status}: {}",
            body.chars().take(200).collect::<String>()
        ));
    }
    serde_json::from_str(&body).map_err(|e| format!("GET {url}: not JSON ({e})"))
}

/// A runnable's input schema as an object schema models take: an object schema as it is; any
/// other wrapped as the `input` property (its definitions moved to the top, where its
/// references look for them). Whether it was wrapped.
pub fn as_object_schema(schema: Value) -> (Value, bool) {
    if schema.get("type").and_then(Value::as_str) == Some("object") {
        return (schema, false);
    }
    let mut inner = match schema {
        Value::Object(map) => map,
        other => {
            let mut map = Map::new();
            map.insert("const".to_owned(), other);
            map
        }
    };
    let mut wrapper = Map::new();
    for key in ["definitions", "$defs"] {
        if let Some(definitions) = inner.remove(key) {
            wrapper.insert(key.to_owned(), definitions);
        }
    }
    wrapper.insert("type".to_owned(), json!("object"));
    wrapper.insert(
        "properties".to_owned(),
        json!({"input": Value::Object(inner)}),
    );
    wrapper.insert("required".to_owned(), json!(["input"]));
    (Value::Object(wrapper), true)
}
