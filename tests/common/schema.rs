//! A small, strict JSON Schema (draft 2020-12) validator for the repository's own schemas
//! (`schema/*.json`), in place of a general crate: it knows exactly the keywords those files
//! use and panics on any other, so a schema edit it cannot read fails loudly instead of
//! being ignored. `$ref` reaches only the schema's own `#/$defs/…`; `pattern` is a `regex`
//! search (unanchored, as JSON Schema reads it). Also included by `src/report/tests.rs`.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::HashMap;

use regex::Regex;
use serde_json::{Map, Value};

/// Keywords that only annotate: read and ignored.
const ANNOTATIONS: &[&str] = &["$schema", "$id", "title", "description"];

/// Keywords whose value is one subschema.
const SUBSCHEMA: &[&str] = &[
    "items",
    "additionalProperties",
    "propertyNames",
    "if",
    "then",
];

/// A schema checked through once (every keyword known, every `$ref` resolved, every pattern
/// compiled), then applied to instances.
pub struct Validator {
    root: Value,
    patterns: HashMap<String, Regex>,
}

impl Validator {
    /// Panics at the first keyword, `$ref`, `type` or pattern it cannot read, naming the
    /// schema path within `name`.
    pub fn new(name: &str, root: Value) -> Validator {
        let mut patterns = HashMap::new();
        check(&root, &root, &format!("{name}#"), &mut patterns);
        Validator { root, patterns }
    }

    /// What is wrong with `instance`, one line per problem, each starting with the JSON
    /// pointer of the value at fault (`/` for the whole). Empty: valid.
    pub fn errors(&self, instance: &Value) -> Vec<String> {
        let mut out = Vec::new();
        self.apply(&self.root, instance, "", &mut out);
        out
    }

    pub fn is_valid(&self, instance: &Value) -> bool {
        self.errors(instance).is_empty()
    }

