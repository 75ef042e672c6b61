//! Tests of the exported table, driven as a host drives it.

use super::*;
use crate::wire::Description;
use agentry_plugin::provider::SimpleProvider;
use agentry_plugin::settings::made;
use agentry_plugin::tool::{Tool, ToolKind, ToolOutput};

struct Echo;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct EchoInput {
    text: String,
}

impl Tool for Echo {
    type Input = EchoInput;
    type Output = String;

    fn name(&self) -> &str {
        "Echo"
    }
    fn description(&self) -> String {
        "Echoes its text.".to_owned()
    }
    fn kind(&self) -> ToolKind {
        ToolKind::Other
    }
    async fn call(&self, input: EchoInput, _ctx: ToolContext) -> Result<String, ToolError> {
        Ok(input.text)
    }
}

/// Reads a file through the client's files, which the host must offer.
struct ReadThrough;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct ReadThroughInput {
    path: String,
}

impl Tool for ReadThrough {
    type Input = ReadThroughInput;
    type Output = String;

    fn name(&self) -> &str {
        "ReadThrough"
    }
    fn description(&self) -> String {
        "Reads a file through the client.".to_owned()
    }
    fn kind(&self) -> ToolKind {
        ToolKind::Read
    }
    async fn call(&self, input: ReadThroughInput, ctx: ToolContext) -> Result<String, ToolError> {
        let files = ctx
            .client
            .files
            .ok_or_else(|| ToolError::failed("no client files"))?;
        files
            .read_text_file(input.path.into())
            .await
            .map_err(ToolError::failed)
    }
}

/// Sleeps on the plugin's timers, then names the thread it woke on.
struct Nap;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct NapInput {
    ms: u64,
}

impl Tool for Nap {
    type Input = NapInput;
    type Output = String;

    fn name(&self) -> &str {
        "Nap"
    }
    fn description(&self) -> String {
        "Sleeps.".to_owned()
    }
    fn kind(&self) -> ToolKind {
        ToolKind::Think
    }
    async fn call(&self, input: NapInput, _ctx: ToolContext) -> Result<String, ToolError> {
        tokio::time::sleep(std::time::Duration::from_millis(input.ms)).await;
        Ok(std::thread::current().name().unwrap_or("").to_owned())
    }
}

/// The tests' provider: Echo, ReadThrough and Nap, and with `[greeting] name = "…"` a
/// `Greet` tool greeting that name (a key it does not know is a problem to report; a name that
/// is not text leaves nothing usable).
fn make(settings: Settings) -> Making {
    // Made later, on the plugin's runtime, as a provider that waits for something would be.
    Making::later(async move {
        let provider = SimpleProvider::new("echo", "")
            .with_tool(Echo)
            .with_tool(ReadThrough)
            .with_tool(Nap);
        let Some(section) = settings.section("greeting") else {
            return Ok(Configured::new(provider));
        };
        let name = section["name"]
            .as_str()
            .ok_or("greeting: `name` must be text")?
            .to_owned();
        let problems = section
            .as_object()
            .into_iter()
            .flat_map(|table| table.keys())
            .filter(|key| *key != "name")
            .map(|key| format!("greeting: unknown key `{key}`"))
            .collect::<Vec<_>>();
        let greet = agentry_plugin::tool::tool_fn(
            "Greet",
            "Greets the configured name.",
            ToolKind::Other,
            move |_: serde_json::Value, _| {
                let greeting = format!("Hello, {name}!");
                async move { Ok::<_, ToolError>(greeting) }
            },
        );
        Ok(Configured::new(provider.with_tool(greet)).with_problems(problems))
    })
}

/// Holds the plugin for one test at a time: they share it, and count the calls it holds.
fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static ONE: Mutex<()> = Mutex::new(());
    lock(&ONE)
}

/// The tests' plugin source.
const SOURCE: Source = Source::Recipe(Recipe {
    name: "echo",
    sections: &["greeting"],
    make,
});

/// A host waker that counts its wakes and whether it was released.
#[derive(Default)]
struct CountingWaker {
    wakes: AtomicU64,
    released: AtomicBool,
}

impl CountingWaker {
    fn lend(&self) -> abi::HostWaker {
        extern "C" fn wake(data: *mut c_void) {
            // SAFETY: `data` is the test's CountingWaker, alive for the test.
            let waker = unsafe { &*data.cast::<CountingWaker>() };
            waker.wakes.fetch_add(1, Ordering::SeqCst);
        }
        extern "C" fn release(data: *mut c_void) {
            // SAFETY: as above.
            let waker = unsafe { &*data.cast::<CountingWaker>() };
            waker.released.store(true, Ordering::SeqCst);
        }
        abi::HostWaker {
            data: std::ptr::from_ref(self).cast_mut().cast(),
            wake,
            release,
        }
    }
}

