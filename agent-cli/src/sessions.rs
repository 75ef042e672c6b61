//! `agentry sessions`: the stored sessions, most recent first.

use crate::cli::SessionsArgs;
use crate::exit::{CliError, Exit};

/// Lists the sessions of the configured store.
pub fn list(args: &SessionsArgs) -> Result<Exit, CliError> {
    let cwd = std::env::current_dir().map_err(CliError::internal)?;
    let config = crate::config::load_config(&cwd)?;
    let store = crate::assemble::open_store(&config, args.store.location.as_deref())
        .map_err(CliError::internal)?;
    let sessions = store.list().map_err(CliError::internal)?;
    if args.json {
        let rows: Vec<_> = sessions
            .iter()
            .map(|s| {
                serde_json::json!({
                    "id": s.id, "title": s.title, "cwd": s.cwd,
                    "created_at": s.created_at, "updated_at": s.updated_at,
                })
            })
            .collect();
        println!("{}", serde_json::Value::Array(rows));
    } else {
        for s in &sessions {
            println!(
                "{}\t{}\t{}\t{}",
                s.id,
                s.updated_at,
                s.cwd.display(),
                s.title.as_deref().unwrap_or("(untitled)")
            );
        }
    }
    Ok(Exit::EndTurn)
}
