//! # agentry-otlp
//!
//! The chats' spans ([`agentry::telemetry`]) sent over OTLP (HTTP/protobuf) to an OpenTelemetry collector, off unless
//! configured: by the standard `OTEL_EXPORTER_OTLP_ENDPOINT` (or
//! `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, with `OTEL_EXPORTER_OTLP_HEADERS` and
//! `OTEL_SERVICE_NAME`), or by `[telemetry]` in the configuration. `OTEL_SDK_DISABLED=true` or
//! `OTEL_TRACES_EXPORTER=none` turn them off.
//!
//! ```no_run
//! use agentry_otlp::{TelemetrySettings, Traces};
//! use tracing_subscriber::layer::SubscriberExt;
//! use tracing_subscriber::util::SubscriberInitExt;
//!
//! let traces = Traces::configured(&TelemetrySettings::default())?;
//! tracing_subscriber::registry()
//!     .with(traces.as_ref().map(Traces::layer))
//!     .init();
//! // … run the agent …
//! if let Some(traces) = traces {
//!     traces.shutdown();
//! }
//! # Ok::<(), opentelemetry_otlp::ExporterBuildError>(())
//! ```

mod unentered;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{ExporterBuildError, Protocol, WithExportConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{
    BatchConfig, BatchConfigBuilder, BatchSpanProcessor, SdkTracerProvider, SpanData, SpanExporter,
};
use serde::Deserialize;
use std::sync::Once;
use std::time::Duration;
use tracing::Level;
use tracing_subscriber::Layer;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::registry::LookupSpan;

/// `[telemetry]`: OpenTelemetry traces over OTLP (HTTP/protobuf). The standard
/// `OTEL_EXPORTER_OTLP_*`, `OTEL_SERVICE_NAME` and `OTEL_SDK_DISABLED` variables take the
/// place of these keys.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TelemetrySettings {
    /// The collector's base URL (`http://127.0.0.1:4318`; traces go to its `/v1/traces`), as
    /// `OTEL_EXPORTER_OTLP_ENDPOINT` gives it. Traces are off unless this or the variable is set.
    pub endpoint: Option<String>,
    /// The service name the traces carry (`agentry` by default).
    pub service_name: Option<String>,
    /// Whether spans carry what was said: the messages sent to the model, its answers, the
    /// tools' arguments and results (off by default).
    pub include_content: Option<bool>,
}

/// The traces this process sends, while it runs.
pub struct Traces {
    provider: SdkTracerProvider,
    include_content: bool,
}

impl Traces {
    /// The traces the environment and `settings` ask for, or `None` when they are off.
    pub fn configured(settings: &TelemetrySettings) -> Result<Option<Traces>, ExporterBuildError> {
        let flag = |name: &str| std::env::var(name).ok().map(|v| v.trim().to_lowercase());
        if flag("OTEL_SDK_DISABLED").as_deref() == Some("true")
            || flag("OTEL_TRACES_EXPORTER").as_deref() == Some("none")
        {
            return Ok(None);
        }
        let from_environment = [
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
            "OTEL_EXPORTER_OTLP_ENDPOINT",
        ]
        .iter()
        .any(|name| std::env::var_os(name).is_some_and(|v| !v.is_empty()));
        let mut exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_protocol(Protocol::HttpBinary);
        match &settings.endpoint {
            // The variables take the configuration's place (the exporter reads them).
            _ if from_environment => {}
            Some(endpoint) => {
                exporter =
                    exporter.with_endpoint(format!("{}/v1/traces", endpoint.trim_end_matches('/')));
            }
            None => return Ok(None),
        }
        let exporter = exporter.build()?;
        let mut resource = Resource::builder();
        if std::env::var_os("OTEL_SERVICE_NAME").is_none() {
            let name = settings.service_name.as_deref().unwrap_or("agentry");
            resource = resource.with_service_name(name.to_owned());
        }
        let exporter = InBackground::new(exporter).map_err(|error| {
            ExporterBuildError::InternalFailure(format!("no runtime for the exporter: {error}"))
        })?;
        let batches = BatchSpanProcessor::builder(exporter)
            .with_batch_config(batch_config())
            .build();
        let provider = SdkTracerProvider::builder()
            .with_span_processor(batches)
            .with_resource(resource.build())
            .build();
        Ok(Some(Traces {
            provider,
            include_content: settings.include_content.unwrap_or(false),
        }))
    }

