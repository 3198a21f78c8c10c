//! Masking secrets (and, on request, host names and IPs) in everything raysift writes, so a
//! report can be attached to a ticket.
//!
//! A `Redactor` rewrites strings: the report's evidence, summaries, paths, diagnostics and
//! event rows, and timeline events before they are rendered. Secrets become `[REDACTED]`.
//! With `hosts` set, IP addresses and host names become stable pseudonyms (`ip-1`, `host-1`,
//! numbered in order of first appearance in a fixed traversal), never a hash, so the same host
//! reads the same everywhere in one output and nothing about it can be recovered.
//!
//! It owns the patterns, works on strings and events, and imports no report type: each part
//! of a report redacts itself through it, in a fixed order (`Report::redact` in `model`,
//! `Inventory::redact`, `FileInfo::redact`). It must not drop, reorder or add records: a
//! redacted report keeps every cause and evidence line, only secret substrings change.
//! Rule-defined text (titles, meanings, remediation, references) is not bundle content and is
//! left alone.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::LazyLock;

use regex::{Captures, Regex, RegexSet};

use crate::event::Event;

/// What replaces a secret.
pub const MASK: &str = "[REDACTED]";

/// What to redact. Built by the caller from the command line.
#[derive(Clone, Copy, Debug)]
pub struct RedactConfig {
    /// Also replace IP addresses and host names with pseudonyms.
    pub hosts: bool,
}

/// Rewrites strings; holds the pseudonym table and the little state that spans records
/// (an open private-key block, an environment variable whose value comes on the next line).
#[derive(Debug)]
pub struct Redactor {
    hosts: bool,
    pseudonyms: BTreeMap<String, String>,
    n_hosts: usize,
    n_ips: usize,
    /// Records still to mask entirely after a `BEGIN … PRIVATE KEY` without its `END`.
    pem_open: u32,
    /// The previous record named a secret-looking variable (`- name: DB_PASSWORD`); its
    /// `value:` comes in this one.
    env_value_pending: bool,
}

/// Longest private-key block (in records) masked after its `BEGIN` line.
const PEM_MAX_RECORDS: u32 = 120;

/// Names of keys whose values are secrets (matched inside longer names: `DB_PASSWORD`,
/// `aws_secret_access_key`, `hf_token`).
const SECRET_KEY: &str = r"[A-Za-z0-9_.\-]*(?:password|passwd|passphrase|pwd|secret|token|api[_\-]?key|apikey|access[_\-]?key|private[_\-]?key|credentials?|client[_\-]?key|auth[_\-]?key|session[_\-]?key|signature)[A-Za-z0-9_.\-]*";

static PEM_BLOCK: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?s)-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----|\z)",
    )
});
static PEM_END: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?s)\A.*?-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----"));
static URL_CREDENTIALS: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)\b([a-z][a-z0-9+.\-]*://)[^\s/@:\[\]]*:[^\s/@]*@"));
static AUTHORIZATION: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r#"(?i)\b((?:proxy-)?authorization"?\s*[:=]\s*"?(?:(?:bearer|basic|token|digest|negotiate)\s+)?)[^\s"',;]+"#,
    )
});
static BEARER: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)\b((?:bearer|basic)\s+)[A-Za-z0-9\-._~+/]{8,}=*"));
static COOKIE: LazyLock<Regex> =
    LazyLock::new(|| re(r#"(?i)\b((?:set-)?cookie"?\s*[:=]\s*)[^\n]+"#));
static KEY_VALUE: LazyLock<Regex> = LazyLock::new(|| {
    re(&format!(
        r#"(?i)(?P<key>{SECRET_KEY})(?P<sep>["']?\s*[:=]\s*)(?:"(?P<dq>[^"\n]*)"|'(?P<sq>[^'\n]*)'|(?P<bare>[^\s"',;&)\]}}]+))"#
    ))
});
/// A Kubernetes env entry on one line or two: `name: DB_PASSWORD` then `value: …`.
static ENV_PAIR: LazyLock<Regex> = LazyLock::new(|| {
    re(&format!(
        r#"(?i)(\bname"?\s*[:=]\s*["']?{SECRET_KEY}["']?\s*,?\s*"?value"?\s*[:=]\s*)(?:"(?P<dq>[^"\n]*)"|'(?P<sq>[^'\n]*)'|(?P<bare>[^\s"',}}]+))"#
    ))
});
static ENV_NAME_ONLY: LazyLock<Regex> = LazyLock::new(|| {
    re(&format!(
        r#"(?i)^\s*-?\s*"?name"?\s*[:=]\s*["']?{SECRET_KEY}["']?\s*,?\s*$"#
    ))
});
static ENV_VALUE_ONLY: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r#"(?i)^(\s*-?\s*"?value"?\s*[:=]\s*)(?:"(?P<dq>[^"\n]*)"|'(?P<sq>[^'\n]*)'|(?P<bare>[^\s"',}]+))"#,
    )
});
static KNOWN_TOKENS: LazyLock<Regex> = LazyLock::new(|| {
    re(concat!(
        r"\b(?:(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|APKA|AROA)[A-Z0-9]{16}",
        r"|eyJ[A-Za-z0-9_\-+/=]{10,}(?:\.[A-Za-z0-9_\-+/=]+){0,2}",
        r"|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}",
        r"|xox[abprs]-[A-Za-z0-9\-]{10,}|hf_[A-Za-z0-9]{20,}|sk-[A-Za-z0-9_\-]{20,}",
        r"|AIza[0-9A-Za-z_\-]{30,}|glpat-[A-Za-z0-9_\-]{20,})"
    ))
});
static EMAIL: LazyLock<Regex> = LazyLock::new(|| {
    re(r"\b[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}\b")
});
/// A high-entropy word: long, mixed case and digits (hex ids are one case and survive).
static OPAQUE_TOKEN: LazyLock<Regex> = LazyLock::new(|| re(r"[A-Za-z0-9_\-+]{32,}={0,2}"));
/// A line that is nothing but base64 (the body of a PEM block, a pasted key).
static BASE64_LINE: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?m)^(\s*)[A-Za-z0-9+/]{40,}={0,2}\s*$"));

