//! A zap console line (KubeRay v0.1 to v1.0, and later ones run with
//! `--log-stdout-encoder=console`): `<ts>\t<LEVEL>\t[<logger>\t]<msg>[\t{fields}]`, or the
//! same columns separated by spaces when the line was pasted.
//!
//! A line is a record head only when it opens with a time and a zap level word follows it;
//! only a zoned ISO stamp is distinctive enough to start a record without a level (a bare
//! number or a zone-less date may open a continuation line). A tab-separated line with a
//! level is built light when the parse asks for it (`Detail`); every other head is built
//! in full.

use super::json::flatten_object;
use super::zap::{epoch_stamp, zap_level};
use crate::event::{Event, Level, Micros, RawTime, Text};
use crate::parse::generic::guess_level;
use crate::parse::lines::cap_field;
use crate::parse::primitives::{date_time, instant};
use crate::parse::Detail;

/// `<ts>\t<LEVEL>\t[<logger>\t]<msg>[\t{fields}]`, or the same with spaces when pasted.
/// A console line, built at `detail` (only a tab-separated one with a level is ever light).
pub(super) fn console(line: &str, detail: &Detail) -> Option<Event> {
    let (rest, time) = leading_time(line)?;
    // Only a zoned ISO stamp is distinctive enough to start a record without a level
    // word; a bare number or a zone-less date may be the start of a continuation line.
    let lenient = matches!(time, Stamp::Iso(_));
    let raw = time.raw();
    let mut ev = match rest.as_bytes().first() {
        Some(b'\t') => tabbed(rest.get(1..).unwrap_or_default(), lenient, &raw, detail)?,
        Some(b' ') => spaced(rest.trim_start_matches(' '), lenient)?,
        _ => return None,
    };
    ev.raw_time = Some(raw);
    Some(ev)
}

/// How a console line's stamp was written.
enum Stamp {
    Iso(Micros),
    ZoneLess(Micros),
    Epoch(RawTime),
}

impl Stamp {
    fn raw(self) -> RawTime {
        match self {
            Stamp::Iso(utc) => RawTime::Utc(utc),
            Stamp::ZoneLess(local) => RawTime::Naive(local),
            Stamp::Epoch(time) => time,
        }
    }
}

/// The tab-separated body after the stamp written `raw`, built at `detail`.
fn tabbed(body: &str, lenient: bool, raw: &RawTime, detail: &Detail) -> Option<Event> {
    let (level_tok, after) = body.split_once('\t').unwrap_or((body, ""));
    let Some(level) = zap_level(level_tok) else {
        return lenient.then(|| stamped_text(body));
    };
    if !detail.full_at(Some(raw), level) {
        return Some(Event::light(Some(*raw), level));
    }
    // The fields object is the last column; JSON escapes tabs, so it holds none.
    let mut fields = Vec::new();
    let mut text = after;
    if let Some((head, last)) = after.rsplit_once('\t') {
        if last.starts_with('{') && flatten_object(last, &mut fields) {
            text = head;
        }
    }
    // A third column without spaces followed by a fourth is a logger name; a line with no
    // logger (`<ts>\tINFO\tattempting to acquire leader lease …`) has only the message.
    let (component, message) = match text.split_once('\t') {
        Some((logger, msg)) if !logger.is_empty() && !logger.contains(' ') => (logger, msg),
        _ => ("", text),
    };
    Some(zap_event(level, component, message, fields))
}

/// A pasted console line whose tabs became spaces: the columns are found by shape.
fn spaced(body: &str, lenient: bool) -> Option<Event> {
    let (level_tok, after) = body.split_once(' ').unwrap_or((body, ""));
    let Some(level) = zap_level(level_tok) else {
        return lenient.then(|| stamped_text(body));
    };
    let after = after.trim_start_matches(' ');
    let mut fields = Vec::new();
    let text = match trailing_object(after, &mut fields) {
        Some(head) => head.trim_end(),
        None => after,
    };
    let (component, message) = match text.split_once(' ') {
        Some((word, msg)) if looks_like_logger(word) => (word, msg.trim_start_matches(' ')),
        _ => ("", text),
    };
    Some(zap_event(level, component, message, fields))
}

