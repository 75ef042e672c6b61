//! Google's Application Default Credentials against a token service of the test's own on
//! 127.0.0.1 that checks what Google's checks: a service account's JWT verified with its key's
//! public half (and refused when another key signed it), a user's refresh token, a metadata
//! server that wants `Metadata-Flavor: Google`. And the order of the search, and what it says
//! when it finds nothing.

use agentry_models::google::{GoogleSource, GoogleTokens, adc};
use agentry_tests::token_service::{
    GoogleTokenService, ServiceAccountKey, UserGrant, issued_token,
};
use serde_json::json;
use std::collections::HashMap;

pub(super) fn env_of(vars: &[(&str, String)]) -> impl Fn(&str) -> Option<String> + use<> {
    let vars: HashMap<String, String> = vars
        .iter()
        .map(|(k, v)| ((*k).to_owned(), v.clone()))
        .collect();
    move |name: &str| vars.get(name).cloned()
}

const EMAIL: &str = "agent@agentry-test.iam.gserviceaccount.com";

#[tokio::test]
async fn a_service_accounts_jwt_is_verified_and_exchanged_and_its_token_kept() {
    let key = ServiceAccountKey::generate();
    let service = GoogleTokenService::start(Some((EMAIL, &key)), None, 3600);
    let dir = tempfile::tempdir().unwrap();
    let file = key.write_key_file(dir.path(), EMAIL, &service.token_uri());
    let env = env_of(&[
        ("GOOGLE_APPLICATION_CREDENTIALS", file.display().to_string()),
        ("HOME", dir.path().display().to_string()),
    ]);
    let source = adc::find(&env).unwrap();
    assert!(
        matches!(&source, GoogleSource::ServiceAccount { client_email, .. } if client_email == EMAIL),
        "{source:?}"
    );
    assert_eq!(source.project(), Some("agentry-test"));
    assert!(!format!("{source:?}").contains("PRIVATE KEY"));
    let tokens = GoogleTokens::new(source);
    assert_eq!(tokens.token().await.unwrap().expose(), issued_token(1));
    // Good for an hour: the same token, not asked again.
    assert_eq!(tokens.token().await.unwrap().expose(), issued_token(1));
    assert_eq!(service.issued(), 1);

    // The same account's file with another key: the service refuses, in its words.
    let forger = ServiceAccountKey::generate();
    let forged = forger.write_key_file(dir.path(), EMAIL, &service.token_uri());
    let env = env_of(&[(
        "GOOGLE_APPLICATION_CREDENTIALS",
        forged.display().to_string(),
    )]);
    let refused = GoogleTokens::new(adc::find(&env).unwrap())
        .token()
        .await
        .unwrap_err()
        .to_string();
    assert!(
        refused.contains("invalid_grant: Invalid JWT Signature.")
            && refused.contains(&format!("the service account {EMAIL}"))
            && !refused.contains("PRIVATE"),
        "{refused}"
    );
    assert_eq!(service.issued(), 1);
}

#[tokio::test]
async fn a_token_about_to_expire_is_fetched_again() {
    let key = ServiceAccountKey::generate();
    // Good for four minutes: inside the five minutes before expiry, so each use asks anew.
    let service = GoogleTokenService::start(Some((EMAIL, &key)), None, 240);
    let dir = tempfile::tempdir().unwrap();
    let file = key.write_key_file(dir.path(), EMAIL, &service.token_uri());
    let env = env_of(&[("GOOGLE_APPLICATION_CREDENTIALS", file.display().to_string())]);
    let tokens = GoogleTokens::new(adc::find(&env).unwrap());
    assert_eq!(tokens.token().await.unwrap().expose(), issued_token(1));
    assert_eq!(tokens.token().await.unwrap().expose(), issued_token(2));
}

