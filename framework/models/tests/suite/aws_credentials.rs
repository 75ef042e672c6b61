//! AWS's credential chain against services of the test's own on 127.0.0.1 that check what
//! AWS's check: an STS that takes a web identity token for a role, a container endpoint that
//! wants its authorization token, an instance metadata service that wants an IMDSv2 session
//! token. And the order of the chain, and what it says when it finds nothing.

use agentry_models::aws::chain::{self, CredentialSource};
use agentry_models::aws::credentials::CredentialChain;
use agentry_models::catalog::ModelCatalog;
use axum::extract::{Form, State};
use axum::http::{HeaderMap, StatusCode};
use axum::routing::{get, post, put};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Serves `app` on 127.0.0.1; its URL.
async fn serve(app: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    url
}

fn env_of(vars: &[(&str, String)]) -> impl Fn(&str) -> Option<String> + use<> {
    let vars: HashMap<String, String> = vars
        .iter()
        .map(|(k, v)| ((*k).to_owned(), v.clone()))
        .collect();
    move |name: &str| vars.get(name).cloned()
}

/// The credentials' JSON as the container endpoint and the metadata service give them.
fn issued(expiration: &str) -> String {
    format!(
        r#"{{"Code":"Success","Type":"AWS-HMAC","AccessKeyId":"ASIAISSUED","SecretAccessKey":"issued-secret","Token":"issued-token","Expiration":"{expiration}"}}"#
    )
}

#[tokio::test]
async fn a_web_identity_is_exchanged_at_sts_for_the_roles_credentials() {
    let dir = tempfile::tempdir().unwrap();
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, "eyJhbGciOiJSUzI1NiJ9.web-identity.sig\n").unwrap();
    let sts = axum::Router::new().route(
        "/",
        post(|Form(form): Form<BTreeMap<String, String>>| async move {
            let wanted = [
                ("Action", "AssumeRoleWithWebIdentity"),
                ("RoleArn", "arn:aws:iam::123456789012:role/agent"),
                ("WebIdentityToken", "eyJhbGciOiJSUzI1NiJ9.web-identity.sig"),
                ("RoleSessionName", "ci-run"),
            ];
            if wanted.iter().any(|(k, v)| form.get(*k).map(String::as_str) != Some(*v)) {
                return (
                    StatusCode::BAD_REQUEST,
                    "<ErrorResponse><Error><Code>InvalidIdentityToken</Code><Message>Couldn&apos;t verify the token</Message></Error></ErrorResponse>".to_owned(),
                );
            }
            (
                StatusCode::OK,
                "<AssumeRoleWithWebIdentityResponse><AssumeRoleWithWebIdentityResult><Credentials>\
                 <AccessKeyId>ASIAWEB</AccessKeyId><SecretAccessKey>web-secret</SecretAccessKey>\
                 <SessionToken>web-token</SessionToken><Expiration>2099-01-01T00:00:00Z</Expiration>\
                 </Credentials></AssumeRoleWithWebIdentityResult></AssumeRoleWithWebIdentityResponse>"
                    .to_owned(),
            )
        }),
    );
    let url = serve(sts).await;
    let vars = [
        (
            "AWS_WEB_IDENTITY_TOKEN_FILE",
            token_file.display().to_string(),
        ),
        (
            "AWS_ROLE_ARN",
            "arn:aws:iam::123456789012:role/agent".to_owned(),
        ),
        ("AWS_ROLE_SESSION_NAME", "ci-run".to_owned()),
        ("AWS_ENDPOINT_URL_STS", url.clone()),
        ("HOME", dir.path().display().to_string()),
    ];
    let env = env_of(&vars);
    let source = chain::find(&env, "us-east-1").unwrap();
    assert!(
        matches!(source, CredentialSource::WebIdentity { .. }),
        "{source:?}"
    );
    let credentials = CredentialChain::new(source).credentials().await.unwrap();
    assert_eq!(credentials.access_key_id, "ASIAWEB");
    assert_eq!(credentials.session_token.as_deref(), Some("web-token"));
    // A token STS refuses: its words, never the token.
    std::fs::write(&token_file, "forged").unwrap();
    let env = env_of(&vars);
    let refused = CredentialChain::new(chain::find(&env, "us-east-1").unwrap())
        .credentials()
        .await
        .unwrap_err()
        .to_string();
    assert!(
        refused.contains("Couldn't verify the token [InvalidIdentityToken]")
            && refused.contains("web identity for arn:aws:iam::123456789012:role/agent")
            && !refused.contains("forged"),
        "{refused}"
    );
}