fn zap_event(level: Level, component: &str, message: &str, fields: Vec<(Text, Text)>) -> Event {
    let mut ev = Event::new(0, message.to_string());
    ev.level = level;
    ev.component = component.into();
    ev.fields = fields;
    for (_, value) in &mut ev.fields {
        cap_field(value);
    }
    ev
}

/// A stamped line with no level column: still a record, as other frameworks print it.
fn stamped_text(body: &str) -> Event {
    let mut ev = Event::new(0, body.to_string());
    ev.level = guess_level(body);
    ev
}

/// Finds a fields object that ends the line (after a space) and flattens it; returns the
/// text before it.
fn trailing_object<'a>(text: &'a str, fields: &mut Vec<(Text, Text)>) -> Option<&'a str> {
    if !text.ends_with('}') {
        return None;
    }
    let mut from = 0;
    // A few tries: the message itself may contain ` {"` before the real fields.
    for _ in 0..4 {
        let idx = from + text.get(from..)?.find(" {\"")?;
        let candidate = text.get(idx + 1..)?;
        if flatten_object(candidate, fields) {
            return text.get(..idx);
        }
        from = idx + 1;
    }
    None
}

/// Logger names are dotted or dashed identifiers (`controllers.RayService`,
/// `raycluster-controller`), or one of the few bare ones KubeRay uses.
fn looks_like_logger(word: &str) -> bool {
    let charset = word
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_' | b'/'));
    let shaped = word.contains(['.', '-']) || matches!(word, "setup" | "events");
    !word.is_empty()
        && charset
        && shaped
        && word.as_bytes().first().is_some_and(u8::is_ascii_alphabetic)
}

/// The time that opens a console line: an ISO 8601 instant, or an epoch number when the
/// operator ran with `--zap-time-encoding=epoch|millis|nano`.
fn leading_time(line: &str) -> Option<(&str, Stamp)> {
    if let Ok((rest, utc)) = instant(line) {
        return Some((rest, Stamp::Iso(utc)));
    }
    if let Ok((rest, local)) = date_time(line) {
        return Some((rest, Stamp::ZoneLess(local)));
    }
    let end = line.find(['\t', ' ']).unwrap_or(line.len());
    let token = line.get(..end)?;
    let epoch = epoch_stamp(token)?;
    Some((line.get(end..)?, Stamp::Epoch(epoch)))
}

#[cfg(test)]
mod tests {
    use crate::parse::operator::tests::check;

    // ---- zap console (KubeRay v0.1 – v1.0), real lines from FORMATS.md §3.3

    #[test]
    fn console_restart_raycluster() {
        check(
            "2023-07-11T02:14:58.109Z\tINFO\tcontrollers.RayService\tRestart RayCluster\t{\"appName\": \"fruit_app\", \"restart reason\": \"The status of the serve application fruit_app has not been RUNNING for more than 300.000000 seconds. Hence, KubeRay operator labels the RayCluster unhealthy and will prepare a new RayCluster.\"}",
            r#"
1+1 2023-07-11T02:14:58.109Z info controllers.RayService {appName=fruit_app; restart reason=The status of the serve application fruit_app has not been RUNNING for more than 300.000000 seconds. Hence, KubeRay operator labels the RayCluster unhealthy and will prepare a new RayCluster.} Restart RayCluster
"#,
        );
    }

    #[test]
    fn console_debug_with_nested_timestamp_text() {
        check(
            "2023-10-30T07:32:07.020Z\tDEBUG\tcontrollers.RayService\treconcileRayCluster\t{\"delete Ray cluster\": \"<my serve resource name>-raycluster-9hxh9\", \"reason\": \"Deletion timestamp 2023-10-30 07:19:35.381769854 +0000 UTC m=+143.794313515 for RayCluster <my serve resource name>-raycluster-9hxh9 has passed. Deleting cluster immediately.\"}",
            r#"
1+1 2023-10-30T07:32:07.020Z debug controllers.RayService {delete Ray cluster=<my serve resource name>-raycluster-9hxh9; reason=Deletion timestamp 2023-10-30 07:19:35.381769854 +0000 UTC m=+143.794313515 for RayCluster <my serve resource name>-raycluster-9hxh9 has passed. Deleting cluster immediately.} reconcileRayCluster
"#,
        );
    }