    fn apply(&self, schema: &Value, v: &Value, at: &str, out: &mut Vec<String>) {
        let map = match schema {
            Value::Bool(true) => return,
            Value::Bool(false) => return err(out, at, "no value is allowed here".into()),
            Value::Object(map) => map,
            other => panic!("not a schema: {other}"),
        };
        for (key, arg) in map {
            match key.as_str() {
                k if ANNOTATIONS.contains(&k) => {}
                "$defs" => {}
                "$ref" => {
                    let target = resolve(&self.root, arg);
                    self.apply(target, v, at, out);
                }
                "type" => {
                    if !types(arg).iter().any(|t| has_type(v, t)) {
                        err(out, at, format!("{v} is not of type {arg}"));
                    }
                }
                "enum" => {
                    let options = arg.as_array().expect("enum is an array");
                    if !options.iter().any(|o| json_eq(o, v)) {
                        err(out, at, format!("{v} is not one of {arg}"));
                    }
                }
                "const" => {
                    if !json_eq(arg, v) {
                        err(out, at, format!("{v} is not {arg}"));
                    }
                }
                "minimum" | "maximum" => {
                    if let (Some(x), Some(bound)) = (v.as_f64(), arg.as_f64()) {
                        let bad = if key == "minimum" {
                            x < bound
                        } else {
                            x > bound
                        };
                        if bad {
                            err(out, at, format!("{v} is outside the {key} {arg}"));
                        }
                    }
                }
                "pattern" => {
                    if let Some(s) = v.as_str() {
                        let p = arg.as_str().expect("pattern is a string");
                        if !self.patterns[p].is_match(s) {
                            err(out, at, format!("{v} does not match {arg}"));
                        }
                    }
                }
                "minItems" => {
                    if let Some(items) = v.as_array() {
                        let min = arg.as_u64().expect("minItems is a count");
                        if (items.len() as u64) < min {
                            err(out, at, format!("{} items, fewer than {min}", items.len()));
                        }
                    }
                }
                "items" => {
                    if let Some(items) = v.as_array() {
                        for (i, item) in items.iter().enumerate() {
                            self.apply(arg, item, &format!("{at}/{i}"), out);
                        }
                    }
                }
                "required" => {
                    if let Some(obj) = v.as_object() {
                        for name in arg.as_array().expect("required is an array") {
                            let name = name.as_str().expect("required names are strings");
                            if !obj.contains_key(name) {
                                err(out, at, format!("the required key {name:?} is missing"));
                            }
                        }
                    }
                }
                "properties" => {
                    if let Some(obj) = v.as_object() {
                        for (name, sub) in arg.as_object().expect("properties is an object") {
                            if let Some(x) = obj.get(name) {
                                self.apply(sub, x, &child(at, name), out);
                            }
                        }
                    }
                }
                "additionalProperties" => {
                    if let Some(obj) = v.as_object() {
                        let named = map.get("properties").and_then(Value::as_object);
                        for (name, x) in obj {
                            if named.is_some_and(|n| n.contains_key(name)) {
                                continue;
                            }
                            if *arg == Value::Bool(false) {
                                err(out, at, format!("the key {name:?} is not allowed"));
                            } else {
                                self.apply(arg, x, &child(at, name), out);
                            }
                        }
                    }
                }
                "propertyNames" => {
                    if let Some(obj) = v.as_object() {
                        for name in obj.keys() {
                            let mut inner = Vec::new();
                            self.apply(arg, &Value::String(name.clone()), at, &mut inner);
                            for e in inner {
                                let e = e.split_once(": ").map_or(e.as_str(), |(_, w)| w);
                                err(out, at, format!("key name {name:?}: {e}"));
                            }
                        }
                    }
                }
                "if" => {
                    let mut inner = Vec::new();
                    self.apply(arg, v, at, &mut inner);
                    if inner.is_empty() {
                        if let Some(then) = map.get("then") {
                            self.apply(then, v, at, out);
                        }
                    }
                }
                "then" => {}
                "oneOf" => {
                    let branches = arg.as_array().expect("oneOf is an array");
                    let mut matched = Vec::new();
                    let mut why = Vec::new();
                    for (i, b) in branches.iter().enumerate() {
                        let mut inner = Vec::new();
                        self.apply(b, v, at, &mut inner);
                        if inner.is_empty() {
                            matched.push(i);
                        } else {
                            why.push(format!("[{i}] {}", inner.join("; ")));
                        }
                    }
                    match matched.len() {
                        1 => {}
                        0 => err(
                            out,
                            at,
                            format!("{v} matches no oneOf branch: {}", why.join(" | ")),
                        ),
                        _ => err(out, at, format!("{v} matches oneOf branches {matched:?}")),
                    }
                }
                other => {
                    panic!("unknown JSON Schema keyword {other:?} (teach tests/common/schema.rs)")
                }
            }
        }
    }
}

fn err(out: &mut Vec<String>, at: &str, what: String) {
    let at = if at.is_empty() { "/" } else { at };
    out.push(format!("{at}: {what}"));
}

/// The JSON pointer of `name` under `at` (RFC 6901 escapes).
fn child(at: &str, name: &str) -> String {
    format!("{at}/{}", name.replace('~', "~0").replace('/', "~1"))
}

/// The subschema a `$ref` names: only `#/$defs/<name>` within the same file.
fn resolve<'a>(root: &'a Value, arg: &Value) -> &'a Value {
    let r = arg.as_str().expect("$ref is a string");
    let name = r
        .strip_prefix("#/$defs/")
        .filter(|n| !n.contains('/') && !n.contains('~'))
        .unwrap_or_else(|| panic!("unsupported $ref {r:?}: only #/$defs/<name>"));
    root.get("$defs")
        .and_then(|d| d.get(name))
        .unwrap_or_else(|| panic!("$ref {r:?} names no definition"))
}

fn types(arg: &Value) -> Vec<&str> {
    match arg {
        Value::String(t) => vec![t.as_str()],
        Value::Array(ts) => ts
            .iter()
            .map(|t| t.as_str().expect("type names are strings"))
            .collect(),
        other => panic!("type must be a string or an array, not {other}"),
    }
}