static URL_HOST: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)\b([a-z][a-z0-9+.\-]*://)([a-z0-9.\-]+|\[[0-9a-f:.]+\])"));
static HOST_KEY: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r#"(?i)\b((?:host|hostname|host_name|node|node_name|nodename|node_ip|node_ip_address|pod_ip|podip|host_ip|hostip)"?\s*[:=]\s*"?)([A-Za-z0-9][A-Za-z0-9.\-]*[A-Za-z0-9])"#,
    )
});
static DNS_NAME: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(?:[a-z0-9](?:[a-z0-9\-]*[a-z0-9])?\.)+(?:local|internal|svc|com|net|org|io|dev|ai|cloud|corp|lan|intra|example|home)\b",
    )
});
static IPV6: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(?:(?:[0-9a-f]{1,4}:){7}[0-9a-f]{1,4}|(?:[0-9a-f]{1,4}:){1,6}:(?:[0-9a-f]{1,4}(?::[0-9a-f]{1,4}){0,5})?)",
    )
});
static IPV4: LazyLock<Regex> = LazyLock::new(|| re(r"\d{1,3}(?:\.\d{1,3}){3}"));

/// Public hosts that name documentation, code or images, not the user's infrastructure.
const PUBLIC_HOSTS: &[&str] = &[
    "github.com",
    "githubusercontent.com",
    "ray.io",
    "anyscale.com",
    "kubernetes.io",
    "k8s.io",
    "docker.io",
    "docker.com",
    "gcr.io",
    "quay.io",
    "pypi.org",
    "python.org",
];

/// Compiles a pattern literal of this file. Not input: a typo is a bug the tests catch.
#[allow(clippy::expect_used)]
fn re(pattern: &str) -> Regex {
    Regex::new(pattern).expect("redaction pattern literals compile")
}

impl Redactor {
    pub fn new(cfg: RedactConfig) -> Redactor {
        Redactor {
            hosts: cfg.hosts,
            pseudonyms: BTreeMap::new(),
            n_hosts: 0,
            n_ips: 0,
            pem_open: 0,
            env_value_pending: false,
        }
    }

    /// Redacts one free-standing string (no state carried from or to other strings).
    pub fn text(&mut self, s: &str) -> String {
        let secrets = mask_secrets(s);
        if self.hosts {
            self.pseudonymize(&secrets).into_owned()
        } else {
            secrets.into_owned()
        }
    }