    #[test]
    fn console_event_echo_as_quoted_in_docs() {
        // The documented line elides parts with `...`, which is not JSON: the text is kept.
        check(
            "2023-04-02T13:49:13.338Z\tDEBUG\tevents\tNormal\t{\"object\": {\"kind\":\"ConfigMap\",\"namespace\":\"ray-system\",\"name\":\"ray-operator-leader\",...}, \"reason\": \"LeaderElection\", \"message\": \"kuberay-operator-5b9d578847-g5sx2_f84cb3d3-... became leader\"}",
            r#"
1+1 2023-04-02T13:49:13.338Z debug events {} Normal\t{"object": {"kind":"ConfigMap","namespace":"ray-system","name":"ray-operator-leader",...}, "reason": "LeaderElection", "message": "kuberay-operator-5b9d578847-g5sx2_f84cb3d3-... became leader"}
"#,
        );
    }

    #[test]
    fn console_event_echo() {
        check(
            "2023-04-02T13:49:13.338Z\tDEBUG\tevents\tNormal\t{\"object\": {\"kind\":\"ConfigMap\",\"namespace\":\"ray-system\",\"name\":\"ray-operator-leader\",\"apiVersion\":\"v1\"}, \"reason\": \"LeaderElection\", \"message\": \"kuberay-operator-5b9d578847-g5sx2_f84cb3d3 became leader\"}",
            r#"
1+1 2023-04-02T13:49:13.338Z debug events {object.kind=ConfigMap; object.namespace=ray-system; object.name=ray-operator-leader; object.apiVersion=v1; reason=LeaderElection; message=kuberay-operator-5b9d578847-g5sx2_f84cb3d3 became leader} Normal
"#,
        );
    }

    #[test]
    fn console_starting_workers() {
        check(
            "2024-01-31T10:54:43.879Z\tINFO\tcontroller.raycluster-controller\tStarting workers\t{\"reconciler group\": \"ray.io\", \"reconciler kind\": \"RayCluster\", \"worker count\": 1}",
            r#"
1+1 2024-01-31T10:54:43.879Z info controller.raycluster-controller {reconciler group=ray.io; reconciler kind=RayCluster; worker count=1} Starting workers
"#,
        );
    }

    #[test]
    fn console_error_with_go_stack() {
        check(
            "2022-06-15T21:44:44.203Z\tERROR\tcontroller.rayservice\tReconciler error\t{\"reconciler group\": \"ray.io\", \"reconciler kind\": \"RayService\", \"name\": \"rayservice-sample\", \"namespace\": \"default\", \"error\": \"Put \\\"http://rayservice-sample-raycluster-9jdv6-head-svc.default.svc.cluster.local:8265/api/serve/deployments/\\\": dial tcp 10.100.36.128:8265: connect: connection refused\"}
sigs.k8s.io/controller-runtime/pkg/internal/controller.(*Controller).processNextWorkItem
\t/go/pkg/mod/sigs.k8s.io/controller-runtime@v0.11.1/pkg/internal/controller/controller.go:266
2022-06-15T21:44:45.001Z\tINFO\tcontroller.rayservice\tnext",
            r#"
1+3 2022-06-15T21:44:44.203Z error controller.rayservice {reconciler group=ray.io; reconciler kind=RayService; name=rayservice-sample; namespace=default; error=Put "http://rayservice-sample-raycluster-9jdv6-head-svc.default.svc.cluster.local:8265/api/serve/deployments/": dial tcp 10.100.36.128:8265: connect: connection refused} Reconciler error\nsigs.k8s.io/controller-runtime/pkg/internal/controller.(*Controller).processNextWorkItem\n\t/go/pkg/mod/sigs.k8s.io/controller-runtime@v0.11.1/pkg/internal/controller/controller.go:266
4+1 2022-06-15T21:44:45.001Z info controller.rayservice {} next
"#,
        );
    }

