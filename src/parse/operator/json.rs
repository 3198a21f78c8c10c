//! A zap JSON line (KubeRay v1.1 and later): one object per line, read into an event.
//!
//! The well-known keys (`level`, `ts`, `logger`, `msg`) become the event's level, time,
//! component and message when their values are scalars (a level or a time that does not
//! read as one stays a field); every other key becomes a field, nested objects under
//! dotted keys, in the order of the line. The object is read straight through serde, so no
//! `serde_json::Value` is built for the common line. A line that opens like JSON but does
//! not parse is still a record: its raw text, with whatever level, logger and time a
//! lenient look finds in it. `flatten_object` is also how the console parser reads the
//! fields object that ends a console line.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserialize, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use super::zap::{stamp, zap_level};
use crate::event::{Event, RawTime, Text};
use crate::parse::generic::guess_level;
use crate::parse::lines::cap_field;
use crate::parse::primitives::{find_date_time, instant};

/// A zap record's well-known keys, pulled out of the flattened fields.
#[derive(Default)]
pub(super) struct ZapRecord {
    pub(super) level: Option<String>,
    ts: Option<String>,
    logger: Option<String>,
    msg: Option<String>,
    fields: Vec<(Text, Text)>,
    /// Text after the object (a lost newline glued two records together).
    pub(super) trailing: Option<String>,
}

impl ZapRecord {
    pub(super) fn into_event(self, line: &str) -> Event {
        let ZapRecord {
            level,
            ts,
            logger,
            msg,
            mut fields,
            trailing,
        } = self;
        let is_zap = msg.is_some() || level.is_some();
        // Without `msg` or `level` this is some other JSON document; its raw text is the
        // most useful message.
        let message = match msg {
            Some(msg) => msg,
            None if is_zap => String::new(),
            None => line.to_string(),
        };
        let mut ev = Event::new(0, message);
        if let Some(level) = level {
            match zap_level(&level) {
                Some(parsed) => ev.level = parsed,
                None => fields.push(("level".into(), level.into())),
            }
        }
        if let Some(ts) = ts {
            match stamp(&ts) {
                Some(time) => ev.raw_time = Some(time),
                None => fields.push(("ts".into(), ts.into())),
            }
        }
        ev.component = logger.unwrap_or_default().into();
        if let Some(trailing) = trailing {
            fields.push(("trailing".into(), trailing.into()));
        }
        for (_, value) in &mut fields {
            cap_field(value);
        }
        ev.fields = fields;
        ev
    }
}

/// Parses a line holding one JSON object. Text after the object is kept as `trailing`.
pub(super) fn parse_object(text: &str) -> Result<ZapRecord, serde_json::Error> {
    let mut rec = ZapRecord {
        fields: Vec::with_capacity(8),
        ..ZapRecord::default()
    };
    let mut de = serde_json::Deserializer::from_str(text);
    TopLevel(&mut rec).deserialize(&mut de)?;
    if de.end().is_err() {
        // Rare (a lost newline glued two records together): find where the object ended.
        let mut stream = serde_json::Deserializer::from_str(text).into_iter::<de::IgnoredAny>();
        let _ = stream.next();
        let tail = text.get(stream.byte_offset()..).unwrap_or_default().trim();
        rec.trailing = Some(tail.to_string());
    }
    Ok(rec)
}

/// Reads the top-level object: well-known keys into their slots, everything else flattened.
struct TopLevel<'a>(&'a mut ZapRecord);

impl<'de> DeserializeSeed<'de> for TopLevel<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<(), D::Error> {
        de.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for TopLevel<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let rec = self.0;
        while let Some(Key(key)) = map.next_key()? {
            let before = rec.fields.len();
            let (slot, name) = match key.as_ref() {
                "level" => (&mut rec.level, "level"),
                "ts" => (&mut rec.ts, "ts"),
                "logger" => (&mut rec.logger, "logger"),
                "msg" => (&mut rec.msg, "msg"),
                _ => {
                    let key = key.into_owned();
                    map.next_value_seed(Flatten {
                        key,
                        out: &mut rec.fields,
                    })?;
                    continue;
                }
            };
            map.next_value_seed(Flatten {
                key: name.to_string(),
                out: &mut rec.fields,
            })?;
            // A well-known key takes its slot only when its value is a scalar (one entry
            // under the bare key) and the slot is still free; otherwise it stays a field.
            let scalar =
                rec.fields.len() == before + 1 && rec.fields.last().is_some_and(|(k, _)| k == name);
            if scalar && slot.is_none() {
                *slot = rec.fields.pop().map(|(_, v)| v.into_string());
            }
        }
        Ok(())
    }
}

