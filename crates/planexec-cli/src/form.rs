//! An MCP server's elicitation form at the terminal: each field of its flat
//! schema asked in turn, its answer read as the field's type (a number, a
//! yes/no, one of its options, a comma-separated list of them), Enter for
//! the default or to leave an optional field out.

use serde_json::{json, Map, Value};

/// One field of a form.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    pub name: String,
    pub label: String,
    pub kind: Kind,
    pub default: Option<Value>,
    pub required: bool,
}

/// What a field's answer is.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    Text,
    Integer,
    Number,
    YesNo,
    /// One of these values (with what people read for each).
    OneOf(Vec<(String, String)>),
    /// Any of these values, comma-separated.
    AnyOf(Vec<(String, String)>),
}

/// The options an enum schema offers: `enum` values, or `oneOf`/`anyOf` consts with titles.
fn options(schema: &Value) -> Option<Vec<(String, String)>> {
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        return Some(
            values
                .iter()
                .filter_map(Value::as_str)
                .map(|v| (v.to_string(), v.to_string()))
                .collect(),
        );
    }
    let listed = schema.get("oneOf").or_else(|| schema.get("anyOf"))?.as_array()?;
    Some(
        listed
            .iter()
            .filter_map(|o| {
                let value = o.get("const")?.as_str()?.to_string();
                let title = o.get("title").and_then(Value::as_str).unwrap_or(&value).to_string();
                Some((value, title))
            })
            .collect(),
    )
}

/// The fields of a flat object schema, in its order.
pub fn fields(schema: &Value) -> Vec<Field> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    properties
        .iter()
        .map(|(name, p)| {
            let kind = match (p.get("type").and_then(Value::as_str), options(p)) {
                (Some("array"), _) => Kind::AnyOf(p.get("items").and_then(options).unwrap_or_default()),
                (_, Some(options)) => Kind::OneOf(options),
                (Some("integer"), _) => Kind::Integer,
                (Some("number"), _) => Kind::Number,
                (Some("boolean"), _) => Kind::YesNo,
                _ => Kind::Text,
            };
            let label = ["description", "title"]
                .iter()
                .find_map(|k| p.get(*k).and_then(Value::as_str))
                .unwrap_or(name)
                .to_string();
            Field {
                name: name.clone(),
                label,
                kind,
                default: p.get("default").cloned(),
                required: required.contains(&name.as_str()),
            }
        })
        .collect()
}

/// The prompt for `field`: `  name: what it is (a, b or c) [default]: `.
pub fn prompt(field: &Field) -> String {
    let shown = |options: &[(String, String)]| {
        options
            .iter()
            .map(|(v, t)| if v == t { v.clone() } else { format!("{v} = {t}") })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let hint = match &field.kind {
        Kind::Text => String::new(),
        Kind::Integer => " (a whole number)".to_string(),
        Kind::Number => " (a number)".to_string(),
        Kind::YesNo => " (y/n)".to_string(),
        Kind::OneOf(o) => format!(" (one of: {})", shown(o)),
        Kind::AnyOf(o) => format!(" (any of, comma-separated: {})", shown(o)),
    };
    let default = match (&field.default, field.required) {
        (Some(d), _) => format!(" [{d}]"),
        (None, true) => " (required)".to_string(),
        (None, false) => " [Enter to leave out]".to_string(),
    };
    format!("  {}: {}{hint}{default}: ", field.name, field.label)
}

/// `input` as `field`'s value: `Ok(None)` leaves it out, `Err` says what to type instead.
pub fn parse(field: &Field, input: &str) -> Result<Option<Value>, String> {
    let input = input.trim();
    if input.is_empty() {
        return match (&field.default, field.required) {
            (Some(d), _) => Ok(Some(d.clone())),
            (None, true) => Err(format!("{} is required", field.name)),
            (None, false) => Ok(None),
        };
    }
    let pick = |options: &[(String, String)], text: &str| {
        options
            .iter()
            .find(|(v, t)| v.eq_ignore_ascii_case(text) || t.eq_ignore_ascii_case(text))
            .map(|(v, _)| Value::String(v.clone()))
            .ok_or_else(|| format!("`{text}` is not one of the options"))
    };
    let value = match &field.kind {
        Kind::Text => Value::String(input.to_string()),
        Kind::Integer => json!(input
            .parse::<i64>()
            .map_err(|_| format!("`{input}` is not a whole number"))?),
        Kind::Number => json!(input.parse::<f64>().map_err(|_| format!("`{input}` is not a number"))?),
        Kind::YesNo => match input.to_ascii_lowercase().as_str() {
            "y" | "yes" | "true" => Value::Bool(true),
            "n" | "no" | "false" => Value::Bool(false),
            _ => return Err("answer y or n".to_string()),
        },
        Kind::OneOf(options) => pick(options, input)?,
        Kind::AnyOf(options) => Value::Array(
            input
                .split(',')
                .map(|part| pick(options, part.trim()))
                .collect::<Result<_, _>>()?,
        ),
    };
    Ok(Some(value))
}

/// The answers as the object the server asked for.
pub fn object(answers: Vec<(String, Value)>) -> Value {
    Value::Object(answers.into_iter().collect::<Map<String, Value>>())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_of_field_reads_its_answer_or_says_what_to_type() {
        let schema = json!({"type": "object", "required": ["name"], "properties": {
            "name": {"type": "string", "description": "Your name"},
            "n": {"type": "integer", "default": 42},
            "ok": {"type": "boolean"},
            "hero": {"type": "string", "oneOf": [{"const": "hero-1", "title": "Superman"}]},
            "tools": {"type": "array", "items": {"type": "string", "enum": ["Guitar", "Piano"]}}}});
        let f = fields(&schema);
        assert_eq!(f[0].label, "Your name");
        assert!(parse(&f[0], "").unwrap_err().contains("required"));
        assert_eq!(parse(&f[1], "").unwrap(), Some(json!(42)));
        assert!(parse(&f[1], "x").unwrap_err().contains("whole number"));
        assert_eq!(parse(&f[2], "y").unwrap(), Some(json!(true)));
        assert_eq!(parse(&f[2], "").unwrap(), None);
        assert_eq!(parse(&f[3], "superman").unwrap(), Some(json!("hero-1")));
        assert_eq!(parse(&f[4], "piano, guitar").unwrap(), Some(json!(["Piano", "Guitar"])));
        assert!(prompt(&f[3]).contains("(one of: hero-1 = Superman)"));
    }
}
