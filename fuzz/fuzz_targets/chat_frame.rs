//! The chat protocol's client messages, as `agentry serve`'s plain-WebSocket transport takes them
//! in: each line of the input is one text frame (`{"event": …, "data": …}`) from one client.
//! Any frame gets handled or answered with `system:error`; none may panic.
#![no_main]

use agentry::agent::Agent;
use agentry::model::scripted::ScriptedModel;
use agentry::permission::PermissionPolicy;
use agentry_serve::client::Client;
use agentry_serve::live::{Limits, SessionDefaults, Sessions};
use std::sync::{Arc, LazyLock};

static SESSIONS: LazyLock<Arc<Sessions>> = LazyLock::new(|| {
    let agent = Agent::builder(Arc::new(ScriptedModel::new([])))
        .build()
        .expect("an agent");
    let defaults = SessionDefaults {
        cwd: std::env::temp_dir(),
        max_message_bytes: 1 << 20,
        policy: PermissionPolicy::default(),
        lease: agentry_serve::DEFAULT_LEASE,
        limits: Limits::default(),
    };
    let fanout = Arc::new(agentry_fanout::LocalFanout::default());
    Arc::new(Sessions::new(agent, defaults, None, fanout))
});

libfuzzer_sys::fuzz_target!(|text: &str| {
    agentry_fuzz::block_on(async {
        let (client, _events) = Client::new(SESSIONS.clone());
        for frame in text.split('\n') {
            client.receive_frame(frame).await;
        }
    });
});
