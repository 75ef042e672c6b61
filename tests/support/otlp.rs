//! An OpenTelemetry collector for the tests: an OTLP/HTTP receiver on loopback that keeps the
//! exports it gets and decodes their spans (protobuf, with the OpenTelemetry project's
//! `opentelemetry-proto`) when the test reads them, so that receiving costs a bench little.

use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::any_value::Value as AnyValue;
use prost::Message;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// One span as received.
#[derive(Debug, Clone)]
pub struct ReceivedSpan {
    /// Its name.
    pub name: String,
    /// Its id.
    pub span_id: Vec<u8>,
    /// Its parent's id (empty for a root).
    pub parent_span_id: Vec<u8>,
    /// Its trace.
    pub trace_id: Vec<u8>,
    /// Its kind (OTLP's numbering: 1 internal, 3 client).
    pub kind: i32,
    /// Its attributes other than integers, each value as text.
    pub attributes: BTreeMap<String, String>,
    /// Its integer attributes.
    pub integers: BTreeMap<String, i64>,
    /// Its status code (OTLP's numbering: 0 unset, 1 ok, 2 error).
    pub status_code: i32,
    /// The service that sent it (its resource's `service.name`).
    pub service: String,
}

impl ReceivedSpan {
    /// The attribute `key`, if it has it.
    pub fn attribute(&self, key: &str) -> Option<&str> {
        self.attributes.get(key).map(String::as_str)
    }

    /// The integer attribute `key`, if it has it (an integer sent as text is not one).
    pub fn integer(&self, key: &str) -> Option<i64> {
        self.integers.get(key).copied()
    }
}

/// A receiver of OTLP/HTTP traces on 127.0.0.1, serving until the test ends.
pub struct OtlpReceiver {
    url: String,
    exports: Arc<Mutex<Vec<bytes::Bytes>>>,
}

impl OtlpReceiver {
    /// Starts one on a port of its own.
    pub fn start() -> Self {
        let exports = Arc::new(Mutex::new(Vec::new()));
        let kept = exports.clone();
        let app = axum::Router::new().route(
            "/v1/traces",
            axum::routing::post(move |body: bytes::Bytes| {
                let kept = kept.clone();
                async move { receive(&kept, body) }
            }),
        );
        let addr = crate::http::serve_on_own_thread(app);
        Self {
            url: format!("http://{addr}"),
            exports,
        }
    }

    /// The collector's base URL, as `OTEL_EXPORTER_OTLP_ENDPOINT` takes it.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The spans received so far.
    pub fn spans(&self) -> Vec<ReceivedSpan> {
        let exports = self.exports.lock().unwrap().clone();
        exports.iter().flat_map(|export| decode(export)).collect()
    }
}

/// Keeps one export (decoded when read); answers as a collector does.
fn receive(
    kept: &Mutex<Vec<bytes::Bytes>>,
    body: bytes::Bytes,
) -> ([(&'static str, &'static str); 1], Vec<u8>) {
    kept.lock().unwrap().push(body);
    let answer = ExportTraceServiceResponse::default().encode_to_vec();
    ([("content-type", "application/x-protobuf")], answer)
}

/// The spans of one export (which must be one).
fn decode(export: &[u8]) -> Vec<ReceivedSpan> {
    let request = ExportTraceServiceRequest::decode(export).expect("an OTLP trace export");
    let mut spans = Vec::new();
    for resource_spans in request.resource_spans {
        let service = resource_spans
            .resource
            .iter()
            .flat_map(|resource| &resource.attributes)
            .find(|attribute| attribute.key == "service.name")
            .map(|attribute| text(attribute.value.as_ref().and_then(|v| v.value.as_ref())))
            .unwrap_or_default();
        for span in resource_spans
            .scope_spans
            .into_iter()
            .flat_map(|scope| scope.spans)
        {
            let mut attributes = BTreeMap::new();
            let mut integers = BTreeMap::new();
            for attribute in span.attributes {
                match attribute.value.and_then(|v| v.value) {
                    Some(AnyValue::IntValue(number)) => {
                        integers.insert(attribute.key, number);
                    }
                    value => {
                        attributes.insert(attribute.key, text(value.as_ref()));
                    }
                }
            }
            spans.push(ReceivedSpan {
                name: span.name,
                span_id: span.span_id,
                parent_span_id: span.parent_span_id,
                trace_id: span.trace_id,
                kind: span.kind,
                attributes,
                integers,
                status_code: span.status.map_or(0, |status| status.code),
                service: service.clone(),
            });
        }
    }
    spans
}

/// An attribute's value as text.
fn text(value: Option<&AnyValue>) -> String {
    match value {
        Some(AnyValue::StringValue(text)) => text.clone(),
        Some(AnyValue::IntValue(number)) => number.to_string(),
        Some(AnyValue::DoubleValue(number)) => number.to_string(),
        Some(AnyValue::BoolValue(flag)) => flag.to_string(),
        Some(other) => format!("{other:?}"),
        None => String::new(),
    }
}