#[tokio::test]
async fn the_container_endpoint_wants_its_token_and_is_asked_again_before_expiry() {
    let asked = Arc::new(AtomicUsize::new(0));
    let soon = (chrono::Utc::now() + chrono::TimeDelta::minutes(2)).to_rfc3339();
    let container =
        axum::Router::new()
            .route(
                "/creds",
                get(
                    |State((asked, soon)): State<(Arc<AtomicUsize>, String)>,
                     headers: HeaderMap| async move {
                        if headers.get("authorization").and_then(|v| v.to_str().ok())
                            != Some("pod-token")
                        {
                            return (StatusCode::UNAUTHORIZED, String::new());
                        }
                        asked.fetch_add(1, Ordering::SeqCst);
                        (StatusCode::OK, issued(&soon))
                    },
                ),
            )
            .with_state((asked.clone(), soon));
    let url = serve(container).await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("token"), "pod-token\n").unwrap();
    let env = env_of(&[
        ("AWS_CONTAINER_CREDENTIALS_FULL_URI", format!("{url}/creds")),
        (
            "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
            dir.path().join("token").display().to_string(),
        ),
        ("HOME", dir.path().display().to_string()),
    ]);
    let chain = CredentialChain::new(chain::find(&env, "us-east-1").unwrap());
    for _ in 0..2 {
        let credentials = chain.credentials().await.unwrap();
        assert_eq!(credentials.access_key_id, "ASIAISSUED");
    }
    // Both calls asked: credentials that expire within five minutes are not kept.
    assert_eq!(asked.load(Ordering::SeqCst), 2);
    // Plain HTTP to any address but loopback and the container agents' is refused.
    let env = env_of(&[(
        "AWS_CONTAINER_CREDENTIALS_FULL_URI",
        "http://192.0.2.10/creds".to_owned(),
    )]);
    let refused = chain::find(&env, "us-east-1").unwrap_err().to_string();
    assert!(refused.contains("must be HTTPS"), "{refused}");
}

#[tokio::test]
async fn the_instance_metadata_service_is_asked_with_an_imdsv2_session() {
    let imds =
        axum::Router::new()
            .route(
                "/latest/api/token",
                put(|headers: HeaderMap| async move {
                    match headers.get("x-aws-ec2-metadata-token-ttl-seconds") {
                        Some(_) => (StatusCode::OK, "imds-session".to_owned()),
                        None => (StatusCode::BAD_REQUEST, String::new()),
                    }
                }),
            )
            .route(
                "/latest/meta-data/iam/security-credentials/",
                get(|headers: HeaderMap| async move {
                    with_session(&headers, "agent-role\n".to_owned())
                }),
            )
            .route(
                "/latest/meta-data/iam/security-credentials/agent-role",
                get(|headers: HeaderMap| async move {
                    with_session(&headers, issued("2099-01-01T00:00:00Z"))
                }),
            );
    let url = serve(imds).await;
    let dir = tempfile::tempdir().unwrap();
    let env = env_of(&[
        ("AWS_EC2_METADATA_SERVICE_ENDPOINT", url.clone()),
        ("HOME", dir.path().display().to_string()),
    ]);
    let source = chain::find(&env, "us-east-1").unwrap();
    assert_eq!(source, CredentialSource::InstanceMetadata { endpoint: url });
    let credentials = CredentialChain::new(source).credentials().await.unwrap();
    assert_eq!(credentials.secret_access_key, "issued-secret");
}

fn with_session(headers: &HeaderMap, body: String) -> (StatusCode, String) {
    if headers
        .get("x-aws-ec2-metadata-token")
        .and_then(|v| v.to_str().ok())
        == Some("imds-session")
    {
        (StatusCode::OK, body)
    } else {
        (StatusCode::UNAUTHORIZED, String::new())
    }
}

