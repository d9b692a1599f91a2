//! JSON Schema → GBNF grammar for llama.cpp's constrained sampling.
//!
//! Only the subset planexec's schemas use: objects with properties (written in
//! schema order, each at most once, the optional ones perhaps not at all, in
//! one fixed layout: a space after `:` and `,`, none inside brackets, the way
//! the prompts write JSON), strings, numbers, integers, booleans, null,
//! `enum`, `const`, type lists, arrays, nested objects, `anyOf`/`oneOf` and
//! local `$ref`s; anything else becomes "any JSON value". No length bounds
//! are emitted: bounded repetitions made sampling ~20x slower here. The fixed
//! layout leaves the model no choice between JSON's punctuation and the next
//! key, so the engine writes those runs without sampling them (`forced`).

use std::collections::HashMap;

use serde_json::{Map, Value};

/// Schema keyword (planexec's own) on a string: the step ids its `{{...}}`
/// references may name. Any other `{{` cannot be written.
pub const REFS_KEY: &str = "x-planexec-refs";

/// Shared rules every grammar gets.
const BASE: &str = r#"ws ::= " "
string ::= "\"" char* "\""
char ::= [^"\\\x7F\x00-\x1F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F])
integer ::= "-"? ("0" | [1-9] [0-9]*)
number ::= integer ("." [0-9]+)? ([eE] [-+]? [0-9]+)?
boolean ::= "true" | "false"
null ::= "null"
value ::= object | array | string | number | boolean | null
object ::= "{" (string ":" ws value ("," ws string ":" ws value)*)? "}"
array ::= "[" (value ("," ws value)*)? "]"
"#;

struct Builder<'a> {
    root: &'a Value,
    rules: Vec<(String, String)>,
    named: HashMap<String, String>,
}

/// A GBNF literal for `text`.
fn literal(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A JSON value written out as a GBNF literal (for `const` and `enum`).
fn json_literal(v: &Value) -> String {
    literal(&v.to_string())
}

impl<'a> Builder<'a> {
    /// A rule name for `schema`, defining it on first use.
    fn rule(&mut self, schema: &Value) -> String {
        let key = schema.to_string();
        if let Some(name) = self.named.get(&key) {
            return name.clone();
        }
        let name = format!("r{}", self.rules.len() + 1);
        self.named.insert(key, name.clone());
        self.rules.push((name.clone(), String::new()));
        let body = self.expr(schema);
        if let Some(slot) = self.rules.iter_mut().find(|(n, _)| *n == name) {
            slot.1 = body;
        }
        name
    }

    fn resolve(&self, reference: &str) -> Option<&'a Value> {
        let path = reference.strip_prefix('#')?;
        self.root.pointer(path)
    }

    /// The right-hand side of a rule for `schema`.
    fn expr(&mut self, schema: &Value) -> String {
        let Some(map) = schema.as_object() else {
            return "value".to_string();
        };
        if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
            return match self.resolve(reference) {
                Some(target) => self.rule(target),
                None => "value".to_string(),
            };
        }
        if let Some(c) = map.get("const") {
            return json_literal(c);
        }
        if let Some(options) = map.get("enum").and_then(Value::as_array) {
            return options.iter().map(json_literal).collect::<Vec<_>>().join(" | ");
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(options) = map.get(key).and_then(Value::as_array) {
                return options.iter().map(|o| self.rule(o)).collect::<Vec<_>>().join(" | ");
            }
        }
        match map.get("type") {
            Some(Value::Array(types)) => types
                .iter()
                .map(|t| {
                    let mut single = map.clone();
                    single.insert("type".into(), t.clone());
                    self.rule(&Value::Object(single))
                })
                .collect::<Vec<_>>()
                .join(" | "),
            Some(Value::String(t)) => self.typed(t, map),
            _ if map.contains_key("properties") => self.typed("object", map),
            _ => "value".to_string(),
        }
    }

    /// A string whose `{{...}}` may only be a reference to one of `ids` (with `.field`s).
    fn reference_string(&mut self, ids: &[Value]) -> String {
        let key = format!("refs:{}", Value::Array(ids.to_vec()));
        if let Some(name) = self.named.get(&key) {
            return name.clone();
        }
        let name = format!("r{}", self.rules.len() + 1);
        self.named.insert(key, name.clone());
        let plain =
            r#"[^"\\{\x7F\x00-\x1F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F])"#;
        // A single `{` is fine; `{{` must open a reference.
        let brace = r#""{" [^{"\\\x7F\x00-\x1F]"#;
        let quote = r#""\"""#;
        let body = if ids.is_empty() {
            format!("{quote} ({plain} | {brace})* {quote}")
        } else {
            let alternatives = ids
                .iter()
                .filter_map(Value::as_str)
                .map(literal)
                .collect::<Vec<_>>()
                .join(" | ");
            format!("{quote} ({plain} | {brace} | \"{{{{\" ({alternatives}) (\".\" [a-zA-Z0-9_]+)* \"}}}}\")* {quote}")
        };
        self.rules.push((name.clone(), body));
        name
    }

    fn typed(&mut self, t: &str, map: &Map<String, Value>) -> String {
        match t {
            "string" => match map.get(REFS_KEY).and_then(Value::as_array) {
                Some(ids) => self.reference_string(ids),
                None => "string".to_string(),
            },
            "integer" => "integer".to_string(),
            "number" => "number".to_string(),
            "boolean" => "boolean".to_string(),
            "null" => "null".to_string(),
            "array" => {
                // Positional items (`prefixItems` with `items: false`): each in turn, all but
                // the first `minItems` optional; one per line, as the prompts write a plan's steps.
                if let Some(prefix) = map.get("prefixItems").and_then(Value::as_array) {
                    let min = map.get("minItems").and_then(Value::as_u64).unwrap_or(0) as usize;
                    let names: Vec<String> = prefix.iter().map(|p| self.rule(p)).collect();
                    let mut tail = String::new();
                    for (k, name) in names.iter().enumerate().rev() {
                        let sep = if k == 0 { "" } else { "\",\\n \" " };
                        let body = if tail.is_empty() {
                            format!("{sep}{name}")
                        } else {
                            format!("{sep}{name} {tail}")
                        };
                        tail = if k < min { body } else { format!("({body})?") };
                    }
                    return format!("\"[\\n \" {} \"\\n]\"", tail.trim());
                }
                let item = match map.get("items") {
                    Some(items) => self.rule(items),
                    None => "value".to_string(),
                };
                match map.get("maxItems").and_then(Value::as_u64) {
                    Some(0) => "\"[]\"".to_string(),
                    Some(1) => format!("\"[\" {item}? \"]\""),
                    Some(max) => format!("\"[\" ({item} (\",\" ws {item}){{0,{}}})? \"]\"", max - 1),
                    None => format!("\"[\" ({item} (\",\" ws {item})*)? \"]\""),
                }
            }
            "object" => {
                let Some(props) = map.get("properties").and_then(Value::as_object) else {
                    return "object".to_string();
                };
                let required: Vec<&str> = map
                    .get("required")
                    .and_then(Value::as_array)
                    .map(|r| r.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                let fields: Vec<(String, bool)> = props
                    .iter()
                    .map(|(key, sub)| {
                        let value = self.rule(sub);
                        let pair = format!("{} \":\" ws {value}", literal(&format!("\"{key}\"")));
                        (pair, required.contains(&key.as_str()))
                    })
                    .collect();
                object_body(&fields)
            }
            _ => "value".to_string(),
        }
    }
}

