//! Ray Serve logs under `logs/serve/`: `controller_<pid>.log`, `proxy_<ip>.log` /
//! `http_proxy_<ip>.log`, `replica_<app>_<dep>_<id>.log` / `deployment_<dep>_<tag>.log`.
//!
//! TEXT, every generation: `<LEVEL> <asctime> <component_name> <component_id>
//! [<request_id>] [<route>] [<app>] (<file>.py:<line> - | -- )<message>`. JSON: the
//! template era (invalid JSON, tracebacks appended after the object), the serialized era
//! and the core `JSONFormatter`. Access-log messages (`GET / 200 8.5ms`, `__CALL__ OK
//! 2.8ms`, `CALL f OK 1.3ms`, `HANDLE __call__ OK 0.3ms`) get method, status and latency
//! fields. Tracebacks fold into their record.
//!
//! It must not resolve zones: asctime stays `RawTime::Naive`; `timestamp_ns` is UTC.

use crate::event::{Event, Level, Micros, RawTime, Text};
use crate::parse::lines::{parse_records, Continuation};
use crate::parse::primitives::{date_time, split_once_byte};
use crate::parse::ray_record::{file_line, json_record, split_word};
use crate::parse::{Detail, ParseOutput};

pub fn parse(input: &[u8], out: &mut ParseOutput) {
    let mut samples = Vec::new();
    parse_records(input, Continuation::Fold, out, |line, detail, again| {
        // Read again, a line gives no new zone sample.
        let samples = if again { &mut Vec::new() } else { &mut samples };
        head_at(line, samples, detail)
    });
    out.zone_samples.append(&mut samples);
}

/// A record's first line in any Serve spelling, or `None` for a continuation.
pub fn head(line: &str, samples: &mut Vec<Micros>) -> Option<Event> {
    head_at(line, samples, &Detail::Full)
}

/// [`head`], building the record at `detail` (only the text is ever light).
fn head_at(line: &str, samples: &mut Vec<Micros>, detail: &Detail) -> Option<Event> {
    match line.as_bytes().first()? {
        b'F' | b'W' => {
            text_head(line, detail).or_else(|| crate::parse::ray_cpp::fatal_python_head(line))
        }
        b'A'..=b'Z' => text_head(line, detail),
        b'{' => json_head(line, samples),
        // A replica's or proxy's stderr (`worker-*.err`) interleaves its core worker's C++
        // records and the dumps it aborts with (`parse::abort`): they start records of their
        // own, never continue the Serve record above them.
        b'[' if line.as_bytes().get(1).is_some_and(u8::is_ascii_digit) => {
            crate::parse::ray_cpp::head_at(line, samples, detail)
        }
        b'*' => crate::parse::ray_cpp::signal_head(line),
        _ => None,
    }
}

fn text_head(line: &str, detail: &Detail) -> Option<Event> {
    let (level_tok, rest) = split_once_byte(line, b' ')?;
    if level_tok.len() > 8 || !level_tok.bytes().all(|b| b.is_ascii_uppercase()) {
        return None;
    }
    let level = Level::parse(level_tok)?;
    if rest.as_bytes().get(4) != Some(&b'-') {
        return None;
    }
    let (rest, local) = date_time(rest).ok()?;
    let rest = rest.strip_prefix(' ')?;
    let (name, rest) = split_once_byte(rest, b' ')?;
    let raw = RawTime::Naive(local);
    if !detail.full_at(Some(&raw), level) {
        return Some(Event::light(Some(raw), level));
    }
    let (id, body) = split_word(rest);

    let mut ev = Event::new(0, String::new());
    ev.raw_time = Some(raw);
    ev.level = level;
    ev.component = name.into();
    // Context, location and access fields: one allocation instead of a few regrowths.
    ev.fields.reserve_exact(8);
    ev.fields.push(("component_id".into(), id.into()));

    // Up to three request-context tokens come before the message marker. A route starts
    // with `/`; a token before it is the request id, one after it the application.
    let mut ctx: [Option<&str>; 3] = [None; 3];
    let mut rest = body;
    let mut message = None;
    for _ in 0..4 {
        if let Some(msg) = rest.strip_prefix("-- ") {
            message = Some(msg);
            break;
        }
        if rest == "--" {
            message = Some("");
            break;
        }
        let (tok, after) = split_word(rest);
        if tok.is_empty() {
            break;
        }
        if let Some((file, lineno)) = file_line(tok) {
            if let Some(msg) = after.strip_prefix("- ").or((after == "-").then_some("")) {
                ev.fields.push(("file".into(), file.into()));
                ev.fields.push(("lineno".into(), lineno.into()));
                message = Some(msg);
                break;
            }
        }
        let slot = if tok.starts_with('/') {
            1
        } else if ctx[0].is_none() && ctx[1].is_none() {
            0
        } else {
            2
        };
        match ctx.get_mut(slot) {
            Some(cell @ None) => *cell = Some(tok),
            _ => break,
        }
        rest = after;
    }
    let Some(message) = message else {
        // No marker: an unknown generation. Keep everything after the id as the message.
        ev.message = body.to_string();
        return Some(ev);
    };
    for (key, value) in ["request_id", "route", "application"].into_iter().zip(ctx) {
        if let Some(value) = value {
            ev.fields.push((key.into(), value.into()));
        }
    }
    access_fields(message, &mut ev.fields);
    ev.message = message.to_string();
    Some(ev)
}

