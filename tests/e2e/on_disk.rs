//! What agentry leaves on disk is the user's alone: the data folder 0700, the session
//! database, recordings and the server token 0600, and those an earlier version left open
//! tightened when they are next opened.

use crate::sandbox;
use serde_json::json;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn sessions_and_recordings_are_the_users_alone() {
    let sb = sandbox();
    let script = sb.script("hi", &json!({"responses": [{"events": [{"text": "Hi."}]}]}));
    let recording = sb.project().parent().unwrap().join("run.jsonl");
    let record = recording.display().to_string();
    let out = sb.run_scripted(&script, &["--record", &record, "hi"]);
    assert_eq!(out.code, Some(0), "{out:?}");
    let database = sb.database();
    let data = database.parent().unwrap();
    assert_eq!(mode(data), 0o700);
    for file in ["sessions.db", "sessions.db-wal", "sessions.db-shm"] {
        let file = data.join(file);
        if file.exists() {
            assert_eq!(mode(&file), 0o600, "{}", file.display());
        }
    }
    assert_eq!(mode(&recording), 0o600);
}

#[test]
fn what_an_earlier_version_left_open_is_tightened_on_open() {
    let sb = sandbox();
    let script = sb.script(
        "hi",
        &json!({"responses": [{"events": [{"text": "Hi."}]}, {"events": [{"text": "Again."}]}]}),
    );
    assert_eq!(sb.run_scripted(&script, &["hi"]).code, Some(0));
    let database = sb.database();
    let data = database.parent().unwrap().to_path_buf();
    std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&database, std::fs::Permissions::from_mode(0o644)).unwrap();
    let listed = sb.run(&["sessions", "--json"]);
    assert_eq!(listed.code, Some(0), "{listed:?}");
    assert_eq!(mode(&data), 0o700);
    assert_eq!(mode(&database), 0o600);
}

#[test]
fn the_binary_is_position_independent_with_packed_relocations() {
    let binary = std::fs::read(crate::agentry_binary()).unwrap();
    assert_eq!(&binary[..4], b"\x7fELF");
    // ELF type 3 (ET_DYN): ASLR places the executable anew each run.
    assert_eq!(u16::from_le_bytes([binary[16], binary[17]]), 3);
    let headers = std::process::Command::new("readelf")
        .arg("--dynamic")
        .arg(crate::agentry_binary())
        .output()
        .unwrap();
    let dynamic = String::from_utf8_lossy(&headers.stdout);
    assert!(dynamic.contains("(RELR)"), "{dynamic}");
}
