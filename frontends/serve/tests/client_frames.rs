//! Any text frame a client sends is handled or answered with `system:error`, and the
//! connection goes on (the fuzz target `chat_frame` runs the same at length).
#![allow(missing_docs, clippy::unwrap_used)]

use agentry::agent::Agent;
use agentry::model::scripted::ScriptedModel;
use agentry::permission::PermissionPolicy;
use agentry_fanout::LocalFanout;
use agentry_serve::client::Client;
use agentry_serve::live::{Limits, SessionDefaults, Sessions};
use futures::StreamExt;
use proptest::prelude::*;
use serde_json::{Value, json};
use std::sync::Arc;

fn sessions() -> Arc<Sessions> {
    let agent = Agent::builder(Arc::new(ScriptedModel::new([])))
        .build()
        .unwrap();
    let defaults = SessionDefaults {
        cwd: std::env::temp_dir(),
        max_message_bytes: 1 << 20,
        policy: PermissionPolicy::default(),
        lease: agentry_serve::DEFAULT_LEASE,
        limits: Limits::default(),
        chat_metrics: true,
    };
    Arc::new(Sessions::new(
        agent,
        defaults,
        None,
        Arc::new(LocalFanout::default()),
    ))
}

/// A frame: a known event with data of any shape, or any text.
fn frame() -> impl Strategy<Value = String> {
    let event = prop_oneof![
        prop::sample::select(vec![
            "chat:send",
            "chat:stop",
            "session:subscribe",
            "session:unsubscribe",
            "permission:respond",
        ])
        .prop_map(str::to_owned),
        "[a-z:]{0,12}",
    ];
    let data = prop_oneof![
        Just(json!({})),
        "[a-z_]{0,8}".prop_map(|id| json!({"session_id": id, "message": "hi"})),
        any::<i64>().prop_map(Value::from),
        ".{0,20}".prop_map(Value::from),
        Just(json!({"session_id": "s", "request_id": 4, "option_id": null})),
    ];
    prop_oneof![
        (event, data).prop_map(|(event, data)| json!({"event": event, "data": data}).to_string()),
        ".{0,40}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn every_frame_is_handled_or_refused_and_the_client_goes_on(
        frames in prop::collection::vec(frame(), 1..6)
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let events: Vec<Value> = runtime.block_on(async {
            let (client, events) = Client::new(sessions());
            for frame in &frames {
                client.receive_frame(frame).await;
            }
            drop(client);
            events.map(|event| (*event).clone()).collect().await
        });
        let not_frames = frames
            .iter()
            .filter(|f| serde_json::from_str::<Value>(f).map_or(true, |v| !v.is_object()))
            .count();
        let errors = events.iter().filter(|e| e["event"] == "system:error").count();
        // No session exists, so no frame can succeed: each is answered with an error.
        prop_assert_eq!(errors, frames.len(), "{:?} -> {:?}", frames, events);
        prop_assert!(errors >= not_frames);
    }
}