/// The request of a call the host polls.
const POLLED: &[u8] =
    br#"{"cwd":"/","workspace_roots":["/"],"session_id":"s","tool_call_id":"t","polled":true}"#;

/// The end a host callback recorded, if any.
fn recorded_end(events: &Mutex<Vec<(u32, Vec<u8>)>>) -> Option<CallEnd> {
    lock(events)
        .iter()
        .find(|(event, _)| *event == abi::EVENT_DONE)
        .map(|(_, bytes)| serde_json::from_slice(bytes).unwrap())
}

/// The calls the plugin holds.
fn held() -> usize {
    match PLUGIN.get() {
        Some(Ok(plugin)) => lock(&plugin.calls).len(),
        _ => usize::MAX,
    }
}

fn prepare_echo(table: &PluginV1, text: &str) -> Result<Prepared, String> {
    prepare_call(table, "Echo", serde_json::json!({"text": text}))
}

fn prepare_call(
    table: &PluginV1,
    tool: &str,
    input: serde_json::Value,
) -> Result<Prepared, String> {
    let request = serde_json::json!({"tool": tool, "input": input, "cwd": "/"});
    let request = serde_json::to_vec(&request).unwrap();
    let mut out = Buffer::EMPTY;
    let code = (table.prepare)(request.as_ptr(), request.len(), &mut out);
    // SAFETY: the plugin filled `out`.
    let bytes = unsafe { std::slice::from_raw_parts(out.ptr, out.len) }.to_vec();
    (table.free)(out);
    if code == abi::OK {
        Ok(serde_json::from_slice(&bytes).unwrap())
    } else {
        Err(String::from_utf8(bytes).unwrap())
    }
}

extern "C" fn record(host: *mut c_void, event: u32, ptr: *const u8, len: usize) {
    // SAFETY: the test passes a live Mutex<Vec<…>> and the plugin lends `len` bytes.
    let (events, bytes) = unsafe {
        (
            &*host.cast::<Mutex<Vec<(u32, Vec<u8>)>>>(),
            std::slice::from_raw_parts(ptr, len),
        )
    };
    lock(events).push((event, bytes.to_vec()));
}

/// A host that answers each service request with the text `served <request>` (and
/// records every event).
extern "C" fn serve_files(host: *mut c_void, event: u32, ptr: *const u8, len: usize) {
    record(host, event, ptr, len);
    if event == abi::EVENT_REQUEST {
        // SAFETY: the plugin lends `len` bytes.
        let bytes = unsafe { std::slice::from_raw_parts(ptr, len) };
        let call: crate::wire::ServiceCall = serde_json::from_slice(bytes).unwrap();
        let answer = match call.request {
            crate::wire::ServiceRequest::ReadTextFile { path } if path.ends_with("missing") => {
                ServiceAnswer::Error("no such file in the editor".to_owned())
            }
            request => ServiceAnswer::Ok(format!("served {request:?}").into()),
        };
        let answer = serde_json::to_vec(&answer).unwrap();
        // The handle of the one running call (the tests start one at a time).
        let running = match PLUGIN.get() {
            Some(Ok(plugin)) => lock(&plugin.calls)
                .iter()
                .find_map(|(handle, slot)| matches!(slot, Slot::Running { .. }).then_some(*handle)),
            _ => None,
        };
        (TABLE.answer)(running.unwrap(), call.id, answer.as_ptr(), answer.len());
    }
}

/// Starts a call and waits for its end.
fn start_call(table: &PluginV1, call: u64) -> CallEnd {
    let request = br#"{"cwd":"/","workspace_roots":["/"],"session_id":"s","tool_call_id":"t"}"#;
    start_with(table, call, request, record)
}