    /// Redacts a whole file, line by line as a sequence of records (a private key or an
    /// environment value split over lines is masked too), keeping every line and line end:
    /// what `raysift collect --redact` writes.
    pub fn file_text(&mut self, text: &str) -> String {
        self.reset_sequence();
        let mut out = String::with_capacity(text.len());
        for line in text.split_inclusive('\n') {
            let (body, end) = match line.strip_suffix('\n') {
                Some(b) => match b.strip_suffix('\r') {
                    Some(b) => (b, "\r\n"),
                    None => (b, "\n"),
                },
                None => (line, ""),
            };
            let mut s = body.to_string();
            self.record_text(&mut s);
            out.push_str(&s);
            out.push_str(end);
        }
        self.reset_sequence();
        out
    }

    /// Redacts one string where it stands (a path, a summary, a name).
    pub fn in_place(&mut self, s: &mut String) {
        let out = self.text(s);
        if out != *s {
            *s = out;
        }
    }

    /// [`Redactor::in_place`] for a short inline text (a component, a field's value).
    fn text_in_place(&mut self, s: &mut crate::event::Text) {
        let out = self.text(s);
        if out != *s {
            *s = out.into();
        }
    }

    /// Redacts one record of a sequence (timeline events, table rows in order): a private
    /// key or an environment value split over several records is masked too.
    pub fn record_text(&mut self, s: &mut String) -> bool {
        let mut whole_record_secret = false;
        if self.pem_open > 0 {
            self.pem_open -= 1;
            match PEM_END.find(s) {
                Some(m) => {
                    self.pem_open = 0;
                    let rest = s.get(m.end()..).unwrap_or("").to_string();
                    *s = format!("{MASK}{rest}");
                }
                None => {
                    *s = MASK.to_string();
                    return true;
                }
            }
        }
        if self.env_value_pending {
            self.env_value_pending = false;
            if let Cow::Owned(o) = ENV_VALUE_ONLY.replace(s, |c: &Captures| masked_value(c, &c[1]))
            {
                *s = o;
                whole_record_secret = true;
            }
        }
        if s.contains("PRIVATE KEY") {
            let begins = s.matches("-----BEGIN ").count();
            let ends = s.matches("-----END ").count();
            if begins > ends {
                self.pem_open = PEM_MAX_RECORDS;
            }
        }
        self.env_value_pending = ENV_NAME_ONLY.is_match(s);
        self.in_place(s);
        whole_record_secret
    }

    /// Redacts events in the order given (the order they will be written).
    pub fn events(&mut self, events: &mut [Event]) {
        self.reset_sequence();
        for ev in events {
            self.event_in_sequence(ev);
        }
        self.reset_sequence();
    }

    /// Redacts the next event of a sequence written one event at a time (a streamed
    /// timeline), as [`Redactor::events`] would within the whole sequence.
    pub fn event_in_sequence(&mut self, ev: &mut Event) {
        {
            let secret = self.record_text(&mut ev.message);
            self.text_in_place(&mut ev.component);
            let secret_object = ev
                .fields
                .iter()
                .any(|(k, v)| k == "object" && v.starts_with("Secret/"));
            let secret_path = ev.fields.iter().any(|(k, v)| {
                k == "path"
                    && (secret_object && (v.starts_with("data.") || v.starts_with("stringdata."))
                        || KEY_VALUE_NAME.is_match(v.rsplit('.').next().unwrap_or("")))
            });
            if secret_object && secret_path && !ev.message.contains(MASK) {
                if let Some((key, _)) = ev.message.split_once(':') {
                    ev.message = format!("{key}: {MASK}");
                }
            }
            for (k, v) in &mut ev.fields {
                let key_is_secret = KEY_VALUE_NAME.is_match(k);
                if key_is_secret || (k == "value" && (secret || secret_path)) {
                    if !v.is_empty() {
                        *v = MASK.into();
                    }
                } else {
                    self.text_in_place(v);
                }
            }
        }
    }

    /// Ends a sequence of records: what one record left open (a private key, an
    /// environment name) does not reach into the next sequence.
    pub fn reset_sequence(&mut self) {
        self.pem_open = 0;
        self.env_value_pending = false;
    }

    fn pseudonym(&mut self, name: &str) -> String {
        let key = name.to_ascii_lowercase();
        if let Some(p) = self.pseudonyms.get(&key) {
            return p.clone();
        }
        let is_ip = key.parse::<std::net::IpAddr>().is_ok()
            || key
                .strip_prefix('[')
                .and_then(|k| k.strip_suffix(']'))
                .is_some_and(|k| k.parse::<std::net::Ipv6Addr>().is_ok());
        let p = if is_ip {
            self.n_ips += 1;
            format!("ip-{}", self.n_ips)
        } else {
            self.n_hosts += 1;
            format!("host-{}", self.n_hosts)
        };
        self.pseudonyms.insert(key, p.clone());
        p
    }