/// The body of an object rule with `fields` (each a `"key": value` rule and
/// whether it is required), in schema order: each written at most once, an
/// optional one perhaps not at all, a comma between two.
fn object_body(fields: &[(String, bool)]) -> String {
    // What may follow once some field is written: each later field with its
    // comma, required or optional.
    let rest = |from: usize| -> String {
        fields[from..]
            .iter()
            .map(|(pair, required)| match required {
                true => format!("\",\" ws {pair}"),
                false => format!("(\",\" ws {pair})?"),
            })
            .collect::<Vec<_>>()
            .join(" ")
    };
    // The first field written is any up to (and including) the first required one.
    let first_required = fields.iter().position(|(_, r)| *r).unwrap_or(fields.len());
    let firsts: Vec<String> = fields
        .iter()
        .enumerate()
        .take((first_required + 1).min(fields.len()))
        .map(|(k, (pair, _))| format!("{pair} {}", rest(k + 1)).trim().to_string())
        .collect();
    // With no required field, the object may be empty.
    let may_be_empty = if first_required == fields.len() { "?" } else { "" };
    match firsts.as_slice() {
        [] => "\"{}\"".to_string(),
        [only] if may_be_empty.is_empty() => format!("\"{{\" {only} \"}}\""),
        many => format!("\"{{\" ({}){may_be_empty} \"}}\"", many.join(" | ")),
    }
}

/// Keywords that constrain values and that [`from_schema`] does not express
/// (it would write "any JSON value" or drop the constraint).
const UNCOVERED: [&str; 7] = [
    "allOf",
    "not",
    "if",
    "pattern",
    "patternProperties",
    "dependentSchemas",
    "propertyNames",
];

/// Keywords whose value is data, not a schema (its keys are not keywords).
const VALUE_KEYWORDS: [&str; 4] = ["const", "enum", "default", "examples"];