    #[test]
    fn console_serve_api_errors() {
        // FORMATS.md §3.4: the Go net/http error inside the fields, v1.0 on port 52365.
        check(
            "2024-02-01T10:00:00.000Z\tERROR\tcontrollers.RayService\tFail to reconcileServe.\t{\"ServiceName\": \"default/rayservice-sample\", \"error\": \"Get \\\"http://rayservice-sample-raycluster-rqlsl-head-svc.default.svc.cluster.local:52365/api/serve/applications/\\\": dial tcp 10.96.7.154:52365: connect: connection refused\"}
2024-02-01T10:00:01.000Z\tERROR\tcontrollers.RayService\tFail to reconcileServe.\t{\"error\": \"UpdateDeployments fail: 404 Not Found 404: Not Found\"}",
            r#"
1+1 2024-02-01T10:00:00.000Z error controllers.RayService {ServiceName=default/rayservice-sample; error=Get "http://rayservice-sample-raycluster-rqlsl-head-svc.default.svc.cluster.local:52365/api/serve/applications/": dial tcp 10.96.7.154:52365: connect: connection refused} Fail to reconcileServe.
2+1 2024-02-01T10:00:01.000Z error controllers.RayService {error=UpdateDeployments fail: 404 Not Found 404: Not Found} Fail to reconcileServe.
"#,
        );
    }

    #[test]
    fn console_without_logger() {
        check(
            "2024-06-07T18:39:03.043Z\tINFO\tattempting to acquire leader lease default/ray-operator-leader...
2024-06-07T18:39:08.210Z\tINFO\tStarting EventSource\t{\"controller\": \"raycluster-controller\", \"source\": \"kind source: *v1.Pod\"}
2024-06-07T18:39:08.211Z\tINFO\treconcilePods\t{\"replicas\": 3}
2024-06-07T18:47:03.877Z\tERROR\tReconciler error\t{\"controller\": \"raycluster-controller\", \"RayCluster\": {\"name\": \"rc\", \"namespace\": \"default\"}, \"error\": \"Operation cannot be fulfilled\"}",
            r#"
1+1 2024-06-07T18:39:03.043Z info - {} attempting to acquire leader lease default/ray-operator-leader...
2+1 2024-06-07T18:39:08.210Z info - {controller=raycluster-controller; source=kind source: *v1.Pod} Starting EventSource
3+1 2024-06-07T18:39:08.211Z info - {replicas=3} reconcilePods
4+1 2024-06-07T18:47:03.877Z error - {controller=raycluster-controller; RayCluster.name=rc; RayCluster.namespace=default; error=Operation cannot be fulfilled} Reconciler error
"#,
        );
    }

    #[test]
    fn console_production_lowercase_levels() {
        check(
            "2024-05-01T08:00:00.123Z\tinfo\tcontrollers.RayCluster\treconcilePods\t{\"RayCluster\": {\"name\": \"rc\", \"namespace\": \"ns\"}}
2024-05-01T08:00:00.124Z\twarn\tcontrollers.RayCluster\tslow\t{}
2024-05-01T08:00:00.125Z\tdpanic\tsetup\tboom",
            r#"
1+1 2024-05-01T08:00:00.123Z info controllers.RayCluster {RayCluster.name=rc; RayCluster.namespace=ns} reconcilePods
2+1 2024-05-01T08:00:00.124Z warning controllers.RayCluster {} slow
3+1 2024-05-01T08:00:00.125Z error setup {} boom
"#,
        );
    }

    #[test]
    fn console_offset_and_nanos() {
        check(
            "2024-04-11T15:43:43.385+0800\tINFO\tsetup\tstarting manager
2024-04-11T07:43:43.385123456Z\tINFO\tsetup\tnano stamp",
            r#"
1+1 2024-04-11T07:43:43.385Z info setup {} starting manager
2+1 2024-04-11T07:43:43.385123Z info setup {} nano stamp
"#,
        );
    }

    #[test]
    fn console_verbosity_levels() {
        check(
            "2024-05-01T08:00:00.000Z\tLEVEL(-2)\tcontrollers.RayCluster\tvery chatty
2024-05-01T08:00:00.001Z\tPANIC\tsetup\tgiving up",
            r#"
1+1 2024-05-01T08:00:00.000Z trace controllers.RayCluster {} very chatty
2+1 2024-05-01T08:00:00.001Z critical setup {} giving up
"#,
        );
    }

    #[test]
    fn console_pasted_with_spaces() {
        check(
            "2023-07-11T02:14:58.109Z  INFO  controllers.RayService  Restart RayCluster  {\"appName\": \"fruit_app\"}
2024-06-07T18:39:03.043Z INFO attempting to acquire leader lease default/ray-operator-leader...
2024-06-07T18:39:08.300Z INFO Starting Controller {\"controller\": \"rayjob\"}
2024-06-07T18:39:08.400Z ERROR setup message with {\"inline\": 1} text",
            r#"
1+1 2023-07-11T02:14:58.109Z info controllers.RayService {appName=fruit_app} Restart RayCluster
2+1 2024-06-07T18:39:03.043Z info - {} attempting to acquire leader lease default/ray-operator-leader...
3+1 2024-06-07T18:39:08.300Z info - {controller=rayjob} Starting Controller
4+1 2024-06-07T18:39:08.400Z error setup {} message with {"inline": 1} text
"#,
        );
    }

    #[test]
    fn console_multiline_message_folds() {
        check(
            "2024-01-01T00:00:00.000Z\tINFO\tcontrollers.RayService\tActive RayCluster config doesn't match goal config.
* Active RayCluster config hash: D22UJ34PG57MTG9IDLDI0AAVJPLLE70D
* Goal RayCluster config hash: OKN3DC1IOSSBST33DDOLIJR03TRSCB7A\t{\"RayService\": {\"name\": \"s\", \"namespace\": \"d\"}}",
            r#"
1+3 2024-01-01T00:00:00.000Z info controllers.RayService {} Active RayCluster config doesn't match goal config.\n* Active RayCluster config hash: D22UJ34PG57MTG9IDLDI0AAVJPLLE70D\n* Goal RayCluster config hash: OKN3DC1IOSSBST33DDOLIJR03TRSCB7A\t{"RayService": {"name": "s", "namespace": "d"}}
"#,
        );
    }

    #[test]
    fn console_truncated_fields() {
        check(
            "2024-01-01T00:00:00.000Z\tERROR\tcontrollers.RayService\tReconciler error\t{\"error\": \"Put \\\"http://x:8265/api/se",
            r#"
1+1 2024-01-01T00:00:00.000Z error controllers.RayService {} Reconciler error\t{"error": "Put \"http://x:8265/api/se
"#,
        );
    }

    #[test]
    fn stamped_line_without_level() {
        check("2024-01-01T00:00:00.000Z\tsomething else entirely\n2024-01-01T00:00:01Z W0000 warning text", r#"
1+1 2024-01-01T00:00:00.000Z info - {} something else entirely
2+1 2024-01-01T00:00:01.000Z warning - {} W0000 warning text
"#);
    }

    #[test]
    fn epoch_console_stamps() {
        check(
            "1.7140879497204812e+09\tinfo\tsetup\tepoch seconds
1714087949720.4812\tinfo\tsetup\tepoch millis
300 seconds elapsed
1000000000 bytes is a number, not a time
2023-10-30 07:19:35 is a zone-less date, not a record",
            r#"
1+1 2024-04-25T23:32:29.720481Z info setup {} epoch seconds
2+4 2024-04-25T23:32:29.720481Z info setup {} epoch millis\n300 seconds elapsed\n1000000000 bytes is a number, not a time\n2023-10-30 07:19:35 is a zone-less date, not a record
"#,
        );
    }
}
