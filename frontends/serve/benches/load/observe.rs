//! Layout (f)'s observation: the agent's chat metrics, and traces sent over OTLP/HTTP to a
//! receiver on loopback as `agentry serve` sends them when configured
//! ([`agentry::telemetry::otlp`]). A global subscriber cannot be removed, so a switch filters
//! the whole subscriber: off (every other layout), it lets no span through.

use super::cores::Cores;
use agentry_otlp as otlp;
use agentry_otlp::TelemetrySettings;
use agentry_tests::otlp::OtlpReceiver;
use std::sync::atomic::{AtomicBool, Ordering};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

/// What (f) observes: `LOAD_OBSERVE=metrics` or `traces` for one of them alone (to tell
/// their costs apart), both by default.
pub fn observes(what: &str) -> bool {
    std::env::var("LOAD_OBSERVE").map_or(true, |chosen| chosen == what)
}

/// Whether spans are traced now.
static TRACING: AtomicBool = AtomicBool::new(false);

/// Traces on while it lives.
pub struct Observing;

impl Observing {
    /// Turns traces on.
    pub fn start() -> Self {
        TRACING.store(true, Ordering::SeqCst);
        // The filter's answers are cached per callsite: they are asked again.
        tracing::callsite::rebuild_interest_cache();
        Observing
    }
}

impl Drop for Observing {
    fn drop(&mut self) {
        TRACING.store(false, Ordering::SeqCst);
        tracing::callsite::rebuild_interest_cache();
    }
}

/// The receiver and the traces feeding it.
pub struct Traces {
    receiver: OtlpReceiver,
    traces: otlp::Traces,
}

impl Traces {
    /// Installs the global subscriber (traces off until [`Observing::start`]), its exporter's
    /// thread on the server side's `cores`.
    pub fn install(cores: &Cores) -> Self {
        let receiver = OtlpReceiver::start();
        let settings = TelemetrySettings {
            endpoint: Some(receiver.url().to_owned()),
            ..TelemetrySettings::default()
        };
        // Made on a thread of the server side's cores: the exporter's thread, which the batch
        // processor starts, runs where it was started from.
        let cores = cores.clone();
        let traces = std::thread::spawn(move || {
            cores.pin_to_server();
            otlp::Traces::configured(&settings)
        })
        .join()
        .unwrap()
        .unwrap()
        .expect("an endpoint turns traces on");
        // A filter of the whole subscriber, so that the layer is filtered as the binary's is
        // (a switch of its own would be asked again at each of a span's notices); with the
        // level the layer's own filter lets through, as the binary's subscriber has: without
        // it, every `log` record of the dependencies would be dispatched to be refused.
        let switch = tracing_subscriber::filter::filter_fn(|_| TRACING.load(Ordering::Relaxed))
            .with_max_level_hint(tracing::Level::INFO);
        tracing_subscriber::registry()
            .with(switch)
            .with(traces.layer())
            .init();
        Self { receiver, traces }
    }

    /// Sends what is left and stops (off the runtime).
    pub fn shutdown(self) -> OtlpReceiver {
        let traces = self.traces;
        std::thread::spawn(move || traces.shutdown())
            .join()
            .unwrap();
        self.receiver
    }
}