/// Flattens one JSON value into `out`: nested objects under dotted keys, scalars rendered
/// without quotes, arrays as compact JSON text. Streams through serde so that no
/// `serde_json::Value` is built for the common case, and key order is kept.
struct Flatten<'a> {
    key: String,
    out: &'a mut Vec<(Text, Text)>,
}

impl Flatten<'_> {
    fn push(self, value: String) {
        self.out.push((self.key.into(), value.into()));
    }
}

impl<'de> DeserializeSeed<'de> for Flatten<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<(), D::Error> {
        de.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Flatten<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<(), E> {
        self.push(v.to_string());
        Ok(())
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<(), E> {
        self.push(v.to_string());
        Ok(())
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<(), E> {
        self.push(v.to_string());
        Ok(())
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<(), E> {
        self.push(v.to_string());
        Ok(())
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<(), E> {
        self.push(v.to_string());
        Ok(())
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<(), E> {
        self.push(v);
        Ok(())
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.push("null".to_string());
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let Flatten { key: prefix, out } = self;
        let mut empty = true;
        while let Some(Key(key)) = map.next_key()? {
            empty = false;
            let key = if prefix.is_empty() {
                key.into_owned()
            } else {
                let mut dotted = String::with_capacity(prefix.len() + 1 + key.len());
                dotted.push_str(&prefix);
                dotted.push('.');
                dotted.push_str(&key);
                dotted
            };
            map.next_value_seed(Flatten {
                key,
                out: &mut *out,
            })?;
        }
        // An empty object still says something (`"labels":{}`); keep it visible.
        if empty && !prefix.is_empty() {
            out.push((prefix.into(), "{}".into()));
        }
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        // Arrays are rare in operator logs; building values here keeps the code short.
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<serde_json::Value>()? {
            items.push(item);
        }
        self.push(serde_json::Value::Array(items).to_string());
        Ok(())
    }
}

/// An object key, borrowed from the line when it has no escapes.
struct Key<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        de.deserialize_str(KeyVisitor)
    }
}

struct KeyVisitor;

impl<'de> Visitor<'de> for KeyVisitor {
    type Value = Key<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object key")
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Key<'de>, E> {
        Ok(Key(Cow::Borrowed(v)))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Key<'de>, E> {
        Ok(Key(Cow::Owned(v.to_string())))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Key<'de>, E> {
        Ok(Key(Cow::Owned(v)))
    }
}

/// A line that opened like JSON but did not parse: still a record, with whatever a
/// lenient look finds.
pub(super) fn broken_json_event(line: &str) -> Event {
    let mut ev = Event::new(0, line.to_string());
    ev.level = json_string_value(line, "level")
        .and_then(zap_level)
        .unwrap_or_else(|| guess_level(line));
    ev.component = json_string_value(line, "logger").unwrap_or_default().into();
    ev.raw_time = find_date_time(line, 80).map(|(idx, local)| match line.get(idx..).map(instant) {
        Some(Ok((_, utc))) => RawTime::Utc(utc),
        _ => RawTime::Naive(local),
    });
    ev
}

/// The text of `"key":"…"` near the start of a line, without unescaping.
fn json_string_value<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let head = line.get(..line.len().min(200)).unwrap_or(line);
    let needle = format!("\"{key}\":\"");
    let start = head.find(&needle)? + needle.len();
    let rest = line.get(start..)?;
    let end = rest.find('"')?;
    rest.get(..end)
}

/// Flattens `text` into `fields` if it is exactly one JSON object.
pub(super) fn flatten_object(text: &str, fields: &mut Vec<(Text, Text)>) -> bool {
    let mut de = serde_json::Deserializer::from_str(text);
    let before = fields.len();
    let ok = Flatten {
        key: String::new(),
        out: fields,
    }
    .deserialize(&mut de)
    .is_ok()
        && de.end().is_ok();
    if !ok {
        fields.truncate(before);
    }
    ok
}

#[cfg(test)]
mod tests {
    use crate::parse::operator::tests::check;

    // ---- zap JSON (KubeRay v1.1+), real lines from FORMATS.md §3.3

    #[test]
    fn json_reconciling_ingress() {
        check(
            r#"{"level":"info","ts":"2024-04-25T23:12:29.720Z","logger":"controllers.RayCluster","msg":"Reconciling Ingress","RayCluster":{"name":"ray-py311-raycluster-jc9qt","namespace":"ray"},"reconcileID":"17eb30fd-edb5-467e-bc3b-82910187b923"}"#,
            r#"
1+1 2024-04-25T23:12:29.720Z info controllers.RayCluster {RayCluster.name=ray-py311-raycluster-jc9qt; RayCluster.namespace=ray; reconcileID=17eb30fd-edb5-467e-bc3b-82910187b923} Reconciling Ingress
"#,
        );
    }

