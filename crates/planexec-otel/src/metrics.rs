//! OpenTelemetry's GenAI client metrics, from the same events as the spans:
//! `gen_ai.client.token.usage` (input and output tokens of each model call)
//! and `gen_ai.client.operation.duration` (seconds, with `error.type` when the
//! call failed), with the operation, provider, model and planexec's role.

use opentelemetry::metrics::{Histogram, MeterProvider as _};
use opentelemetry::KeyValue;
use opentelemetry_sdk::metrics::SdkMeterProvider;
use planexec::events::Event;

/// The semantic conventions' advised bucket boundaries.
const TOKEN_BUCKETS: [f64; 14] = [
    1.0, 4.0, 16.0, 64.0, 256.0, 1024.0, 4096.0, 16384.0, 65536.0, 262144.0, 1048576.0, 4194304.0, 16777216.0,
    67108864.0,
];
const SECOND_BUCKETS: [f64; 14] = [
    0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
];

pub(crate) struct ModelMetrics {
    tokens: Histogram<u64>,
    duration: Histogram<f64>,
}

impl ModelMetrics {
    pub fn new(provider: &SdkMeterProvider) -> ModelMetrics {
        let meter = provider.meter("planexec");
        ModelMetrics {
            tokens: meter
                .u64_histogram("gen_ai.client.token.usage")
                .with_unit("{token}")
                .with_description("Tokens used by a model call, by token type")
                .with_boundaries(TOKEN_BUCKETS.to_vec())
                .build(),
            duration: meter
                .f64_histogram("gen_ai.client.operation.duration")
                .with_unit("s")
                .with_description("How long a model call took")
                .with_boundaries(SECOND_BUCKETS.to_vec())
                .build(),
        }
    }

    pub fn record(&self, event: &Event) {
        match event {
            Event::ModelCalled {
                role,
                provider,
                model,
                prompt_tokens,
                completion_tokens,
                latency_ms,
                ..
            } => {
                let attributes = common(role.as_str(), provider, model);
                self.duration.record(*latency_ms as f64 / 1000.0, &attributes);
                for (kind, tokens) in [("input", prompt_tokens), ("output", completion_tokens)] {
                    let mut with_type = attributes.clone();
                    with_type.push(KeyValue::new("gen_ai.token.type", kind));
                    self.tokens.record(*tokens, &with_type);
                }
            }
            Event::ModelFailed {
                role,
                provider,
                model,
                latency_ms,
                error_type,
                ..
            } => {
                let mut attributes = common(role.as_str(), provider, model);
                attributes.push(KeyValue::new("error.type", error_type.clone()));
                self.duration.record(*latency_ms as f64 / 1000.0, &attributes);
            }
            _ => {}
        }
    }
}

fn common(role: &'static str, provider: &str, model: &str) -> Vec<KeyValue> {
    vec![
        KeyValue::new("gen_ai.operation.name", "chat"),
        KeyValue::new("gen_ai.provider.name", provider.to_string()),
        KeyValue::new("gen_ai.request.model", model.to_string()),
        KeyValue::new("planexec.role", role),
    ]
}