/// Serve JSON: component is the replica's deployment (`<app>_<dep>`) or `component_name`.
/// The serialized era kept `file.py:line - ` inside the message; it moves to fields.
fn json_head(line: &str, samples: &mut Vec<Micros>) -> Option<Event> {
    let mut ev = json_record(line, samples)?;
    let component = ev
        .field("deployment")
        .or_else(|| ev.field("component_name"))
        .unwrap_or_default()
        .to_string();
    ev.component = component.into();
    if ev.field("component_id").is_none() {
        if let Some(replica) = ev.field("replica").map(str::to_string) {
            ev.fields.push(("component_id".into(), replica.into()));
        }
    }
    let (loc, after) = split_word(&ev.message);
    if let (Some((file, lineno)), Some(msg)) = (file_line(loc), after.strip_prefix("- ")) {
        if ev.field("file").is_none() {
            ev.fields.push(("file".into(), file.into()));
            ev.fields.push(("lineno".into(), lineno.into()));
        }
        ev.message = msg.to_string();
    }
    let first_line = ev
        .message
        .split('\n')
        .next()
        .unwrap_or_default()
        .to_string();
    access_fields(&first_line, &mut ev.fields);
    Some(ev)
}

/// Access-log messages, every generation: `[<client ip:port> ]<METHOD> [<route>] <status>
/// <latency>ms`, where status is an HTTP code or `OK`/`ERROR`/`CANCELLED` for handle calls
/// (`__CALL__ OK 2.8ms`, `CALL f OK 1.3ms`, `HANDLE __call__ OK 0.3ms`).
fn access_fields(msg: &str, fields: &mut Vec<(Text, Text)>) {
    if !msg.ends_with("ms") {
        return;
    }
    // At most five tokens; collected into an array so the common line allocates nothing.
    let mut buf = [""; 5];
    let mut n = 0;
    for token in msg.split(' ') {
        match buf.get_mut(n) {
            Some(slot) => *slot = token,
            None => return,
        }
        n += 1;
    }
    let Some([head @ .., status, latency]) = buf.get(..n) else {
        return;
    };
    // Serve always prints one decimal (`{:.1f}ms`).
    let Some(latency) = latency
        .strip_suffix("ms")
        .filter(|l| l.contains('.') && l.parse::<f64>().is_ok())
    else {
        return;
    };
    let http = status.len() == 3 && status.bytes().all(|b| b.is_ascii_digit());
    let call = matches!(*status, "OK" | "ERROR" | "CANCELLED");
    if !(http || call) {
        return;
    }
    // An optional client address (`10.0.0.9:52311`) comes first.
    let (client, head) = match head {
        [client, rest @ ..] if client.contains(':') && client.contains('.') => {
            (Some(*client), rest)
        }
        _ => (None, head),
    };
    let (method, middle) = match head {
        [method] => (*method, None),
        [method, middle] => (*method, Some(*middle)),
        _ => return,
    };
    if method.is_empty() || !method.bytes().all(|b| b.is_ascii_uppercase() || b == b'_') {
        return;
    }
    if let Some(client) = client {
        fields.push(("client".into(), client.into()));
    }
    fields.push(("http_method".into(), method.into()));
    match middle {
        Some(route) if route.starts_with('/') => fields.push(("http_path".into(), route.into())),
        Some(name) => fields.push(("call_method".into(), name.into())),
        None => {}
    }
    let key = if http { "http_status" } else { "call_status" };
    fields.push((key.into(), (*status).into()));
    fields.push(("latency_ms".into(), latency.into()));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn check(input: &str, expect: &str) {
        crate::parse::testing::check_parse(parse, input, expect);
    }

    #[test]
    fn ray_2_0_controller() {
        check(
            "INFO 2022-08-02 16:16:29,881 controller 71139 deployment_state.py:1232 - Adding 1 replicas to deployment 'SayHello'.",
            "1+1 N2022-08-02T16:16:29.881Z info controller {component_id=71139 file=deployment_state.py lineno=1232} | Adding 1 replicas to deployment 'SayHello'.\n",
        );
    }

    #[test]
    fn ray_2_0_access_lines() {
        check(
            "INFO 2022-08-02 16:17:02,502 http_proxy 127.0.0.1 http_proxy.py:315 - GET / 200 3.5ms",
            "1+1 N2022-08-02T16:17:02.502Z info http_proxy {component_id=127.0.0.1 file=http_proxy.py lineno=315 http_method=GET http_path=/ http_status=200 latency_ms=3.5} | GET / 200 3.5ms\n",
        );
        check(
            "INFO 2022-08-02 16:17:02,501 SayHello SayHello#kKGBoa replica.py:482 - HANDLE __call__ OK 0.3ms",
            "1+1 N2022-08-02T16:17:02.501Z info SayHello {component_id=SayHello#kKGBoa file=replica.py lineno=482 http_method=HANDLE call_method=__call__ call_status=OK latency_ms=0.3} | HANDLE __call__ OK 0.3ms\n",
        );
    }

    #[test]
    fn ray_2_4_replica() {
        check(
            "INFO 2023-04-18 10:01:18,864 deployment_full_chatbot_DAGDriver full_chatbot_DAGDriver#bBVPnk replica.py:527 - PREDICT OK 9704.4ms",
            "1+1 N2023-04-18T10:01:18.864Z info deployment_full_chatbot_DAGDriver {component_id=full_chatbot_DAGDriver#bBVPnk file=replica.py lineno=527 http_method=PREDICT call_status=OK latency_ms=9704.4} | PREDICT OK 9704.4ms\n",
        );
    }

    #[test]
    fn unschedulable_warning() {
        check(
            "WARNING 2023-05-13 23:26:26,277 controller 162 deployment_state.py:1613 - Deployment \"MangoStand\" has 1 replicas that have taken more than 30s to be scheduled. Resources required for each replica: {\"CPU\": 3.0}, resources available: {\"CPU\": 5.6}.",
            "1+1 N2023-05-13T23:26:26.277Z warning controller {component_id=162 file=deployment_state.py lineno=1613} | Deployment \"MangoStand\" has 1 replicas that have taken more than 30s to be scheduled. Resources required for each replica: {\"CPU\": 3.0}, resources available: {\"CPU\": 5.6}.\n",
        );
    }

    #[test]
    fn request_context_generations() {
        // ≈2.5–2.8: request id, route and application.
        check(
            "INFO 2023-09-01 10:00:00,000 app_Counter app_Counter#aBcD 6f04a2fd-db85-4687-8302-ef478e7abee8 /counter app replica.py:373 - __CALL__ OK 2.8ms",
            "1+1 N2023-09-01T10:00:00.000Z info app_Counter {component_id=app_Counter#aBcD file=replica.py lineno=373 request_id=6f04a2fd-db85-4687-8302-ef478e7abee8 route=/counter application=app http_method=__CALL__ call_status=OK latency_ms=2.8} | __CALL__ OK 2.8ms\n",
        );
        // ≈2.9–2.39: request id and route.
        check(
            "INFO 2024-02-01 10:00:00,000 default_SlowDeployment 8ey9y40a e3b77013-1111-2222-3333-444455556666 / replica.py:373 - __CALL__ OK 2007.7ms",
            "1+1 N2024-02-01T10:00:00.000Z info default_SlowDeployment {component_id=8ey9y40a file=replica.py lineno=373 request_id=e3b77013-1111-2222-3333-444455556666 route=/ http_method=__CALL__ call_status=OK latency_ms=2007.7} | __CALL__ OK 2007.7ms\n",
        );
        // ≥2.40: request id only, `-- <msg>`.
        check(
            "INFO 2024-12-30 23:47:44,173 default_HelloWorld 5w6y35rx 7bda8dd6-9299-42ce-b23b-ac059d03254e -- GET / 200 8.5ms",
            "1+1 N2024-12-30T23:47:44.173Z info default_HelloWorld {component_id=5w6y35rx request_id=7bda8dd6-9299-42ce-b23b-ac059d03254e http_method=GET http_path=/ http_status=200 latency_ms=8.5} | GET / 200 8.5ms\n",
        );
    }

    #[test]
    fn ray_2_5_proxy_and_2_9_dev_replica() {
        check(
            "INFO 2023-09-01 10:00:00,000 http_proxy 10.0.0.1 6f04a2fd-db85 /fruit http_proxy.py:473 - GET 200 3.5ms",
            "1+1 N2023-09-01T10:00:00.000Z info http_proxy {component_id=10.0.0.1 file=http_proxy.py lineno=473 request_id=6f04a2fd-db85 route=/fruit http_method=GET http_status=200 latency_ms=3.5} | GET 200 3.5ms\n",
        );
        check(
            "INFO 2023-11-01 10:00:00,000 Counter app#Counter#abcd replica.py:700 - Started initializing replica.",
            "1+1 N2023-11-01T10:00:00.000Z info Counter {component_id=app#Counter#abcd file=replica.py lineno=700} | Started initializing replica.\n",
        );
    }

    #[test]
    fn current_proxy_and_controller() {
        check(
            "INFO 2026-02-26 19:53:30,857 proxy 172.31.7.228 -- Proxy starting on node 45c883d6 (HTTP port: 8000).",
            "1+1 N2026-02-26T19:53:30.857Z info proxy {component_id=172.31.7.228} | Proxy starting on node 45c883d6 (HTTP port: 8000).\n",
        );
        check(
            "INFO 2025-01-01 00:00:00,000 default_Echo abcd1234 0a1b-2c -- CALL generate OK 1.3ms",
            "1+1 N2025-01-01T00:00:00.000Z info default_Echo {component_id=abcd1234 request_id=0a1b-2c http_method=CALL call_method=generate call_status=OK latency_ms=1.3} | CALL generate OK 1.3ms\n",
        );
        check(
            "INFO 2025-01-01 00:00:00,000 proxy 10.0.0.1 9f -- 10.0.0.9:52311 GET /{wildcard} 503 12.0ms",
            "1+1 N2025-01-01T00:00:00.000Z info proxy {component_id=10.0.0.1 request_id=9f client=10.0.0.9:52311 http_method=GET http_path=/{wildcard} http_status=503 latency_ms=12.0} | 10.0.0.9:52311 GET /{wildcard} 503 12.0ms\n",
        );
    }

    #[test]
    fn controller_exception_with_traceback() {
        check(
            "ERROR 2026-01-12 05:53:37,931 controller 1004 -- Exception in Replica(id='6zrhrqfq', deployment='LLMServer:qwen2_5-0_5b-instruct', app='llms'), the replica will be stopped.\n\
             Traceback (most recent call last):\n\
             \x20 File \"/home/ray/anaconda3/lib/python3.11/site-packages/ray/serve/_private/deployment_state.py\", line 771, in check_ready\n\
             ValueError: boom\n\
             INFO 2026-01-12 05:53:38,000 controller 1004 -- next",
            "1+4 N2026-01-12T05:53:37.931Z error controller {component_id=1004} | Exception in Replica(id='6zrhrqfq', deployment='LLMServer:qwen2_5-0_5b-instruct', app='llms'), the replica will be stopped.⏎Traceback (most recent call last):⏎  File \"/home/ray/anaconda3/lib/python3.11/site-packages/ray/serve/_private/deployment_state.py\", line 771, in check_ready⏎ValueError: boom\n\
             5+1 N2026-01-12T05:53:38.000Z info controller {component_id=1004} | next\n",
        );
    }

    #[test]
    fn not_an_access_line() {
        check(
            "INFO 2025-01-01 00:00:00,000 controller 1 -- Waited 30 OK 5.0ms",
            "1+1 N2025-01-01T00:00:00.000Z info controller {component_id=1} | Waited 30 OK 5.0ms\n",
        );
        check(
            "INFO 2025-01-01 00:00:00,000 controller 1 -- GET 200 5ms",
            "1+1 N2025-01-01T00:00:00.000Z info controller {component_id=1} | GET 200 5ms\n",
        );
    }

    #[test]
    fn serialized_era_json() {
        check(
            r#"{"levelname": "INFO", "asctime": "2024-06-24 22:15:34,526", "actor_id": "59ef", "worker_id": "ce0e", "deployment": "app_Counter", "replica": "j8fhh1bm", "component_name": "replica", "request_id": "6f04a2fd", "route": "/favicon.ico", "application": "app", "message": "replica.py:373 - __CALL__ OK 2.8ms"}"#,
            "1+1 N2024-06-24T22:15:34.526Z info app_Counter {actor_id=59ef application=app component_name=replica deployment=app_Counter replica=j8fhh1bm request_id=6f04a2fd route=/favicon.ico worker_id=ce0e component_id=j8fhh1bm file=replica.py lineno=373 http_method=__CALL__ call_status=OK latency_ms=2.8} | __CALL__ OK 2.8ms\n",
        );
    }

    #[test]
    fn core_json_formatter() {
        check(
            r#"{"asctime": "2024-08-01 10:00:00,123", "levelname": "INFO", "message": "Controller starting.", "filename": "controller.py", "lineno": 127, "component_name": "controller", "component_id": "613", "timestamp_ns": 1722506400123456789}"#,
            "1+1 U2024-08-01T10:00:00.123456Z info controller {component_id=613 component_name=controller file=controller.py lineno=127 timestamp_ns=1722506400123456789} | Controller starting.\n\
             zone=[0]\n",
        );
    }

    #[test]
    fn template_era_invalid_json_and_trailing_traceback() {
        check(
            "{\"levelname\": \"ERROR\", \"asctime\": \"2023-08-01 10:00:00,000\", \"component_name\": \"controller\", \"component_id\": \"71\", \"message\": \"Deploying app \"default\" failed\"}\n\
             Traceback (most recent call last):\n\
             \x20 File \"x.py\", line 1\n\
             ModuleNotFoundError: No module named 'tensorflow'\n\
             {\"levelname\": \"INFO\", \"asctime\": \"2023-08-01 10:00:01,000\", \"deployment\": \"app_A\", \"replica\": \"app_A#x\", \"message\": \"ok\"}",
            "1+4 N2023-08-01T10:00:00.000Z error controller {component_name=controller component_id=71} | Deploying app \"default\" failed⏎Traceback (most recent call last):⏎  File \"x.py\", line 1⏎ModuleNotFoundError: No module named 'tensorflow'\n\
             5+1 N2023-08-01T10:00:01.000Z info app_A {deployment=app_A replica=app_A#x component_id=app_A#x} | ok\n",
        );
    }

    #[test]
    fn template_era_message_with_newline() {
        check(
            "{\"levelname\": \"WARNING\", \"asctime\": \"2023-08-01 10:00:00,000\", \"component_name\": \"controller\", \"component_id\": \"71\", \"message\": \"first\nsecond\"}",
            "1+2 N2023-08-01T10:00:00.000Z warning controller {component_name=controller component_id=71} | first⏎second\"}\n",
        );
    }

    #[test]
    fn gen_bundle_proxy_line() {
        check(
            "INFO 2024-06-07 18:17:42,713 proxy 10.244.0.7 8cff88c0-4e4c-42a3-920f-ab927cc525ed proxy.py:1165 - GET /fruit 200 45.4ms",
            "1+1 N2024-06-07T18:17:42.713Z info proxy {component_id=10.244.0.7 file=proxy.py lineno=1165 request_id=8cff88c0-4e4c-42a3-920f-ab927cc525ed http_method=GET http_path=/fruit http_status=200 latency_ms=45.4} | GET /fruit 200 45.4ms\n",
        );
    }

    #[test]
    fn near_misses() {
        check(
            "Traceback (most recent call last):",
            "1+1 - info - | Traceback (most recent call last):\nunparsed=1\n",
        );
        check(
            "INFO 2024-01-01",
            "1+1 - info - | INFO 2024-01-01\nunparsed=1\n",
        );
        check(
            "INFO 2024-01-01 00:00:00,000",
            "1+1 - info - | INFO 2024-01-01 00:00:00,000\nunparsed=1\n",
        );
        check(
            "INFO 2024-01-01 00:00:00,000 controller",
            "1+1 - info - | INFO 2024-01-01 00:00:00,000 controller\nunparsed=1\n",
        );
        check(
            "INFO 2024-01-01 00:00:00,000 controller 1",
            "1+1 N2024-01-01T00:00:00.000Z info controller {component_id=1} | \n",
        );
        check(
            "HELLO 2024-01-01 00:00:00,000 controller 1 -- x",
            "1+1 - info - | HELLO 2024-01-01 00:00:00,000 controller 1 -- x\nunparsed=1\n",
        );
    }

    /// Ray 2.9.3, a proxy's `worker-*.err` (read as Serve by its lines) when its raylet was
    /// killed: the core worker's failed check and its stack trace are one record of their
    /// own, not the end of the Serve record above.
    #[test]
    fn a_failed_check_on_a_replicas_stderr_is_a_record() {
        check(
            "INFO 2026-12-06 09:29:55,703 proxy 10.244.0.5 proxy.py:1357 - Starting HTTP server on node: fdec1b0f4c822d172c4f6e40e08c9730508b75f091dc0cb1b9d73978 listening on port 8000\n\
             INFO:     Started server process [30607]\n\
             [2026-12-06 09:30:05,297 C 30607 30639] core_worker.cc:2694:  Check failed: _s.ok() Bad status: IOError: Broken pipe\n\
             *** StackTrace Information ***\n\
             /home/ray/anaconda3/lib/python3.11/site-packages/ray/_raylet.so(+0xfe93da) [0x7fb185be93da] ray::operator<<()\n\
             *** SIGSEGV received at time=1796549281 on cpu 1 ***\n\
             PC: @     0x7f0b57f85ad8  (unknown)  (unknown)\n\
             Fatal Python error: Segmentation fault",
            "1+2 N2026-12-06T09:29:55.703Z info proxy {component_id=10.244.0.5 file=proxy.py lineno=1357} | Starting HTTP server on node: fdec1b0f4c822d172c4f6e40e08c9730508b75f091dc0cb1b9d73978 listening on port 8000⏎INFO:     Started server process [30607]\n\
             3+3 N2026-12-06T09:30:05.297Z critical - {pid=30607 tid=30639 file=core_worker.cc lineno=2694} | Check failed: _s.ok() Bad status: IOError: Broken pipe⏎*** StackTrace Information ***⏎/home/ray/anaconda3/lib/python3.11/site-packages/ray/_raylet.so(+0xfe93da) [0x7fb185be93da] ray::operator<<()\n\
             6+2 U2026-12-06T09:28:01.000Z critical - | *** SIGSEGV received at time=1796549281 on cpu 1 ***⏎PC: @     0x7f0b57f85ad8  (unknown)  (unknown)\n\
             8+1 - critical - | Fatal Python error: Segmentation fault\n",
        );
    }

    #[test]
    fn every_line_lands_in_one_event() {
        crate::parse::testing::assert_covers_lines(parse);
    }

    #[test]
    fn nasty_inputs() {
        check("", "");
        check(
            "INFO 2024-01-01 00:00:00,000 controller 1 -- a\r\n\r\n",
            "1+2 N2024-01-01T00:00:00.000Z info controller {component_id=1} | a⏎\n",
        );
        let mut out = ParseOutput::default();
        parse(
            b"\xff\xfe\x00\nINFO 2024-01-01 00:00:00,000 c 1 -- \xc3",
            &mut out,
        );
        assert_eq!(out.events.len(), 2);
        assert_eq!(out.events[1].message, "\u{fffd}");
    }
}