    #[test]
    fn json_without_logger() {
        check(
            r#"{"level":"info","ts":"2024-04-11T07:43:43.785Z","msg":"starting server","kind":"health probe","addr":"[::]:8082"}"#,
            r#"
1+1 2024-04-11T07:43:43.785Z info - {kind=health probe; addr=[::]:8082} starting server
"#,
        );
    }

    #[test]
    fn json_multiline_message() {
        check(
            r#"{"level":"info","ts":"2024-08-20T03:10:38.257Z","logger":"controllers.RayService","msg":"Active RayCluster config doesn't match goal config. RayService operator should prepare a new Ray cluster.\n* Active RayCluster config hash: D22UJ34PG57MTG9IDLDI0AAVJPLLE70D\n* Goal RayCluster config hash: OKN3DC1IOSSBST33DDOLIJR03TRSCB7A","RayService":{"name":"stable-diffusion-tpu","namespace":"default"},"reconcileID":"fc484444-80db-44d8-8652-38e4dff60878"}"#,
            r#"
1+1 2024-08-20T03:10:38.257Z info controllers.RayService {RayService.name=stable-diffusion-tpu; RayService.namespace=default; reconcileID=fc484444-80db-44d8-8652-38e4dff60878} Active RayCluster config doesn't match goal config. RayService operator should prepare a new Ray cluster.\n* Active RayCluster config hash: D22UJ34PG57MTG9IDLDI0AAVJPLLE70D\n* Goal RayCluster config hash: OKN3DC1IOSSBST33DDOLIJR03TRSCB7A
"#,
        );
    }