/// Starts a call with `request` and the host callback `callback`, and waits for its end.
fn start_with(table: &PluginV1, call: u64, request: &[u8], callback: HostCallback) -> CallEnd {
    let events: Mutex<Vec<(u32, Vec<u8>)>> = Mutex::default();
    let host = std::ptr::from_ref(&events).cast_mut().cast();
    (table.start)(call, request.as_ptr(), request.len(), host, callback);
    loop {
        if let Some((_, bytes)) = lock(&events).iter().find(|(e, _)| *e == abi::EVENT_DONE) {
            return serde_json::from_slice(bytes).unwrap();
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

#[test]
fn prepared_calls_are_held_until_started_or_discarded() {
    let _one_at_a_time = one_at_a_time();
    // SAFETY: `table` returns a pointer to the static table.
    let table = unsafe { &*table(SOURCE) };
    assert_eq!(held(), 0);

    let discarded = prepare_echo(table, "never").unwrap();
    assert_eq!(discarded.title, "Echo");
    assert_eq!(held(), 1);
    (table.discard)(discarded.call);
    assert_eq!(held(), 0);
    match start_call(table, discarded.call) {
        CallEnd::Failed { message, .. } => assert!(message.contains("no prepared call")),
        other => panic!("a discarded call started: {other:?}"),
    }

    let call = prepare_echo(table, "hello").unwrap();
    assert_ne!(call.call, discarded.call, "handles are not reused");
    match start_call(table, call.call) {
        CallEnd::Completed(output) => assert_eq!(output, ToolOutput::text("hello")),
        other => panic!("the call did not complete: {other:?}"),
    }
    assert_eq!(held(), 0, "a finished call is forgotten");
    (table.discard)(call.call);
    match start_call(table, call.call) {
        CallEnd::Failed { message, .. } => assert!(message.contains("no prepared call")),
        other => panic!("a call started twice: {other:?}"),
    }

    let kept = prepare_echo(table, "kept").unwrap();
    assert_eq!(held(), 1);
    let missing = {
        let request = br#"{"tool":"Nope","input":{},"cwd":"/"}"#;
        let mut out = Buffer::EMPTY;
        let code = (table.prepare)(request.as_ptr(), request.len(), &mut out);
        (table.free)(out);
        code
    };
    assert_eq!(missing, abi::ERROR);
    assert_eq!(held(), 1, "a refused prepare holds nothing");
    (table.cancel)(kept.call);
    assert_eq!(held(), 1, "cancel leaves a prepared call alone");
    (table.discard)(kept.call);
    assert_eq!(held(), 0);
}

#[test]
fn a_call_asks_the_host_for_the_services_it_was_offered_and_reads_the_answers() {
    let _one_at_a_time = one_at_a_time();
    // SAFETY: `table` returns a pointer to the static table.
    let table = unsafe { &*table(SOURCE) };
    assert!(table.has_v1_1());
    let offered = br#"{"cwd":"/","workspace_roots":["/"],"session_id":"s","tool_call_id":"t","services":["client_files","a_service_from_the_future"]}"#;
    let not_offered = br#"{"cwd":"/","workspace_roots":["/"],"session_id":"s","tool_call_id":"t"}"#;
    let run = |path: &str, request: &[u8]| {
        let call = prepare_call(table, "ReadThrough", serde_json::json!({"path": path})).unwrap();
        start_with(table, call.call, request, serve_files)
    };
    match run("/p/a.rs", offered) {
        CallEnd::Completed(output) => assert_eq!(
            output,
            ToolOutput::text(r#"served ReadTextFile { path: "/p/a.rs" }"#)
        ),
        other => panic!("{other:?}"),
    }
    match run("/p/missing", offered) {
        CallEnd::Failed { message, .. } => assert_eq!(message, "no such file in the editor"),
        other => panic!("{other:?}"),
    }
    match run("/p/a.rs", not_offered) {
        CallEnd::Failed { message, .. } => assert_eq!(message, "no client files"),
        other => panic!("{other:?}"),
    }
    assert_eq!(held(), 0);
}

#[test]
fn a_polled_call_runs_on_the_polling_thread_and_wakes_the_host_to_be_polled_again() {
    let _one_at_a_time = one_at_a_time();
    // SAFETY: `table` returns a pointer to the static table.
    let table = unsafe { &*table(SOURCE) };
    let call = prepare_call(table, "Nap", serde_json::json!({"ms": 30})).unwrap();
    let events: Mutex<Vec<(u32, Vec<u8>)>> = Mutex::default();
    let host = std::ptr::from_ref(&events).cast_mut().cast();
    (table.start)(call.call, POLLED.as_ptr(), POLLED.len(), host, record);
    std::thread::sleep(std::time::Duration::from_millis(60));
    assert!(recorded_end(&events).is_none(), "nobody ran it unpolled");

    let first = CountingWaker::default();
    assert_eq!((table.poll)(call.call, first.lend()), abi::POLL_PENDING);
    let waker = CountingWaker::default();
    let mut woken = 0;
    while (table.poll)(call.call, waker.lend()) == abi::POLL_PENDING {
        // Polled again when woken (or after a while: a poll too many does no harm, and the
        // first waker may have had the wake had the timer fired between the two polls).
        for _ in 0..500 {
            if waker.wakes.load(Ordering::SeqCst) > woken {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        woken = waker.wakes.load(Ordering::SeqCst);
    }
    assert!(
        first.wakes.load(Ordering::SeqCst) + waker.wakes.load(Ordering::SeqCst) >= 1,
        "the timer woke the host"
    );
    assert!(
        first.released.load(Ordering::SeqCst) && waker.released.load(Ordering::SeqCst),
        "every waker lent is given back"
    );
    let thread = std::thread::current().name().unwrap_or("").to_owned();
    match recorded_end(&events) {
        Some(CallEnd::Completed(output)) => assert_eq!(output, ToolOutput::text(thread)),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        (table.poll)(call.call, CountingWaker::default().lend()),
        abi::POLL_ENDED,
        "an ended call is not polled"
    );
    assert_eq!(held(), 0);
}

#[test]
fn a_detached_call_runs_to_its_end_on_the_plugins_runtime() {
    let _one_at_a_time = one_at_a_time();
    // SAFETY: `table` returns a pointer to the static table.
    let table = unsafe { &*table(SOURCE) };
    let call = prepare_call(table, "Nap", serde_json::json!({"ms": 20})).unwrap();
    let events: Mutex<Vec<(u32, Vec<u8>)>> = Mutex::default();
    let host = std::ptr::from_ref(&events).cast_mut().cast();
    (table.start)(call.call, POLLED.as_ptr(), POLLED.len(), host, record);
    let waker = CountingWaker::default();
    assert_eq!((table.poll)(call.call, waker.lend()), abi::POLL_PENDING);
    (table.detach)(call.call);
    assert_eq!(
        (table.poll)(call.call, CountingWaker::default().lend()),
        abi::POLL_ENDED,
        "a detached call is no longer the host's to poll"
    );
    let end = loop {
        if let Some(end) = recorded_end(&events) {
            break end;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    };
    match end {
        CallEnd::Completed(output) => {
            assert_eq!(output, ToolOutput::text("agentry-plugin"))
        }
        other => panic!("{other:?}"),
    }
    assert!(
        waker.released.load(Ordering::SeqCst),
        "the host's waker is given back once the call no longer needs it"
    );
}

#[test]
fn queries_answer_for_rules_and_notices_and_refuse_what_they_do_not_know() {
    let _one_at_a_time = one_at_a_time();
    // SAFETY: `table` returns a pointer to the static table.
    let table = unsafe { &*table(SOURCE) };
    let ask = |query: &[u8]| {
        let mut out = Buffer::EMPTY;
        let code = (table.query)(query.as_ptr(), query.len(), &mut out);
        // SAFETY: the plugin filled `out`.
        let bytes = unsafe { std::slice::from_raw_parts(out.ptr, out.len) }.to_vec();
        (table.free)(out);
        (code, String::from_utf8(bytes).unwrap())
    };
    assert_eq!(
        ask(br#"{"take_notices":{"session_id":"nobody"}}"#),
        (abi::OK, "[]".to_owned())
    );
    assert_eq!(
        ask(br#"{"check_rule_pattern":{"tool":"Echo","pattern":"x"}}"#),
        (abi::OK, "null".to_owned())
    );
    let (code, message) = ask(br#"{"matches_rule":{"call":999,"pattern":"x","subject":"x"}}"#);
    assert_eq!(
        (code, message.as_str()),
        (abi::ERROR, "the plugin has no prepared call 999")
    );
    let (code, message) = ask(br#"{"a_query_from_the_future":{}}"#);
    assert_eq!(code, abi::ERROR);
    assert!(message.starts_with("the request is not valid"), "{message}");
}

/// Asks the plugin `query`; its answer's JSON, or its error.
fn ask(table: &PluginV1, query: &serde_json::Value) -> Result<serde_json::Value, String> {
    let bytes = serde_json::to_vec(query).unwrap();
    let mut out = Buffer::EMPTY;
    let code = (table.query)(bytes.as_ptr(), bytes.len(), &mut out);
    // SAFETY: the plugin filled `out`.
    let answer = unsafe { std::slice::from_raw_parts(out.ptr, out.len) }.to_vec();
    (table.free)(out);
    match code {
        abi::OK => Ok(serde_json::from_slice(&answer).unwrap()),
        _ => Err(String::from_utf8(answer).unwrap()),
    }
}

#[test]
fn configure_makes_the_provider_anew_from_its_sections_and_reports_their_problems() {
    let _one_at_a_time = one_at_a_time();
    // SAFETY: `table` returns a pointer to the static table.
    let table = unsafe { &*table(SOURCE) };
    let mut out = Buffer::EMPTY;
    assert_eq!((table.describe)(&mut out), abi::OK);
    // SAFETY: the plugin filled `out`.
    let before: Description =
        serde_json::from_slice(unsafe { std::slice::from_raw_parts(out.ptr, out.len) }).unwrap();
    (table.free)(out);
    assert_eq!(before.sections, Some(vec!["greeting".to_owned()]));

    // Settings that leave nothing usable: an error, and the provider stays as it was.
    let refused = ask(
        table,
        &serde_json::json!({"configure": {"sections": {"greeting": {"name": 7}}, "project": "/p"}}),
    );
    assert_eq!(refused.unwrap_err(), "greeting: `name` must be text");
    assert!(prepare_call(table, "Greet", serde_json::json!({})).is_err());

    let configured = ask(
        table,
        &serde_json::json!({"configure": {"sections": {"greeting": {"name": "Ada", "colour": "red"}}, "project": "/p"}}),
    )
    .unwrap();
    let configured: ConfiguredDescription = serde_json::from_value(configured).unwrap();
    assert_eq!(configured.problems, ["greeting: unknown key `colour`"]);
    let names: Vec<&str> = configured
        .description
        .tools
        .iter()
        .map(|tool| tool.name.as_str())
        .collect();
    assert_eq!(names, ["Echo", "ReadThrough", "Nap", "Greet"]);
    let call = prepare_call(table, "Greet", serde_json::json!({})).unwrap();
    match start_call(table, call.call) {
        CallEnd::Completed(output) => assert_eq!(output, ToolOutput::text("Hello, Ada!")),
        other => panic!("{other:?}"),
    }
    let unknown = ask(table, &serde_json::json!({"configure_everything": {}}));
    assert!(unknown.unwrap_err().contains("not valid"));
}

#[test]
fn a_plugin_starts_its_runtime_only_when_something_waits() {
    fn now(_: Settings) -> Making {
        made(Ok(Configured::new(
            SimpleProvider::new("idle", "").with_tool(Echo),
        )))
    }
    let idle = start_plugin(Source::Recipe(Recipe {
        name: "idle",
        sections: &[],
        make: now,
    }))
    .unwrap();
    assert!(idle.runtime.get().is_none(), "made at once: no threads yet");
    idle.runtime().unwrap();
    assert!(idle.runtime.get().is_some(), "started by its first use");
    let waited = start_plugin(SOURCE).unwrap();
    assert!(waited.runtime.get().is_some(), "made later, on the runtime");
}

#[test]
fn an_ended_session_leaves_nothing_behind_in_the_plugin() {
    let _one_at_a_time = one_at_a_time();
    // SAFETY: `table` returns a pointer to the static table.
    let table = unsafe { &*table(SOURCE) };
    let kept = || lock(&plugin().unwrap().sessions).contains_key("s");
    let prepared = prepare_echo(table, "hi").unwrap();
    assert!(matches!(
        start_call(table, prepared.call),
        CallEnd::Completed(_)
    ));
    assert!(kept(), "a session's state is kept between its calls");
    ask(
        table,
        &serde_json::json!({"end_session": {"session_id": "s"}}),
    )
    .unwrap();
    assert!(!kept(), "and dropped when the host says the session ended");
}

#[test]
fn hosted_providers_are_described_and_their_tools_prepared_by_handle() {
    let _one_at_a_time = one_at_a_time();
    // SAFETY: `table` returns a pointer to the static table.
    let table = unsafe { &*table(SOURCE) };
    let own = ask(table, &serde_json::json!({"describe": {"provider": 0}})).unwrap();
    assert_eq!(own["name"], "echo");
    let unknown = ask(table, &serde_json::json!({"describe": {"provider": 4242}}));
    assert_eq!(unknown.unwrap_err(), "the plugin holds no provider 4242");
    let refused = ask(
        table,
        &serde_json::json!({"connect_server": {"server": {"transport": "stdio", "name": "x",
            "command": "x", "args": [], "env": []}, "cwd": "/"}}),
    );
    assert_eq!(
        refused.unwrap_err(),
        "the plugin connects no session servers"
    );
}