#[test]
fn the_chain_takes_the_environment_then_the_named_profile_then_says_where_it_looked() {
    let home = tempfile::tempdir().unwrap();
    let aws = home.path().join(".aws");
    std::fs::create_dir_all(&aws).unwrap();
    std::fs::write(
        aws.join("credentials"),
        "[default]\naws_access_key_id = AKIDDEFAULT\naws_secret_access_key = d\n\
         [work]\naws_access_key_id = AKIDWORK\naws_secret_access_key = w\naws_session_token = t\n",
    )
    .unwrap();
    std::fs::write(
        aws.join("config"),
        "[profile work]\nregion = eu-central-1\n[profile sso]\nsso_session = corp\n",
    )
    .unwrap();
    let home_var = ("HOME", home.path().display().to_string());
    let key_of = |source: CredentialSource| match source {
        CredentialSource::Static { credentials, .. } => credentials.access_key_id,
        other => panic!("{other:?}"),
    };
    let env = env_of(&[
        home_var.clone(),
        ("AWS_ACCESS_KEY_ID", "AKIDENV".to_owned()),
        ("AWS_SECRET_ACCESS_KEY", "e".to_owned()),
        ("AWS_PROFILE", "work".to_owned()),
    ]);
    assert_eq!(key_of(chain::find(&env, "r").unwrap()), "AKIDENV");
    let env = env_of(&[home_var.clone(), ("AWS_PROFILE", "work".to_owned())]);
    assert_eq!(key_of(chain::find(&env, "r").unwrap()), "AKIDWORK");
    assert_eq!(chain::region(&env).as_deref(), Some("eu-central-1"));
    let env = env_of(std::slice::from_ref(&home_var));
    assert_eq!(key_of(chain::find(&env, "r").unwrap()), "AKIDDEFAULT");
    let said = |vars: &[(&str, String)]| {
        let env = env_of(vars);
        chain::find(&env, "r").unwrap_err().to_string()
    };
    let missing = said(&[home_var.clone(), ("AWS_PROFILE", "nope".to_owned())]);
    assert!(missing.contains("profile `nope`"), "{missing}");
    let sso = said(&[home_var.clone(), ("AWS_PROFILE", "sso".to_owned())]);
    assert!(
        sso.contains("`sso_session`") && sso.contains("credential_process"),
        "{sso}"
    );
    let half = said(&[("AWS_ACCESS_KEY_ID", "AKID".to_owned())]);
    assert!(half.contains("AWS_SECRET_ACCESS_KEY is not"), "{half}");
    let empty = tempfile::tempdir().unwrap();
    let nothing = said(&[
        ("HOME", empty.path().display().to_string()),
        ("AWS_EC2_METADATA_DISABLED", "true".to_owned()),
    ]);
    assert!(
        nothing.contains("no AWS credentials found")
            && nothing.contains(".aws/credentials")
            && nothing.contains("AWS_WEB_IDENTITY_TOKEN_FILE")
            && nothing.contains("AWS_BEARER_TOKEN_BEDROCK"),
        "{nothing}"
    );
}

#[test]
fn the_catalog_opens_bedrock_models_and_says_what_is_missing_before_any_request() {
    let providers = BTreeMap::new();
    let empty = tempfile::tempdir().unwrap();
    let home = ("HOME", empty.path().display().to_string());
    let refusal = |vars: &[(&str, String)]| {
        let env = env_of(vars);
        ModelCatalog::new(&providers, &env)
            .open("bedrock/amazon.nova-micro-v1:0")
            .err()
            .unwrap()
            .to_string()
    };
    let error = refusal(&[home.clone(), ("AWS_BEARER_TOKEN_BEDROCK", "k".to_owned())]);
    assert!(
        error.contains("needs an AWS region: set AWS_REGION"),
        "{error}"
    );
    let error = refusal(&[
        home.clone(),
        ("AWS_REGION", "us-west-2".to_owned()),
        ("AWS_EC2_METADATA_DISABLED", "true".to_owned()),
    ]);
    assert!(
        error.contains("`bedrock/amazon.nova-micro-v1:0`: no AWS credentials found"),
        "{error}"
    );
    let keyed = env_of(&[
        home,
        ("AWS_REGION", "us-west-2".to_owned()),
        ("AWS_BEARER_TOKEN_BEDROCK", "k".to_owned()),
    ]);
    let model = ModelCatalog::new(&providers, &keyed)
        .open("bedrock/us.anthropic.claude-sonnet-4-5-20250929-v1:0")
        .unwrap();
    assert_eq!(model.context_window(), Some(200_000));
    assert_eq!(
        model.name(),
        "bedrock/us.anthropic.claude-sonnet-4-5-20250929-v1:0"
    );
}