    fn host_or_keep(&mut self, host: &str) -> String {
        if is_public_host(host) || is_local_ip(host) || is_ray_id(host) || host.contains(MASK) {
            host.to_string()
        } else {
            self.pseudonym(host)
        }
    }

    fn pseudonymize<'a>(&mut self, s: &'a str) -> Cow<'a, str> {
        // Indices follow HOST_SET; a pseudonym matches none of the patterns.
        let hits = HOST_SET.matches(s);
        if !hits.matched_any() {
            return Cow::Borrowed(s);
        }
        let mut s = Cow::Borrowed(s);
        if hits.matched(0) {
            s = replace_cow(s, &URL_HOST, |c| {
                format!("{}{}", &c[1], self.host_or_keep(&c[2]))
            });
        }
        if hits.matched(1) {
            s = replace_cow(s, &HOST_KEY, |c| {
                format!("{}{}", &c[1], self.host_or_keep(&c[2]))
            });
        }
        if hits.matched(2) {
            s = replace_cow(s, &DNS_NAME, |c| self.host_or_keep(&c[0]));
        }
        if !hits.matched(3) {
            return if hits.matched(4) { self.ipv4(s) } else { s };
        }
        let s = replace_cow(s, &IPV6, |c| {
            let m = &c[0];
            if m.parse::<std::net::Ipv6Addr>().is_ok() && m.bytes().any(|b| b.is_ascii_digit()) {
                self.host_or_keep(m)
            } else {
                m.to_string()
            }
        });
        self.ipv4(s)
    }

    /// IPv4 needs boundaries `\b` cannot give (`http_proxy_10.1.2.3.log`, `ip-10.1.2.3`) and
    /// must not bite into version strings like `1.2.3.4.5`.
    fn ipv4<'a>(&mut self, s: Cow<'a, str>) -> Cow<'a, str> {
        let mut out = String::new();
        let mut last = 0;
        let mut changed = false;
        for m in IPV4.find_iter(&s) {
            let before = s.get(..m.start()).and_then(|b| b.chars().next_back());
            let after = s.get(m.end()..).unwrap_or("");
            let after_digit = after.starts_with(|c: char| c.is_ascii_digit())
                || after
                    .strip_prefix('.')
                    .is_some_and(|a| a.starts_with(|c: char| c.is_ascii_digit()));
            let bounded =
                !matches!(before, Some(c) if c.is_ascii_digit() || c == '.') && !after_digit;
            let text = m.as_str();
            if !bounded || text.parse::<std::net::Ipv4Addr>().is_err() {
                continue;
            }
            out.push_str(s.get(last..m.start()).unwrap_or(""));
            out.push_str(&self.host_or_keep(text));
            last = m.end();
            changed = true;
        }
        if !changed {
            return s;
        }
        out.push_str(s.get(last..).unwrap_or(""));
        Cow::Owned(out)
    }
}

/// Every secret pattern at once: one pass tells which (usually none) need a replacement.
static SECRET_SET: LazyLock<RegexSet> = LazyLock::new(|| {
    set(&[
        &PEM_BLOCK,
        &URL_CREDENTIALS,
        &AUTHORIZATION,
        &BEARER,
        &COOKIE,
        &ENV_PAIR,
        &KEY_VALUE,
        &KNOWN_TOKENS,
        &EMAIL,
        &BASE64_LINE,
        &OPAQUE_TOKEN,
    ])
});
static HOST_SET: LazyLock<RegexSet> =
    LazyLock::new(|| set(&[&URL_HOST, &HOST_KEY, &DNS_NAME, &IPV6, &IPV4]));

#[allow(clippy::expect_used)]
fn set(patterns: &[&Regex]) -> RegexSet {
    RegexSet::new(patterns.iter().map(|r| r.as_str()))
        .expect("redaction pattern literals compile as a set")
}

/// A key name alone (for structured fields): `password`, `db_password`, `hf_token`.
static KEY_VALUE_NAME: LazyLock<Regex> = LazyLock::new(|| re(&format!(r"(?i)^{SECRET_KEY}$")));

