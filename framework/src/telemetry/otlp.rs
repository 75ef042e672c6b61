//! The chats' spans sent over OTLP (HTTP/protobuf) to an OpenTelemetry collector, off unless
//! configured: by the standard `OTEL_EXPORTER_OTLP_ENDPOINT` (or
//! `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, with `OTEL_EXPORTER_OTLP_HEADERS` and
//! `OTEL_SERVICE_NAME`), or by `[telemetry]` in the configuration. `OTEL_SDK_DISABLED=true` or
//! `OTEL_TRACES_EXPORTER=none` turn them off.
//!
//! ```no_run
//! use agentry::config::TelemetrySettings;
//! use agentry::telemetry::otlp::Traces;
//! use tracing_subscriber::layer::SubscriberExt;
//! use tracing_subscriber::util::SubscriberInitExt;
//!
//! // Before any Tokio runtime starts (the exporter's HTTP client blocks).
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

use crate::config::TelemetrySettings;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{ExporterBuildError, Protocol, WithExportConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing::Level;
use tracing_subscriber::Layer;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::registry::LookupSpan;

/// The traces this process sends, while it runs.
pub struct Traces {
    provider: SdkTracerProvider,
    include_content: bool,
}

impl Traces {
    /// The traces the environment and `settings` ask for, or `None` when they are off. Must be
    /// called outside a Tokio runtime (the exporter's HTTP client blocks).
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
        let provider = SdkTracerProvider::builder()
            .with_batch_exporter(exporter)
            .with_resource(resource.build())
            .build();
        Ok(Some(Traces {
            provider,
            include_content: settings.include_content.unwrap_or(false),
        }))
    }

    /// The layer that turns agentry's spans (and the logs in them, from `INFO` up) into
    /// OpenTelemetry spans, what was said in them only when `include_content` is set.
    pub fn layer<S>(&self) -> impl Layer<S> + use<S>
    where
        S: tracing::Subscriber + for<'span> LookupSpan<'span>,
    {
        let mut targets = Targets::new().with_target("agentry", Level::INFO);
        if self.include_content {
            targets = targets.with_target(super::CONTENT_TARGET, Level::TRACE);
        }
        tracing_opentelemetry::layer()
            .with_tracer(self.provider.tracer("agentry"))
            .with_location(false)
            .with_threads(false)
            // The module a span was made in says nothing the span's name does not.
            .with_target(false)
            .with_tracked_inactivity(false)
            // Nothing else here reads OpenTelemetry's current context: entering a span (each
            // poll of a chat) need not set it.
            .with_context_activation(false)
            .with_filter(targets)
    }

    /// Sends the spans not yet sent, and stops. Must be called outside a Tokio runtime.
    pub fn shutdown(self) {
        if let Err(error) = self.provider.shutdown() {
            tracing::warn!("traces not all sent: {error}");
        }
    }
}