    #[test]
    fn json_truncated_panic_line() {
        // Quoted cut short in FORMATS.md; a log cut by a size limit looks the same.
        check(
            r#"{"level":"error","ts":"2025-06-04T20:45:21.874Z","logger":"controllers.RayJob","msg":"Observed a panic","RayJob":{"name":"v6e-16-job","namespace":"hyperkube"},"reconcileID":"c00b3547-8723-4655-b41a-bd08125760db","panic":"runtime error: ..."#,
            r#"
1+1 2025-06-04T20:45:21.874Z error controllers.RayJob {} {"level":"error","ts":"2025-06-04T20:45:21.874Z","logger":"controllers.RayJob","msg":"Observed a panic","RayJob":{"name":"v6e-16-job","namespace":"hyperkube"},"reconcileID":"c00b3547-8723-4655-b41a-bd08125760db","panic":"runtime error: ...
! 1: 1 operator log line looks like zap JSON but did not parse (first error: EOF while parsing a string at column 239); kept as raw text
"#,
        );
    }

    #[test]
    fn json_panic_with_stack() {
        check(
            r#"{"level":"error","ts":"2025-06-04T20:45:21.874Z","logger":"controllers.RayJob","msg":"Observed a panic","RayJob":{"name":"j","namespace":"h"},"reconcileID":"c00b","panic":"runtime error: invalid memory address or nil pointer dereference","panicGoValue":"\"invalid memory address or nil pointer dereference\"","stacktrace":"goroutine 412 [running]:\nk8s.io/apimachinery/pkg/util/runtime.logPanic()\n\t/go/pkg/mod/k8s.io/apimachinery@v0.29.6/pkg/util/runtime/runtime.go:75"}"#,
            r#"
1+1 2025-06-04T20:45:21.874Z error controllers.RayJob {RayJob.name=j; RayJob.namespace=h; reconcileID=c00b; panic=runtime error: invalid memory address or nil pointer dereference; panicGoValue="invalid memory address or nil pointer dereference"; stacktrace=goroutine 412 [running]:\nk8s.io/apimachinery/pkg/util/runtime.logPanic()\n\t/go/pkg/mod/k8s.io/apimachinery@v0.29.6/pkg/util/runtime/runtime.go:75} Observed a panic
"#,
        );
    }

    #[test]
    fn json_error_with_stacktrace_field() {
        check(
            r#"{"level":"error","ts":"2024-05-01T01:02:03.004Z","logger":"controllers.RayService","msg":"Failed to get Serve application statuses","error":"Get \"http://rs-raycluster-x-head-svc.default.svc.cluster.local:8265/api/serve/applications/\": dial tcp 10.0.0.1:8265: i/o timeout","stacktrace":"github.com/ray-project/kuberay/ray-operator/controllers/ray.(*RayServiceReconciler).Reconcile\n\t/workspace/controllers/ray/rayservice_controller.go:198"}"#,
            r#"
1+1 2024-05-01T01:02:03.004Z error controllers.RayService {error=Get "http://rs-raycluster-x-head-svc.default.svc.cluster.local:8265/api/serve/applications/": dial tcp 10.0.0.1:8265: i/o timeout; stacktrace=github.com/ray-project/kuberay/ray-operator/controllers/ray.(*RayServiceReconciler).Reconcile\n\t/workspace/controllers/ray/rayservice_controller.go:198} Failed to get Serve application statuses
"#,
        );
    }

    #[test]
    fn json_value_shapes() {
        check(
            r#"{"level":"debug","ts":"2024-05-01T00:00:00Z","msg":"shapes","n":-3,"f":1.5,"big":18446744073709551615,"ok":true,"nil":null,"list":[1,"a",{"k":"v"}],"empty":{},"deep":{"a":{"b":{"c":"d"}}}}"#,
            r#"
1+1 2024-05-01T00:00:00.000Z debug - {n=-3; f=1.5; big=18446744073709551615; ok=true; nil=null; list=[1,"a",{"k":"v"}]; empty={}; deep.a.b.c=d} shapes
"#,
        );
    }

    #[test]
    fn json_odd_well_known_keys() {
        // `msg` as an object, an unknown level and a `ts` that is no time stay fields.
        check(
            r#"{"level":"loud","ts":"yesterday","msg":{"a":1},"logger":"x"}
{"level":"info","msg":"first","msg":"second"}
{"some":"other document"}
{}"#,
            r#"
1+1 - info x {msg.a=1; level=loud; ts=yesterday}
2+1 - info - {msg=second} first
3+1 - info - {some=other document} {"some":"other document"}
4+1 - info - {} {}
"#,
        );
    }

    #[test]
    fn json_epoch_and_offset_stamps() {
        check(
            r#"{"level":"info","ts":1714087949.7204812,"msg":"epoch seconds"}
{"level":"info","ts":1714087949720,"msg":"epoch millis"}
{"level":"info","ts":1714087949720481200,"msg":"epoch nanos"}
{"level":"info","ts":"2024-04-11T15:43:43.385+0800","msg":"offset"}
{"level":"info","ts":42,"msg":"not a time"}"#,
            r#"
1+1 2024-04-25T23:32:29.720481Z info - {} epoch seconds
2+1 2024-04-25T23:32:29.720Z info - {} epoch millis
3+1 2024-04-25T23:32:29.720481Z info - {} epoch nanos
4+1 2024-04-11T07:43:43.385Z info - {} offset
5+1 - info - {ts=42} not a time
"#,
        );
    }

    #[test]
    fn json_verbosity_level() {
        check(
            r#"{"level":"Level(-2)","ts":"2024-05-01T00:00:00.000Z","msg":"v2"}"#,
            r#"
1+1 2024-05-01T00:00:00.000Z trace - {} v2
"#,
        );
    }

    #[test]
    fn json_trailing_text() {
        check(
            r#"{"level":"info","ts":"2024-05-01T00:00:00.000Z","msg":"a"}{"level":"info","msg":"b"}"#,
            r#"
1+1 2024-05-01T00:00:00.000Z info - {trailing={"level":"info","msg":"b"}} a
"#,
        );
    }

    #[test]
    fn broken_json_lines_make_one_diagnostic() {
        check(
            r#"{"level":"info","ts":"2024-05-01T00:00:00.000Z","msg":"ok"}
{"level":"warn","ts":"2024-05-01T00:00:01.000Z","logger":"controllers.RayService","msg":"cut
{"level":"error","ts":"2024-05-01T00:00:02.000Z","msg":"also cut","error":"x
{
{"msg": no quotes}"#,
            r#"
1+1 2024-05-01T00:00:00.000Z info - {} ok
2+1 2024-05-01T00:00:01.000Z warning controllers.RayService {} {"level":"warn","ts":"2024-05-01T00:00:01.000Z","logger":"controllers.RayService","msg":"cut
3+1 2024-05-01T00:00:02.000Z error - {} {"level":"error","ts":"2024-05-01T00:00:02.000Z","msg":"also cut","error":"x
4+1 - info - {} {
5+1 - info - {} {"msg": no quotes}
! 2: 3 operator log lines look like zap JSON but did not parse (first error: EOF while parsing a string at column 92); kept as raw text
"#,
        );
    }

    #[test]
    fn json_with_leading_spaces() {
        check(
            r#"   {"level":"info","ts":"2024-05-01T00:00:00.000Z","msg":"indented"}"#,
            r#"
1+1 2024-05-01T00:00:00.000Z info - {} indented
"#,
        );
    }
}