fn replace_cow<'a>(
    s: Cow<'a, str>,
    re: &Regex,
    mut f: impl FnMut(&Captures) -> String,
) -> Cow<'a, str> {
    match re.replace_all(&s, |c: &Captures| f(c)) {
        Cow::Borrowed(_) => s,
        Cow::Owned(o) => Cow::Owned(o),
    }
}

/// Masks every secret in `s`; the order matters (credentials in URLs before e-mails,
/// whole blocks before words).
fn mask_secrets(s: &str) -> Cow<'_, str> {
    // Indices follow SECRET_SET. A replacement only inserts the mask, which no later pattern
    // matches, so the hits of the original string are the only ones to apply.
    let hits = SECRET_SET.matches(s);
    if !hits.matched_any() {
        return Cow::Borrowed(s);
    }
    let on = |i: usize| hits.matched(i);
    let mut s = Cow::Borrowed(s);
    if on(0) {
        s = replace_cow(s, &PEM_BLOCK, |_| MASK.to_string());
    }
    if on(1) {
        s = replace_cow(s, &URL_CREDENTIALS, |c| format!("{}{MASK}@", &c[1]));
    }
    if on(2) {
        s = replace_cow(s, &AUTHORIZATION, |c| format!("{}{MASK}", &c[1]));
    }
    if on(3) {
        s = replace_cow(s, &BEARER, |c| format!("{}{MASK}", &c[1]));
    }
    if on(4) {
        s = replace_cow(s, &COOKIE, |c| format!("{}{MASK}", &c[1]));
    }
    if on(5) {
        s = replace_cow(s, &ENV_PAIR, |c| masked_value(c, &c[1]));
    }
    if on(6) {
        s = replace_cow(s, &KEY_VALUE, key_value);
    }
    if on(7) {
        s = replace_cow(s, &KNOWN_TOKENS, |_| MASK.to_string());
    }
    if on(8) {
        s = replace_cow(s, &EMAIL, |_| MASK.to_string());
    }
    if on(9) {
        s = replace_cow(s, &BASE64_LINE, |c| format!("{}{MASK}", &c[1]));
    }
    if !on(10) {
        return s;
    }
    replace_cow(s, &OPAQUE_TOKEN, |c| {
        let w = &c[0];
        let mixed = w.bytes().any(|b| b.is_ascii_uppercase())
            && w.bytes().any(|b| b.is_ascii_lowercase())
            && w.bytes().any(|b| b.is_ascii_digit());
        if mixed {
            MASK.to_string()
        } else {
            w.to_string()
        }
    })
}

/// `prefix` followed by the mask, keeping the value's quotes (groups `dq`, `sq`, `bare`).
fn masked_value(c: &Captures, prefix: &str) -> String {
    if c.name("dq").is_some() {
        format!("{prefix}\"{MASK}\"")
    } else if c.name("sq").is_some() {
        format!("{prefix}'{MASK}'")
    } else {
        format!("{prefix}{MASK}")
    }
}

fn key_value(c: &Captures) -> String {
    let key = &c["key"];
    let whole = &c[0];
    let lower = key.to_ascii_lowercase();
    // Counters and model settings, not secrets: `num_tokens: 512`, `tokenizer=gpt2`.
    let harmless = lower.ends_with("tokens")
        || lower.contains("tokenizer")
        || lower.contains("token_count")
        || lower.ends_with("secretname")
        || lower.ends_with("secret_name")
        || lower.ends_with("secretref")
        || lower.ends_with("secretkeyref");
    let value = c
        .name("dq")
        .or_else(|| c.name("sq"))
        .or_else(|| c.name("bare"))
        .map_or("", |m| m.as_str());
    if harmless || value.is_empty() || value == MASK || value.contains(MASK) {
        return whole.to_string();
    }
    masked_value(c, &format!("{key}{}", &c["sep"]))
}

fn is_public_host(host: &str) -> bool {
    let h = host.to_ascii_lowercase();
    PUBLIC_HOSTS
        .iter()
        .any(|p| h == *p || h.strip_suffix(p).is_some_and(|rest| rest.ends_with('.')))
}

/// A Ray node, worker, actor, task, job or placement-group id (hex, 16 characters or more):
/// an id, never a host, whatever key it follows (`node: 5f1c…`), so it is left as it is on
/// every line.
fn is_ray_id(word: &str) -> bool {
    word.len() >= 16 && word.bytes().all(|b| b.is_ascii_hexdigit())
}