/// Keywords whose value maps names to schemas: the names are a tool's own
/// (an argument may well be called `pattern` or `maxLength`), not keywords.
const SCHEMA_MAPS: [&str; 4] = ["properties", "$defs", "definitions", "patternProperties"];

/// Whether [`from_schema`] describes `schema` well: no keyword of
/// [`UNCOVERED`], no `$ref` outside the document, and no map-typed object
/// (`additionalProperties` a schema, no `properties`). Length bounds are
/// left out on purpose and do not count.
pub fn covers(schema: &Value) -> bool {
    match schema {
        Value::Array(items) => items.iter().all(covers),
        Value::Object(map) => {
            let external_ref = map
                .get("$ref")
                .and_then(Value::as_str)
                .is_some_and(|r| !r.starts_with('#'));
            let map_type =
                !map.contains_key("properties") && map.get("additionalProperties").is_some_and(Value::is_object);
            !external_ref
                && !map_type
                && !UNCOVERED.iter().any(|k| map.contains_key(*k))
                && map.iter().all(|(k, v)| match k.as_str() {
                    k if VALUE_KEYWORDS.contains(&k) => true,
                    k if SCHEMA_MAPS.contains(&k) => v.as_object().is_none_or(|m| m.values().all(covers)),
                    _ => covers(v),
                })
        }
        _ => true,
    }
}