#[tokio::test]
async fn gclouds_user_credentials_are_found_in_the_config_dir_and_refreshed() {
    let grant = UserGrant {
        client_id: "764086051850-x.apps.googleusercontent.com".into(),
        client_secret: "d-FL95Q19q7MQmFpd7hHD0Ty".into(),
        refresh_token: "1//0g-refresh".into(),
    };
    let service = GoogleTokenService::start(None, Some(grant.clone()), 3600);
    let dir = tempfile::tempdir().unwrap();
    let gcloud = dir.path().join("gcloud");
    std::fs::create_dir_all(&gcloud).unwrap();
    let write = |refresh: &str| {
        let file = json!({
            "type": "authorized_user",
            "client_id": grant.client_id,
            "client_secret": grant.client_secret,
            "refresh_token": refresh,
            "quota_project_id": "billed-project",
            "token_uri": service.token_uri(),
        });
        std::fs::write(
            gcloud.join("application_default_credentials.json"),
            file.to_string(),
        )
        .unwrap();
    };
    write(&grant.refresh_token);
    let env = env_of(&[("CLOUDSDK_CONFIG", gcloud.display().to_string())]);
    let source = adc::find(&env).unwrap();
    assert!(
        source
            .describe()
            .contains("application_default_credentials.json"),
        "{}",
        source.describe()
    );
    assert_eq!(source.project(), Some("billed-project"));
    assert_eq!(
        GoogleTokens::new(source).token().await.unwrap().expose(),
        issued_token(1)
    );
    write("1//0g-revoked");
    let refused = GoogleTokens::new(adc::find(&env).unwrap())
        .token()
        .await
        .unwrap_err()
        .to_string();
    assert!(
        refused.contains("invalid_grant: Token has been expired or revoked.")
            && !refused.contains("1//0g-revoked")
            && !refused.contains(&grant.client_secret),
        "{refused}"
    );
}

#[tokio::test]
async fn the_metadata_server_comes_last_and_is_asked_as_google_wants() {
    let service = GoogleTokenService::start(None, None, 3600);
    let dir = tempfile::tempdir().unwrap();
    let env = env_of(&[
        ("HOME", dir.path().display().to_string()),
        ("GCE_METADATA_HOST", service.metadata_host()),
    ]);
    let source = adc::find(&env).unwrap();
    assert_eq!(
        source,
        GoogleSource::MetadataServer {
            host: service.metadata_host()
        }
    );
    assert_eq!(
        GoogleTokens::new(source).token().await.unwrap().expose(),
        issued_token(1)
    );
    // A file found earlier in the order wins over the metadata server.
    let gcloud = dir.path().join(".config/gcloud");
    std::fs::create_dir_all(&gcloud).unwrap();
    std::fs::write(
        gcloud.join("application_default_credentials.json"),
        json!({"type": "authorized_user", "client_id": "c", "client_secret": "s", "refresh_token": "r"}).to_string(),
    )
    .unwrap();
    assert!(matches!(
        adc::find(&env).unwrap(),
        GoogleSource::AuthorizedUser { .. }
    ));
}

#[test]
fn nothing_found_names_every_place_looked_and_odd_files_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().display().to_string();
    let env = env_of(&[("HOME", home.clone()), ("NO_GCE_CHECK", "True".into())]);
    let error = adc::find(&env).unwrap_err().to_string();
    assert!(
        error.contains("no Google credentials found")
            && error.contains("GOOGLE_APPLICATION_CREDENTIALS")
            && error.contains(&format!(
                "{home}/.config/gcloud/application_default_credentials.json"
            ))
            && error.contains("GCE_METADATA_HOST"),
        "{error}"
    );
    let missing = env_of(&[(
        "GOOGLE_APPLICATION_CREDENTIALS",
        format!("{home}/nope.json"),
    )]);
    let error = adc::find(&missing).unwrap_err().to_string();
    assert!(
        error.contains("nope.json") && error.contains("cannot be read"),
        "{error}"
    );
    let federated = dir.path().join("wif.json");
    std::fs::write(
        &federated,
        r#"{"type": "external_account", "audience": "//iam.googleapis.com/x"}"#,
    )
    .unwrap();
    let env = env_of(&[(
        "GOOGLE_APPLICATION_CREDENTIALS",
        federated.display().to_string(),
    )]);
    let error = adc::find(&env).unwrap_err().to_string();
    assert!(
        error.contains("`external_account` credentials, which agentry does not read"),
        "{error}"
    );
}