fn is_local_ip(host: &str) -> bool {
    matches!(host, "0.0.0.0" | "127.0.0.1" | "::1" | "::")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn check(hosts: bool, input: &str, expect: &str) {
        let mut r = Redactor::new(RedactConfig { hosts });
        assert_eq!(r.text(input), expect);
    }

    #[test]
    fn bearer_and_authorization() {
        check(
            false,
            "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abc",
            "Authorization: Bearer [REDACTED]",
        );
        check(
            false,
            "curl -H 'Authorization: token ghp_abcdefghijklmnopqrstuvwx1234' x",
            "curl -H 'Authorization: token [REDACTED]' x",
        );
        check(
            false,
            "sent bearer abcdefgh12345678",
            "sent bearer [REDACTED]",
        );
        check(false, "basic auth is off", "basic auth is off");
    }

    #[test]
    fn key_values_in_every_syntax() {
        check(false, "password: hunter2", "password: [REDACTED]");
        check(
            false,
            "DB_PASSWORD=hunter2 RAY_ADDRESS=auto",
            "DB_PASSWORD=[REDACTED] RAY_ADDRESS=auto",
        );
        check(
            false,
            r#"{"api_key": "abc def", "n": 1}"#,
            r#"{"api_key": "[REDACTED]", "n": 1}"#,
        );
        check(false, "{'secret': 's3cr3t'}", "{'secret': '[REDACTED]'}");
        check(
            false,
            "export HF_TOKEN='hf_x y'",
            "export HF_TOKEN='[REDACTED]'",
        );
        check(
            false,
            "GET /x?token=abc&page=2",
            "GET /x?token=[REDACTED]&page=2",
        );
        check(
            false,
            "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "aws_secret_access_key = [REDACTED]",
        );
    }

    #[test]
    fn harmless_keys_stay() {
        check(
            false,
            "num_tokens: 512 max_tokens=64",
            "num_tokens: 512 max_tokens=64",
        );
        check(false, "secretName: ray-tls", "secretName: ray-tls");
        check(
            false,
            "password authentication failed for user ray",
            "password authentication failed for user ray",
        );
    }

    #[test]
    fn known_token_shapes() {
        check(
            false,
            "key AKIAIOSFODNN7EXAMPLE used",
            "key [REDACTED] used",
        );
        check(
            false,
            "using hf_abcdefghijklmnopqrstuvwxyz12",
            "using [REDACTED]",
        );
        check(
            false,
            "slack xoxb-1234567890-abcdefghij",
            "slack [REDACTED]",
        );
        check(
            false,
            "openai sk-proj-abcdefghijklmnopqrstuvwx",
            "openai [REDACTED]",
        );
    }

    #[test]
    fn url_credentials_cookies_emails() {
        check(
            false,
            "pip from https://alice:s3cret@pypi.example.com/simple",
            "pip from https://[REDACTED]@pypi.example.com/simple",
        );
        check(
            false,
            "redis://:hunter2@10.0.0.5:6379",
            "redis://[REDACTED]@10.0.0.5:6379",
        );
        check(
            false,
            "Cookie: session=abc; theme=dark",
            "Cookie: [REDACTED]",
        );
        check(
            false,
            "Set-Cookie: sid=1; HttpOnly",
            "Set-Cookie: [REDACTED]",
        );
        check(
            false,
            "owner alice.smith+ray@example.co.uk paged",
            "owner [REDACTED] paged",
        );
    }

    #[test]
    fn private_keys_and_blobs() {
        check(
            false,
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY----- tail",
            "[REDACTED] tail",
        );
        check(false, "-----BEGIN PRIVATE KEY-----\nMIIEvQIB", "[REDACTED]");
        check(
            false,
            "  MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\nnext",
            "  [REDACTED]\nnext",
        );
        // Hex ids are one case and are kept: they are how a reader correlates.
        check(
            false,
            "node_id=8e2a0c4f1b6d9e3a7c5f2b8d4e6a1c3f5b7d9e2a4c6f8b1d3e5a7c9f",
            "node_id=8e2a0c4f1b6d9e3a7c5f2b8d4e6a1c3f5b7d9e2a4c6f8b1d3e5a7c9f",
        );
    }

    #[test]
    fn env_pairs_in_one_record() {
        check(
            false,
            r#"{"name":"DB_PASSWORD","value":"hunter2"}"#,
            r#"{"name":"DB_PASSWORD","value":"[REDACTED]"}"#,
        );
        check(
            false,
            "- name: AWS_SECRET_ACCESS_KEY\n  value: abc",
            "- name: AWS_SECRET_ACCESS_KEY\n  value: [REDACTED]",
        );
        check(
            false,
            "- name: RAY_ADDRESS\n  value: auto",
            "- name: RAY_ADDRESS\n  value: auto",
        );
    }

    #[test]
    fn env_and_keys_across_records() {
        let mut r = Redactor::new(RedactConfig { hosts: false });
        let mut evs: Vec<Event> = [
            "- name: DB_PASSWORD",
            "value: hunter2",
            "-----BEGIN OPENSSH PRIVATE KEY-----",
            "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ",
            "short",
            "-----END OPENSSH PRIVATE KEY-----",
            "after",
        ]
        .iter()
        .enumerate()
        .map(|(i, m)| Event::new(i as u32 + 1, *m))
        .collect();
        evs[1].fields = vec![("value".into(), "hunter2".into())];
        r.events(&mut evs);
        let got: Vec<&str> = evs.iter().map(|e| e.message.as_str()).collect();
        assert_eq!(
            got,
            [
                "- name: DB_PASSWORD",
                "value: [REDACTED]",
                "[REDACTED]",
                "[REDACTED]",
                "[REDACTED]",
                "[REDACTED]",
                "after"
            ]
        );
        assert_eq!(evs[1].fields[0].1, MASK);
    }

    #[test]
    fn hosts_get_stable_pseudonyms() {
        let mut r = Redactor::new(RedactConfig { hosts: true });
        let a = r.text("Get \"http://svc-head.default.svc.cluster.local:52365/api\": dial tcp 10.96.118.42:52365");
        let b =
            r.text("10.96.118.42 and svc-head.default.svc.cluster.local again, then 10.244.1.7");
        assert_eq!(a, "Get \"http://host-1:52365/api\": dial tcp ip-1:52365");
        assert_eq!(b, "ip-1 and host-1 again, then ip-2");
        assert_eq!(
            r.text("logs/http_proxy_10.244.1.7.log"),
            "logs/http_proxy_ip-2.log"
        );
        assert_eq!(r.text("Node: kind-worker/172.18.0.3"), "Node: host-2/ip-3");
        assert_eq!(
            r.text("hostname=ip-10-0-1-2.ec2.internal"),
            "hostname=host-3"
        );
        assert_eq!(r.text("peer fe80::1ff:fe23:4567:890a up"), "peer ip-4 up");
    }

    #[test]
    fn ray_ids_are_ids_not_hosts_on_every_line() {
        let mut r = Redactor::new(RedactConfig { hosts: true });
        let node = "5f1c0a9d3b7e4f2a8c6d1e0b9a7f3c5d2e4b6a8c0d1e3f5a7b9c2d4e";
        let actor = "a1b2c3d4e5f60718293a4b5c01000000";
        for line in [
            format!("node: {node}"),
            format!("\"node\": \"{node}\", \"actor_id\": \"{actor}\""),
            format!("Raylet {node} is dead; node_id={node}"),
            format!("host={actor} on node 10.244.1.7"),
        ] {
            let got = r.text(&line);
            assert_eq!(
                got.matches(node).count(),
                line.matches(node).count(),
                "{got}"
            );
            assert_eq!(
                got.matches(actor).count(),
                line.matches(actor).count(),
                "{got}"
            );
            assert!(!got.contains("host-"), "{got}");
        }
        // A host beside them is still replaced.
        assert_eq!(
            r.text(&format!("node={node} host=worker-7.corp")),
            format!("node={node} host=host-1")
        );
    }

    #[test]
    fn what_hosts_mode_leaves_alone() {
        check(
            true,
            "see https://docs.ray.io/en/latest and github.com/ray-project",
            "see https://docs.ray.io/en/latest and github.com/ray-project",
        );
        check(
            true,
            "ray 2.5.1 at 16:02:08.775, version 1.2.3.4.5, listen 0.0.0.0:8000",
            "ray 2.5.1 at 16:02:08.775, version 1.2.3.4.5, listen 0.0.0.0:8000",
        );
        check(
            true,
            "ray.serve._private.controller raylet.out",
            "ray.serve._private.controller raylet.out",
        );
        check(
            false,
            "dial tcp 10.96.118.42:52365",
            "dial tcp 10.96.118.42:52365",
        );
    }
}