    /// The layer that turns agentry's spans (and the logs in them, from `INFO` up, but a chat's
    /// start and end, which its span shows) into OpenTelemetry spans, what was said in them
    /// only when `include_content` is set.
    pub fn layer<S>(&self) -> impl Layer<S> + use<S>
    where
        S: tracing::Subscriber + for<'span> LookupSpan<'span>,
    {
        let mut targets = Targets::new()
            .with_target("agentry", Level::INFO)
            .with_target(agentry::telemetry::CHAT_LOG_TARGET, Level::WARN);
        if self.include_content {
            targets = targets.with_target(agentry::telemetry::CONTENT_TARGET, Level::TRACE);
        }
        let layer = tracing_opentelemetry::layer()
            .with_tracer(self.provider.tracer("agentry"))
            .with_location(false)
            .with_threads(false)
            // The module a span was made in says nothing the span's name does not.
            .with_target(false)
            .with_tracked_inactivity(false)
            // Nothing else here reads OpenTelemetry's current context: entering a span (each
            // poll of a chat) need not set it.
            .with_context_activation(false);
        unentered::Unentered(layer.with_filter(targets))
    }

    /// Sends the spans not yet sent, and stops. Must be called outside a Tokio runtime.
    pub fn shutdown(self) {
        if let Err(error) = self.provider.shutdown() {
            tracing::warn!("traces not all sent: {error}");
        }
    }
}

/// The most spans sent in one export, unless `OTEL_BSP_MAX_EXPORT_BATCH_SIZE` says otherwise.
/// The SDK's 512 has the exporter's thread take the core for milliseconds at a time, and
/// turn over megabytes there, while each export's request costs the same whatever its size:
/// in the load bench 16 spans a request cost the exporter's thread twice the CPU time 64 do,
/// and 512 saved little more.
const EXPORT_BATCH: usize = 64;

/// The batch processor's settings: the SDK's (and the standard `OTEL_BSP_*` variables'), with
/// batches of [`EXPORT_BATCH`] spans unless the variables set their size.
fn batch_config() -> BatchConfig {
    let config = BatchConfigBuilder::default();
    if std::env::var_os("OTEL_BSP_MAX_EXPORT_BATCH_SIZE").is_some() {
        config.build()
    } else {
        config.with_max_export_batch_size(EXPORT_BATCH).build()
    }
}

/// How much less the exporter's thread counts to the scheduler than the chats' threads (a nice
/// value): with the cores busy, a chat's next chunk goes out before a batch of finished spans.
const EXPORT_NICENESS: i32 = 10;

/// An exporter run in the background, on the batch processor's own thread alone: that thread
/// lowers its scheduling priority before its first export, and drives the exporter's HTTP
/// client itself (on a runtime of its own), so that turning traces on costs the chats CPU time
/// only where it is spare, and no hand-over to another thread per export.
#[derive(Debug)]
struct InBackground<E> {
    exporter: E,
    runtime: tokio::runtime::Runtime,
    lowered: Once,
}

impl<E> InBackground<E> {
    fn new(exporter: E) -> std::io::Result<Self> {
        Ok(Self {
            exporter,
            runtime: tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?,
            lowered: Once::new(),
        })
    }
}

impl<E: SpanExporter> SpanExporter for InBackground<E> {
    fn export(
        &self,
        batch: Vec<SpanData>,
    ) -> impl std::future::Future<Output = OTelSdkResult> + Send {
        self.lowered.call_once(lower_this_threads_priority);
        // The processor's thread waits for the export anyway: it runs here, to its end.
        std::future::ready(self.runtime.block_on(self.exporter.export(batch)))
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.exporter.shutdown_with_timeout(timeout)
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.exporter.force_flush()
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.exporter.set_resource(resource);
    }
}

/// Lowers the calling thread's scheduling priority by [`EXPORT_NICENESS`] (Linux: a thread's
/// nice value is its own); elsewhere, leaves it.
#[allow(unsafe_code)]
fn lower_this_threads_priority() {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: `gettid` and `setpriority` take and return plain integers; `PRIO_PROCESS`
        // with a thread id changes that one thread's nice value, which touches no memory of
        // ours. A failure (not allowed to) leaves the priority as it was.
        let lowered = unsafe {
            let thread = libc::gettid();
            let now = libc::getpriority(libc::PRIO_PROCESS as _, thread as libc::id_t);
            libc::setpriority(
                libc::PRIO_PROCESS as _,
                thread as libc::id_t,
                now.saturating_add(EXPORT_NICENESS),
            )
        };
        if lowered != 0 {
            tracing::debug!("the trace exporter's priority stays as it was");
        }
    }
}

#[cfg(test)]
#[cfg(target_os = "linux")]
mod tests {
    use super::*;

    /// The nice value of the calling thread, from `/proc`.
    fn niceness() -> i64 {
        let thread = std::fs::read_to_string("/proc/thread-self/stat").unwrap();
        // The fields after the command's closing parenthesis; nice is the 19th field overall.
        let after = thread.rsplit_once(')').unwrap().1;
        after.split_whitespace().nth(16).unwrap().parse().unwrap()
    }

    #[test]
    fn the_exporting_thread_alone_is_lowered() {
        let before = niceness();
        let lowered = std::thread::spawn(|| {
            lower_this_threads_priority();
            niceness()
        })
        .join()
        .unwrap();
        assert_eq!(lowered, (before + i64::from(EXPORT_NICENESS)).min(19));
        assert_eq!(niceness(), before, "other threads keep theirs");
    }
}
