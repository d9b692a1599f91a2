//! A tool from an async function over a typed argument struct: the struct's
//! `schemars` schema is the tool's parameters, and the arguments a step hands
//! over are deserialized into it, so a custom tool is one struct and one
//! function instead of a hand-written JSON Schema and a `Value` to pick apart.
//!
//! ```
//! use planexec::tools::{Effect, TypedTool, ToolError};
//! use schemars::JsonSchema;
//! use serde::Deserialize;
//!
//! /// Count the words of a text.
//! #[derive(Deserialize, JsonSchema)]
//! #[serde(deny_unknown_fields)]
//! struct WordCount {
//!     /// The text to count.
//!     text: String,
//! }
//!
//! let tool = TypedTool::new("word_count", "Count the words of a text", Effect::ReadOnly, |a: WordCount| async move {
//!     Ok::<_, ToolError>(a.text.split_whitespace().count())
//! });
//! ```

use std::future::Future;
use std::marker::PhantomData;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use super::{Effect, Tool, ToolError};

/// A [`Tool`] made of a name, a description, an effect class and an async
/// function from the argument struct `A` to anything serializable.
pub struct TypedTool<A, F> {
    name: String,
    description: String,
    effect: Effect,
    idempotent: Option<bool>,
    parameters: Value,
    run: F,
    args: PhantomData<fn(A)>,
}

impl<A, F, Fut, R> TypedTool<A, F>
where
    A: DeserializeOwned + JsonSchema,
    F: Fn(A) -> Fut + Send + Sync,
    Fut: Future<Output = Result<R, ToolError>> + Send,
    R: Serialize,
{
    pub fn new(name: impl Into<String>, description: impl Into<String>, effect: Effect, run: F) -> Self {
        TypedTool {
            name: name.into(),
            description: description.into(),
            effect,
            idempotent: None,
            parameters: parameters_of::<A>(),
            run,
            args: PhantomData,
        }
    }

    /// Say whether running it twice with the same arguments is the same as
    /// once (default: only when it is read-only). A resumed run re-runs an
    /// idempotent step that was in flight at a crash without asking.
    pub fn idempotent(mut self, idempotent: bool) -> Self {
        self.idempotent = Some(idempotent);
        self
    }
}

/// `A`'s JSON Schema as a tool's parameters: an object schema, without the
/// `$schema` and `title` keys that only add tokens to every prompt.
fn parameters_of<A: JsonSchema>() -> Value {
    let mut schema = serde_json::to_value(schemars::schema_for!(A)).unwrap_or(Value::Null);
    if let Some(map) = schema.as_object_mut() {
        map.remove("$schema");
        map.remove("title");
    }
    schema
}

#[async_trait]
impl<A, F, Fut, R> Tool for TypedTool<A, F>
where
    A: DeserializeOwned + JsonSchema + 'static,
    F: Fn(A) -> Fut + Send + Sync,
    Fut: Future<Output = Result<R, ToolError>> + Send,
    R: Serialize,
{
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn parameters(&self) -> Value {
        self.parameters.clone()
    }

    fn effect(&self) -> Effect {
        self.effect
    }

    fn idempotent(&self) -> bool {
        self.idempotent.unwrap_or(self.effect == Effect::ReadOnly)
    }

    async fn call(&self, args: Value) -> Result<Value, ToolError> {
        let args: A = serde_json::from_value(args)
            .map_err(|e| ToolError::invalid_args(format!("the arguments of {} do not fit: {e}", self.name)))?;
        let output = (self.run)(args).await?;
        serde_json::to_value(output)
            .map_err(|e| ToolError::failed(format!("{} returned what cannot be JSON: {e}", self.name)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    /// Scale a number.
    #[derive(Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    struct Scale {
        /// The number.
        value: f64,
        /// How many times over; 2 when not given.
        #[serde(default = "two")]
        times: f64,
    }

    fn two() -> f64 {
        2.0
    }

    fn scale() -> impl Tool {
        TypedTool::new("scale", "Scale a number", Effect::ReadOnly, |a: Scale| async move {
            if !a.value.is_finite() {
                return Err(ToolError::invalid_args("value must be a finite number"));
            }
            Ok(serde_json::json!({ "scaled": a.value * a.times }))
        })
    }

    #[tokio::test]
    async fn arguments_are_deserialized_and_the_output_serialized() {
        let tool = scale();
        let out = tool.call(serde_json::json!({"value": 4, "times": 3})).await.unwrap();
        assert_eq!(out["scaled"], 12.0);
        let out = tool.call(serde_json::json!({"value": 4})).await.unwrap();
        assert_eq!(out["scaled"], 8.0, "a default from serde applies");
        let error = tool.call(serde_json::json!({"value": "four"})).await.unwrap_err();
        assert_eq!(error.kind, super::super::ToolErrorKind::InvalidArgs);
        assert!(
            error.to_string().contains("the arguments of scale do not fit"),
            "{error}"
        );
    }

    #[test]
    fn the_schema_comes_from_the_struct_and_is_checked_by_the_registry() {
        let params = scale().parameters();
        assert_eq!(params["type"], "object");
        assert_eq!(params["required"], serde_json::json!(["value"]));
        assert_eq!(params["properties"]["value"]["description"], "The number.");
        assert_eq!(params["additionalProperties"], false);
        assert!(params.get("$schema").is_none() && params.get("title").is_none());
        let mut registry = super::super::ToolRegistry::new();
        registry.register(std::sync::Arc::new(scale())).unwrap();
        let entry = registry.get("scale").unwrap();
        assert!(entry.check_args(&serde_json::json!({"value": 1}), false).is_empty());
        assert!(!entry
            .check_args(&serde_json::json!({"value": 1, "by": 2}), false)
            .is_empty());
    }
}
