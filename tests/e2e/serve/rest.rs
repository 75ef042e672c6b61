//! The REST API: sessions across a restart, headless chats, renaming and modes, the OpenAPI
//! document.

use super::Server;
use crate::sandbox;
use agentry_tests::mock_model::{MockModelServer, MockReply, MockTurn};
use serde_json::json;

#[test]
fn rest_sessions_survive_a_restart_and_headless_chats_answer_over_http() {
    let sb = sandbox();
    let model = MockModelServer::start_blocking([
        MockTurn::Reply(MockReply::text(
            "{\"countries\": [\"Russia\", \"Canada\", \"China\"]}",
        )),
        MockTurn::Reply(MockReply::text("Second.")),
    ]);
    let id;
    {
        let server = Server::start(&sb, &model, &[]);
        id = server.new_session(&sb);
        let schema = json!({"type": "object", "properties": {"countries": {"type": "array", "items": {"type": "string"}}}, "required": ["countries"]});
        let (status, end) = server.call(
            "POST",
            &format!("/api/sessions/{id}/chat"),
            Some(json!({"message": "The three largest countries", "headless": true, "output_schema": schema})),
        );
        assert_eq!(status, 200, "{end}");
        assert_eq!(end["status"], "completed");
        assert_eq!(end["result"]["output"]["countries"][1], "Canada");
        assert_eq!(end["result"]["schema"], schema);
        let (status, error) = server.call("GET", "/api/sessions/sess_nope/messages", None);
        assert_eq!(
            (status, error["code"].as_str()),
            (404, Some("unknown_session"))
        );
        let (status, _) = server.call(
            "POST",
            "/api/sessions",
            Some(json!({"cwd": "/no/such/folder"})),
        );
        assert_eq!(status, 422);
    }
    // A new server process reads the same store.
    let server = Server::start(&sb, &model, &[]);
    let (status, listed) = server.call("GET", "/api/sessions", None);
    assert_eq!(status, 200);
    assert_eq!(listed["sessions"][0]["session_id"], id.as_str());
    let (_, messages) = server.call("GET", &format!("/api/sessions/{id}/messages"), None);
    let turns = messages["turns"].as_array().unwrap();
    assert_eq!(turns.len(), 2);
    assert_eq!(turns[0]["role"], "user");
    assert_eq!(
        turns[0]["blocks"][0]["content"],
        "The three largest countries"
    );
    assert!(turns[1]["started_at"].is_string());
    let (status, end) = server.call(
        "POST",
        &format!("/api/sessions/{id}/chat"),
        Some(json!({"message": "And again"})),
    );
    assert_eq!(status, 200, "{end}");
    assert_eq!(end["result"]["output"], "Second.");
    let (status, _) = server.call("DELETE", &format!("/api/sessions/{id}"), None);
    assert_eq!(status, 204);
    let (status, _) = server.call("GET", &format!("/api/sessions/{id}/messages"), None);
    assert_eq!(status, 404);
}

#[test]
fn the_rest_api_holds_to_its_openapi_document() {
    let sb = sandbox();
    // A model that answers once, then fails every request at once: chats end quickly.
    let script = sb.script(
        "once",
        &json!({"responses": [{"events": [{"text": "Hi."}]}]}),
    );
    let model = MockModelServer::start_blocking([]);
    let scripted = format!("scripted:{}", script.display());
    let server = Server::start(&sb, &model, &["--model", &scripted]);
    let (status, document) = server.call("GET", "/api/openapi.json", None);
    assert_eq!(status, 200);
    assert_eq!(document["openapi"], "3.1.0");
    assert!(document["components"]["schemas"]["TurnProjection"].is_object());
    // schemathesis generates requests from the document: no 5xx, every status, content type
    // and body as documented.
    let out = std::process::Command::new(agentry_tests::peers::schemathesis())
        .arg("run")
        .arg(format!("{}/api/openapi.json", server.url))
        .args(["--header", &server.authorization()])
        .args([
            "--checks",
            "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance",
            "--max-time",
            "25",
            "--seed",
            "1",
        ])
        .env("SCHEMATHESIS_HOOKS", "")
        // Its caches go into the sandbox, not the checkout.
        .current_dir(sb.project().parent().unwrap())
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{report}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(report.contains("passed"), "{report}");
}

#[test]
fn sessions_are_renamed_and_given_a_mode_and_bad_changes_are_refused() {
    let sb = sandbox();
    let model = MockModelServer::start_blocking([MockTurn::Reply(MockReply::text("Noted."))]);
    let server = Server::start(&sb, &model, &["--permission-mode", "plan"]);
    let (status, options) = server.call("GET", "/api/options", None);
    assert_eq!(status, 200);
    assert_eq!(options["models"][0], "openai/gpt-4.1");
    assert_eq!(
        options["modes"],
        json!(["default", "accept_edits", "plan", "bypass"])
    );
    assert_eq!(options["mode"], "plan");

    let id = server.new_session(&sb);
    let path = format!("/api/sessions/{id}");
    // Not stored before its first message: nothing to rename yet, and not listed.
    let (status, error) = server.call("PATCH", &path, Some(json!({"title": "Early"})));
    assert_eq!(status, 422, "{error}");
    let (_, listed) = server.call("GET", "/api/sessions", None);
    assert_eq!(listed["sessions"], json!([]));
    let (status, _) = server.call(
        "POST",
        &format!("{path}/chat"),
        Some(json!({"message": "Plan the release"})),
    );
    assert_eq!(status, 200);
    for (bad, field) in [
        (json!({"mode": "yolo"}), "mode"),
        (json!({"title": "   "}), "title"),
    ] {
        let (status, error) = server.call("PATCH", &path, Some(bad));
        assert_eq!(status, 422, "{error}");
        assert_eq!(error["detail"], field, "{error}");
    }
    let (status, error) = server.call("PATCH", &path, Some(json!({"colour": "red"})));
    assert_eq!(status, 422, "{error}");
    let (status, _) = server.call(
        "PATCH",
        "/api/sessions/sess_nowhere",
        Some(json!({"title": "x"})),
    );
    assert_eq!(status, 404);

    let (status, _) = server.call(
        "PATCH",
        &path,
        Some(json!({"title": "Release plan", "mode": "accept_edits"})),
    );
    assert_eq!(status, 204);
    let (_, listed) = server.call("GET", "/api/sessions", None);
    assert_eq!(listed["sessions"][0]["title"], "Release plan");
    let (_, messages) = server.call("GET", &format!("{path}/messages"), None);
    assert_eq!(messages["mode"], "accept_edits");
    assert_eq!(messages["model"], "openai/gpt-4.1");
}
