//! Downloading a built plugin library: over https (http only from loopback), redirects only to
//! such URLs, into a temporary file beside where it will be installed, hashed as it arrives. A
//! download whose SHA-256 is not the one given is deleted: nothing is installed.

use super::error::InstallError;
use super::source::is_loopback;
use agentry_plugin::error_text::with_causes;
use futures::StreamExt as _;
use reqwest::Url;
use sha2::{Digest, Sha256};
use std::io::Write as _;
use std::path::Path;

/// The largest library downloaded.
const MAX_BYTES: u64 = 1 << 30;
/// The most redirects followed.
const MAX_REDIRECTS: usize = 5;
/// How long a server may take to accept the connection.
const CONNECT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);
/// How long a server may stay silent in the middle of the download.
const READ_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// Downloads `url` into a temporary file in `folder` and checks it against `sha256`.
pub async fn download(
    url: &Url,
    sha256: &str,
    folder: &Path,
) -> Result<tempfile::NamedTempFile, InstallError> {
    let failed = |message: String| InstallError::Download {
        url: url.to_string(),
        message,
    };
    // Plain http stays where it started: a download from this machine may be redirected on
    // it, one from elsewhere never to it.
    let started_on_loopback = is_loopback(url);
    let client = reqwest::Client::builder()
        .connect_timeout(CONNECT_TIMEOUT)
        .read_timeout(READ_TIMEOUT)
        .redirect(reqwest::redirect::Policy::custom(move |attempt| {
            let to = attempt.url();
            if attempt.previous().len() > MAX_REDIRECTS {
                attempt.error("too many redirects")
            } else if to.scheme() == "https"
                || (to.scheme() == "http" && started_on_loopback && is_loopback(to))
            {
                attempt.follow()
            } else {
                let refused = format!("a redirect to {to}, which is not https, was not followed");
                attempt.error(refused)
            }
        }))
        .build()
        .map_err(|e| failed(e.to_string()))?;
    let response = client
        .get(url.clone())
        .send()
        .await
        .and_then(reqwest::Response::error_for_status)
        .map_err(|e| failed(with_causes(&e)))?;
    if response
        .content_length()
        .is_some_and(|length| length > MAX_BYTES)
    {
        return Err(failed(format!("larger than {MAX_BYTES} bytes")));
    }
    std::fs::create_dir_all(folder).map_err(InstallError::io(folder))?;
    let mut file = tempfile::Builder::new()
        .prefix(".download-")
        .tempfile_in(folder)
        .map_err(InstallError::io(folder))?;
    let mut hasher = Sha256::new();
    let mut received: u64 = 0;
    let mut body = response.bytes_stream();
    while let Some(chunk) = body.next().await {
        let chunk = chunk.map_err(|e| failed(with_causes(&e)))?;
        received += chunk.len() as u64;
        if received > MAX_BYTES {
            return Err(failed(format!("larger than {MAX_BYTES} bytes")));
        }
        hasher.update(&chunk);
        file.write_all(&chunk)
            .map_err(InstallError::io(file.path()))?;
    }
    file.as_file()
        .sync_all()
        .map_err(InstallError::io(file.path()))?;
    let actual = crate::config::trust::hex(&hasher.finalize());
    if actual != sha256 {
        return Err(InstallError::Checksum {
            url: url.to_string(),
            expected: sha256.to_owned(),
            actual,
        });
    }
    Ok(file)
}