fn has_type(v: &Value, t: &str) -> bool {
    match t {
        "null" => v.is_null(),
        "boolean" => v.is_boolean(),
        "string" => v.is_string(),
        "array" => v.is_array(),
        "object" => v.is_object(),
        "number" => v.is_number(),
        "integer" => {
            v.is_i64()
                || v.is_u64()
                || v.as_f64()
                    .is_some_and(|f| f.is_finite() && f.fract() == 0.0)
        }
        other => panic!("unknown JSON type {other:?}"),
    }
}

/// JSON equality: numbers by value (1 equals 1.0), objects regardless of key order.
fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            match (x.as_i64(), y.as_i64(), x.as_u64(), y.as_u64()) {
                (Some(x), Some(y), _, _) => x == y,
                (_, _, Some(x), Some(y)) => x == y,
                _ => x.as_f64() == y.as_f64(),
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_eq(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, a)| y.get(k).is_some_and(|b| json_eq(a, b)))
        }
        _ => a == b,
    }
}

/// Walks the whole schema once: every keyword known, its value of the right shape, every
/// `$ref` resolvable, every pattern compiled.
fn check(root: &Value, schema: &Value, at: &str, patterns: &mut HashMap<String, Regex>) {
    let map: &Map<String, Value> = match schema {
        Value::Bool(_) => return,
        Value::Object(map) => map,
        other => panic!("{at}: not a schema: {other}"),
    };
    for (key, arg) in map {
        let here = format!("{at}/{key}");
        match key.as_str() {
            k if ANNOTATIONS.contains(&k) => {}
            k if SUBSCHEMA.contains(&k) => check(root, arg, &here, patterns),
            "$defs" | "properties" => {
                let subs = arg
                    .as_object()
                    .unwrap_or_else(|| panic!("{here}: must be an object"));
                for (name, sub) in subs {
                    check(root, sub, &format!("{here}/{name}"), patterns);
                }
            }
            "oneOf" => {
                let subs = arg
                    .as_array()
                    .filter(|a| !a.is_empty())
                    .unwrap_or_else(|| panic!("{here}: must be a non-empty array"));
                for (i, sub) in subs.iter().enumerate() {
                    check(root, sub, &format!("{here}/{i}"), patterns);
                }
            }
            "$ref" => {
                resolve(root, arg);
            }
            "type" => types(arg).iter().for_each(|t| {
                has_type(&Value::Null, t);
            }),
            "enum" => assert!(arg.is_array(), "{here}: must be an array"),
            "const" => {}
            "minimum" | "maximum" => assert!(arg.is_number(), "{here}: must be a number"),
            "minItems" => assert!(arg.is_u64(), "{here}: must be a count"),
            "required" => assert!(
                arg.as_array()
                    .is_some_and(|a| a.iter().all(Value::is_string)),
                "{here}: must be an array of strings"
            ),
            "pattern" => {
                let p = arg
                    .as_str()
                    .unwrap_or_else(|| panic!("{here}: must be a string"));
                let re = Regex::new(p).unwrap_or_else(|e| panic!("{here}: {e}"));
                patterns.insert(p.to_string(), re);
            }
            other => panic!(
                "{here}: unknown JSON Schema keyword {other:?} (teach tests/common/schema.rs)"
            ),
        }
    }
    if map.contains_key("then") && !map.contains_key("if") {
        panic!("{at}: `then` without `if`");
    }
}

/// Sets `additionalProperties: false` on every object schema that lists its properties and
/// says nothing of others: the strict reading of the published (open) schemas.
pub fn close_objects(schema: &mut Value) {
    match schema {
        Value::Object(map) => {
            let closed = map.get("type").and_then(|t| t.as_str()) == Some("object")
                && map.contains_key("properties")
                && !map.contains_key("additionalProperties");
            if closed {
                map.insert("additionalProperties".into(), Value::Bool(false));
            }
            map.values_mut().for_each(close_objects);
        }
        Value::Array(items) => items.iter_mut().for_each(close_objects),
        _ => {}
    }
}
