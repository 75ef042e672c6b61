//! Who may connect to a server agentry runs on a port: the token (given, kept in the data
//! folder, or made there on first use) and the names and origins allowed.

use crate::cli::AccessArgs;
use crate::exit::CliError;
use agentry_admission::Admission;
use std::io::Write;
use std::net::SocketAddr;
use std::path::Path;

/// The name of the token file in the data folder.
const TOKEN_FILE: &str = "server-token";

/// The admission rules of a server listening on `listen`, with `data_folder` holding its token.
pub fn admission(
    args: &AccessArgs,
    listen: SocketAddr,
    allowed_origins: &[String],
    data_folder: &Path,
) -> Result<Admission, CliError> {
    let token = if args.no_auth {
        if !listen.ip().is_loopback() {
            return Err(CliError::usage(anyhow::anyhow!(
                "--no-auth is refused on {listen}, which other machines reach: give a --token"
            )));
        }
        eprintln!(
            "agentry: warning: --no-auth: every account on this machine can drive the agent on {listen}"
        );
        None
    } else {
        Some(match (&args.token, &args.token_file) {
            (Some(token), _) => token.clone(),
            (None, Some(file)) => token_in(file)?,
            (None, None) => kept_token(data_folder)?,
        })
    };
    Ok(Admission::new(
        token,
        listen,
        &args.allow_host,
        allowed_origins,
    ))
}

/// The token in the file `--token-file` names.
fn token_in(file: &Path) -> Result<String, CliError> {
    let token = std::fs::read_to_string(file).map_err(|error| {
        CliError::usage(anyhow::anyhow!(
            "cannot read the token file {}: {error}",
            file.display()
        ))
    })?;
    let token = token.trim();
    if token.is_empty() {
        return Err(CliError::usage(anyhow::anyhow!(
            "the token file {} is empty",
            file.display()
        )));
    }
    Ok(token.to_owned())
}

/// The token kept in the data folder, made (readable by the user alone) on first use.
fn kept_token(data_folder: &Path) -> Result<String, CliError> {
    let file = data_folder.join(TOKEN_FILE);
    match std::fs::read_to_string(&file) {
        Ok(token) if !token.trim().is_empty() => return Ok(token.trim().to_owned()),
        Ok(_) => {}
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
        Err(error) => {
            return Err(CliError::usage(anyhow::anyhow!(
                "cannot read the server token {}: {error}",
                file.display()
            )));
        }
    }
    let token = format!(
        "{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    );
    agentry_plugin::private::folder(data_folder).map_err(CliError::internal)?;
    let mut out = agentry_plugin::private::file_options()
        .write(true)
        .create(true)
        .truncate(true)
        .open(&file)
        .map_err(|e| {
            CliError::usage(anyhow::anyhow!(
                "cannot keep the server token in {}: {e}",
                file.display()
            ))
        })?;
    out.write_all(token.as_bytes())
        .map_err(CliError::internal)?;
    Ok(token)
}