/// `schema` without length and count bounds: grammars that count characters
/// or items sampled ~20x slower here, and the arguments are validated anyway.
pub fn without_length_bounds(schema: &Value) -> Value {
    match schema {
        Value::Array(items) => Value::Array(items.iter().map(without_length_bounds).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| !matches!(k.as_str(), "minLength" | "maxLength" | "minItems" | "maxItems"))
                .map(|(k, v)| {
                    let v = match (k.as_str(), v) {
                        (k, _) if VALUE_KEYWORDS.contains(&k) => v.clone(),
                        (k, Value::Object(named)) if SCHEMA_MAPS.contains(&k) => Value::Object(
                            named
                                .iter()
                                .map(|(name, sub)| (name.clone(), without_length_bounds(sub)))
                                .collect(),
                        ),
                        _ => without_length_bounds(v),
                    };
                    (k.clone(), v)
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

/// A grammar whose `root` accepts exactly the compact JSON documents `schema` describes.
pub fn from_schema(schema: &Value) -> String {
    let mut b = Builder {
        root: schema,
        rules: Vec::new(),
        named: HashMap::new(),
    };
    let top = b.expr(schema);
    let mut out = format!("root ::= {top}\n");
    for (name, body) in &b.rules {
        out.push_str(&format!("{name} ::= {body}\n"));
    }
    out.push_str(BASE);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn covers_says_where_the_subset_falls_short() {
        let plain = json!({"type": "object", "properties": {"path": {"type": "string", "maxLength": 9}, "n": {"type": "integer"}}, "required": ["path"]});
        assert!(
            covers(&plain),
            "optional properties and length bounds are left out on purpose"
        );
        for (what, schema) in [
            ("allOf", json!({"allOf": [{"type": "object"}]})),
            (
                "pattern",
                json!({"type": "object", "properties": {"d": {"type": "string", "pattern": "^a"}}}),
            ),
            (
                "map",
                json!({"type": "object", "additionalProperties": {"type": "string"}}),
            ),
            ("external ref", json!({"$ref": "https://example.com/s.json"})),
            (
                "deep",
                json!({"anyOf": [{"type": "object", "properties": {"x": {"not": {"type": "null"}}}}]}),
            ),
        ] {
            assert!(!covers(&schema), "{what}: {schema}");
        }
        assert!(
            covers(&json!({"const": {"allOf": 1}})),
            "a constant is a value, not a schema"
        );
        let named =
            json!({"type": "object", "properties": {"pattern": {"type": "string"}, "not": {"type": "boolean"}}});
        assert!(covers(&named), "arguments called like keywords are arguments");
    }

    #[test]
    fn length_bounds_are_dropped_everywhere_but_in_values() {
        let schema = json!({"type": "array", "maxItems": 3, "items": {"type": "string", "minLength": 2}, "default": [{"minLength": 1}]});
        assert_eq!(
            without_length_bounds(&schema),
            json!({"type": "array", "items": {"type": "string"}, "default": [{"minLength": 1}]})
        );
        let named = json!({"type": "object", "properties": {"maxLength": {"type": "integer", "maxLength": 3}}});
        assert_eq!(
            without_length_bounds(&named),
            json!({"type": "object", "properties": {"maxLength": {"type": "integer"}}}),
            "an argument called maxLength is kept"
        );
    }
    use serde_json::json;

    #[test]
    fn objects_keep_property_order_and_optional_ones_may_be_left_out() {
        let g = from_schema(&json!({
            "type": "object",
            "properties": {"b": {"type": "string"}, "a": {"type": "integer"}, "opt": {"type": "string"}},
            "required": ["a", "b"]
        }));
        assert!(
            g.starts_with("root ::= \"{\" \"\\\"b\\\"\" \":\" ws r1 \",\" ws \"\\\"a\\\"\" \":\" ws r2 (\",\" ws \"\\\"opt\\\"\" \":\" ws r1)? \"}\"\n"),
            "{g}"
        );
        assert!(g.contains("r1 ::= string\n") && g.contains("r2 ::= integer\n"), "{g}");
    }

    /// The documents a grammar accepts, checked by a small matcher of the
    /// GBNF subset [`object_body`] writes: every optional field may be left
    /// out, none written twice or out of order.
    #[test]
    fn an_object_of_optional_fields_accepts_each_subset_in_order() {
        let fields = vec![
            ("\"a\"".to_string(), false),
            ("\"b\"".to_string(), true),
            ("\"c\"".to_string(), false),
        ];
        let body = object_body(&fields);
        assert_eq!(body, r#""{" ("a" "," ws "b" ("," ws "c")? | "b" ("," ws "c")?) "}""#);
        let all_optional = object_body(&[("\"a\"".to_string(), false), ("\"b\"".to_string(), false)]);
        assert_eq!(all_optional, r#""{" ("a" ("," ws "b")? | "b")? "}""#);
        assert_eq!(object_body(&[]), r#""{}""#);
    }

    #[test]
    fn enums_consts_unions_arrays_and_refs() {
        let schema = json!({
            "$defs": {"Id": {"type": "string"}},
            "type": "object",
            "properties": {
                "tool": {"type": "string", "enum": ["read_file", "calc\"x"]},
                "kind": {"const": "plan"},
                "note": {"type": ["string", "null"]},
                "ids": {"type": "array", "items": {"$ref": "#/$defs/Id"}},
                "step": {"anyOf": [{"type": "null"}, {"type": "boolean"}]}
            },
            "required": ["tool", "kind", "note", "ids", "step"]
        });
        let g = from_schema(&schema);
        assert!(g.contains("\"\\\"read_file\\\"\" | \"\\\"calc\\\\\\\"x\\\"\""), "{g}");
        assert!(g.contains("\"\\\"plan\\\"\""), "{g}");
        assert!(g.contains("::= string\n") && g.contains("::= null\n"), "{g}");
        assert!(g.contains("\"[\" ("), "{g}");
        // Every referenced rule is defined.
        for token in g.split(|c: char| !c.is_alphanumeric()) {
            if token.starts_with('r') && token[1..].chars().all(|c| c.is_ascii_digit()) && token.len() > 1 {
                assert!(g.contains(&format!("\n{token} ::= ")), "{token} undefined in\n{g}");
            }
        }
    }
}

#[cfg(test)]
mod shape_tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn positional_items_and_bounded_arrays() {
        let g = from_schema(&json!({
            "type": "array", "prefixItems": [{"const": "a"}, {"const": "b"}, {"const": "c"}], "items": false, "minItems": 1
        }));
        assert!(
            g.starts_with("root ::= \"[\\n \" r1 (\",\\n \" r2 (\",\\n \" r3)?)? \"\\n]\"\n"),
            "{g}"
        );
        let g = from_schema(&json!({"type": "array", "items": {"type": "string"}, "maxItems": 3}));
        assert!(g.starts_with("root ::= \"[\" (r1 (\",\" ws r1){0,2})? \"]\"\n"), "{g}");
        let g = from_schema(&json!({"type": "array", "maxItems": 0}));
        assert!(g.starts_with("root ::= \"[]\"\n"), "{g}");
    }
}

#[cfg(test)]
mod reference_tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reference_strings_name_only_the_given_steps() {
        let g = from_schema(&json!({"type": "string", "x-planexec-refs": ["s1", "s2"]}));
        let rule = g.lines().find(|l| l.starts_with("r1 ::= ")).unwrap();
        assert!(
            rule.contains(r#""{{" ("s1" | "s2") ("." [a-zA-Z0-9_]+)* "}}""#),
            "{rule}"
        );
        assert!(!g.contains('\0'), "GBNF escapes, not raw control bytes");
        let none = from_schema(&json!({"type": "string", "x-planexec-refs": []}));
        assert!(
            !none
                .lines()
                .find(|l| l.starts_with("r1 ::= "))
                .unwrap()
                .contains("\"{{\""),
            "{none}"
        );
    }
}
