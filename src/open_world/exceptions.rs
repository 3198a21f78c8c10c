//! Component failures by their shape: a Python traceback ends in `Type: message` (or is cut off
//! before it), a Go panic starts with `panic:` and lists goroutines, a C++ fatal record says
//! `Check failed` or names the signal that killed the process, CPython's faulthandler says
//! `Fatal Python error:` and lists frames most recent first. What the reader needs is the
//! final exception, and the innermost frame that is not Ray's own: that is where the user's
//! code (or the dependency it called) failed.

/// What one failure record says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    pub shape: Shape,
    /// The exception type (`ValueError`, `RayTaskError(KeyError)`), or `panic`, or `Check failed`.
    pub kind: String,
    /// Its message (one line), empty when cut off.
    pub message: String,
    /// The message's further lines, joined by spaces: Python prints an exception message
    /// that holds line breaks as it is, below the exception line (empty when there are none).
    pub more: String,
    /// The innermost frame outside Ray and the runtime (`app.py:42 in __init__`).
    pub frame: Option<String>,
    /// The record ends before the exception line.
    pub cut_off: bool,
    /// Ray's packages the frames pass through (`autoscaler`, `serve`, `dashboard` …), which
    /// say whose code it was when the file does not.
    pub ray_parts: Vec<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    PythonTraceback,
    GoPanic,
    CppFatal,
    /// CPython's faulthandler dump: `Fatal Python error: Segmentation fault`.
    PythonFatal,
}

impl Failure {
    /// What the component did, before the headline: a traceback or a panic is raised, a
    /// dump tells how the process aborted.
    pub fn verb(&self) -> &'static str {
        match self.shape {
            Shape::PythonTraceback | Shape::GoPanic => "raised",
            Shape::CppFatal | Shape::PythonFatal => "aborted with",
        }
    }

    /// Whether the record tells a request to stop (absl's dump of a `SIGTERM`), not a failure.
    pub fn requested_stop(&self) -> bool {
        self.shape == Shape::CppFatal && crate::parse::abort::asks_to_stop(&self.kind)
    }

    /// `ValueError: bad weights (at app.py:42 in __init__)`, for summaries.
    pub fn headline(&self) -> String {
        let mut s = if self.cut_off {
            format!("{} (cut off before the exception line)", self.kind)
        } else if self.message.is_empty() {
            self.kind.clone()
        } else if let Some(more) = self.announced() {
            format!("{}: {} {more}", self.kind, self.message)
        } else {
            format!("{}: {}", self.kind, self.message)
        };
        if let Some(f) = &self.frame {
            s.push_str(&format!(" at {f}"));
        }
        s
    }

    /// What a message that announces its rest says below it, as the headline quotes it: the
    /// last `ERROR: ` line of a command's output (pip's `No matching distribution found for
    /// …`), else, after a `:`, the lines themselves; cut to 240 characters.
    fn announced(&self) -> Option<String> {
        const MORE_MAX: usize = 240;
        if !announces(&self.message) || self.more.is_empty() {
            return None;
        }
        let rest = match self.more.rfind("ERROR: ") {
            Some(at) => &self.more[at..],
            None if self.message.ends_with(':') => &self.more,
            None => return None,
        };
        Some(match rest.char_indices().nth(MORE_MAX) {
            Some((at, _)) => format!("{} …", &rest[..at]),
            None => rest.to_string(),
        })
    }
}

/// Whether an exception's message announces what follows it below: `… terminated with:`
/// (gRPC), `Run cmd[3] failed with the following details.` (Ray's runtime env, then the
/// command's output).
fn announces(message: &str) -> bool {
    message.ends_with(':') || message.ends_with("the following details.")
}

const TRACEBACK: &str = "Traceback (most recent call last):";

/// Lines a traceback told one line a record may span, from its header to its exception.
const SPREAD_LINES: u32 = 400;

/// Lines between two dumps of one crash in one file: absl's (raw, then again through Ray's
/// logger), then faulthandler's.
const DUMP_GAP: u32 = 200;

/// Every failure in the timeline, with the events that tell it (the first is where it
/// starts). A record that holds a whole failure is one; a traceback whose lines are records
/// of their own (every line stamped by `kubectl logs --timestamps`, or raw stderr) is put back
/// together from its header and the exception lines after it in the same file. Only the
/// header and exception lines are used, so the result is the same whether the frame lines
/// between them were parsed or not.
///
/// The dumps of one crash are one failure: absl's banner names it in every copy (the raw
/// dump, the same through Ray's logger, in the core worker's log, streamed to the driver),
/// and faulthandler's dump after it in the same file tells the Python side, which comes
/// first (its frames are the user's). A faulthandler head told alone (a text read one line
/// a record) takes the first frame outside Ray among the records after it.
pub fn failures(
    events: &[crate::event::Event],
    is_log: impl Fn(crate::event::SourceKind) -> bool,
) -> Vec<(Vec<usize>, Failure)> {
    let mut out: Vec<(Vec<usize>, Failure)> = Vec::new();
    // Open one-line-a-record tracebacks, per file: (index into `out`, header line, last line).
    let mut open: std::collections::BTreeMap<u32, (usize, u32)> = Default::default();
    let mut dumps = Dumps::default();
    for (idx, ev) in events.iter().enumerate() {
        if !is_log(ev.kind) {
            continue;
        }
        let msg = ev.message.as_str();
        if dumps.frame_alone(&mut out, ev) {
            continue;
        }
        if msg.trim() == TRACEBACK.trim_end_matches(':') || msg.trim() == TRACEBACK {
            // A header alone: a chained traceback continues the open one.
            match open.get_mut(&ev.file) {
                Some((_, last)) if ev.line.saturating_sub(*last) <= SPREAD_LINES => {
                    *last = ev.line;
                }
                _ => {
                    out.push((
                        vec![idx],
                        Failure {
                            shape: Shape::PythonTraceback,
                            kind: "Python traceback".to_string(),
                            message: String::new(),
                            frame: None,
                            cut_off: true,
                            ray_parts: Vec::new(),
                            more: String::new(),
                        },
                    ));
                    open.insert(ev.file, (out.len() - 1, ev.line));
                }
            }
            continue;
        }
        if let Some((at, last)) = open.get_mut(&ev.file) {
            if ev.line.saturating_sub(*last) <= SPREAD_LINES && !msg.contains('\n') {
                if let Some((kind, message)) = exception_line(msg.trim_end()) {
                    let entry = &mut out[*at];
                    entry.0.push(idx);
                    entry.1.kind = kind;
                    entry.1.message = message;
                    entry.1.cut_off = false;
                    *last = ev.line;
                    continue;
                }
            }
        }
        if let Some(f) = failure(msg) {
            open.remove(&ev.file);
            dumps.add(&mut out, events, idx, f);
            continue;
        }
        // An exception line alone (`ValueError: …` as `ray start` printed it), in a text
        // that has no levels.
        if ev.level == crate::event::Level::Info && raw_text(ev.kind) {
            if let Some((kind, message)) = exception_line(msg.lines().next().unwrap_or("")) {
                out.push((
                    vec![idx],
                    Failure {
                        shape: Shape::PythonTraceback,
                        kind,
                        message,
                        frame: None,
                        cut_off: false,
                        ray_parts: Vec::new(),
                        more: String::new(),
                    },
                ));
            }
        }
    }
    out
}

/// The abort dumps seen so far, to join those of one crash.
#[derive(Default)]
struct Dumps {
    /// absl's banner (`*** SIGSEGV received at time=… on cpu 0 ***`) → its crash in `out`.
    by_banner: std::collections::HashMap<String, usize>,
    /// The failures in `out` that hold a banner: crashes a faulthandler dump may join.
    crashes: std::collections::BTreeSet<usize>,
    /// Per file, the last dump's failure in `out` and its line.
    last: std::collections::BTreeMap<u32, (usize, u32)>,
    /// Per file, a faulthandler head told alone, whose frames are records of their own:
    /// its failure in `out` and the line it has reached.
    alone: std::collections::BTreeMap<u32, (usize, u32)>,
}

impl Dumps {
    /// Adds a failure read out of one record, to the crash it belongs to when it is one.
    fn add(
        &mut self,
        out: &mut Vec<(Vec<usize>, Failure)>,
        events: &[crate::event::Event],
        idx: usize,
        f: Failure,
    ) {
        let ev = &events[idx];
        let banner = match f.shape {
            Shape::CppFatal => crate::parse::abort::banner_text(&ev.message).map(str::to_string),
            _ => None,
        };
        let near = self
            .last
            .get(&ev.file)
            .filter(|(_, line)| ev.line.saturating_sub(*line) <= DUMP_GAP)
            .map(|&(at, _)| at);
        let joined = match (&banner, f.shape) {
            (Some(b), _) if self.by_banner.contains_key(b) => self.by_banner.get(b).copied(),
            // absl's dump after faulthandler's, or after the failed check that aborted.
            (Some(_), _) if !f.requested_stop() => near.filter(|&at| {
                let other = &out[at].1;
                other.shape == Shape::PythonFatal || other.kind == "Check failed"
            }),
            // faulthandler's dump after absl's (or another copy of one crash's), or after a
            // failed check.
            (None, Shape::PythonFatal) => near.filter(|&at| {
                let other = &out[at].1;
                other.shape == Shape::CppFatal && !other.requested_stop()
                    || other.shape == Shape::PythonFatal && self.crashes.contains(&at)
            }),
            _ => None,
        };
        let at = match joined {
            Some(at) => {
                let other = &out[at].1;
                let whole = |e: &crate::event::Event| e.message.contains('\n');
                // The Python side tells more than the signal, and a dump read whole (the
                // crashed process's own stderr) more than one told a line a record (a copy
                // streamed to the driver): it leads.
                let leads = f.shape == Shape::PythonFatal
                    && (other.kind.starts_with("SIG")
                        || other.shape == Shape::PythonFatal
                            && whole(ev)
                            && !out[at].0.first().is_some_and(|&i| whole(&events[i])));
                if leads {
                    out[at].0.insert(0, idx);
                    out[at].1 = f;
                } else {
                    out[at].0.push(idx);
                }
                at
            }
            None => {
                out.push((vec![idx], f));
                out.len() - 1
            }
        };
        if let Some(b) = banner {
            self.by_banner.entry(b).or_insert(at);
            self.crashes.insert(at);
        }
        if out[at].1.shape == Shape::PythonFatal
            && out[at].1.frame.is_none()
            && !ev.message.contains('\n')
        {
            self.alone.insert(ev.file, (at, ev.line));
        }
        if matches!(out[at].1.shape, Shape::CppFatal | Shape::PythonFatal) {
            self.last.insert(ev.file, (at, ev.line));
        }
    }

    /// A frame of a faulthandler dump told one line a record, after its head: the first
    /// outside Ray and the runtime names where it failed. Whether `ev` was one.
    fn frame_alone(&mut self, out: &mut [(Vec<usize>, Failure)], ev: &crate::event::Event) -> bool {
        let Some(&(at, line)) = self.alone.get(&ev.file) else {
            return false;
        };
        let text = ev.message.as_str();
        if ev.line.saturating_sub(line) > DUMP_GAP || text.contains('\n') {
            self.alone.remove(&ev.file);
            return false;
        }
        if let Some((path, no, func)) = fault_frame(text) {
            self.alone.insert(ev.file, (at, ev.line));
            let f = &mut out[at].1;
            if !is_ray_or_runtime(&path) {
                if f.shape == Shape::PythonFatal && f.frame.is_none() {
                    f.frame = Some(shown_frame(&path, &no, &func));
                }
                self.alone.remove(&ev.file);
            }
            return true;
        }
        let t = after_stream_prefix(text).trim();
        if t.ends_with("(most recent call first):") || t.is_empty() {
            self.alone.insert(ev.file, (at, ev.line));
            return true;
        }
        self.alone.remove(&ev.file);
        false
    }
}

/// A line after the prefix a driver streams a worker's output with, colored or not
/// (`\x1b[36m(decode_frame pid=3015)\x1b[0m `); the line itself when it has none.
fn after_stream_prefix(line: &str) -> &str {
    let plain = line
        .strip_prefix("\x1b[")
        .and_then(|r| r.split_once('m'))
        .map_or(line, |(_, r)| r);
    let Some((_, after)) = plain.strip_prefix('(').and_then(|r| r.split_once(')')) else {
        return line;
    };
    let after = after.strip_prefix("\x1b[0m").unwrap_or(after);
    after.strip_prefix(' ').unwrap_or(after)
}

/// Texts without levels: stdout and stderr, a pasted file.
pub(crate) fn raw_text(kind: crate::event::SourceKind) -> bool {
    use crate::event::SourceKind as K;
    matches!(
        kind,
        K::Worker | K::RayContainer | K::InitContainer | K::JobDriver | K::Unknown
    )
}

/// Reads a failure out of one record's text, if it holds one.
pub fn failure(text: &str) -> Option<Failure> {
    if let Some(f) = faulthandler(text) {
        return Some(f);
    }
    if let Some(at) = text.find(TRACEBACK) {
        return Some(python(&text[at + TRACEBACK.len()..]));
    }
    // A fragment pasted without its header: frames are enough to tell a traceback.
    if text
        .lines()
        .filter(|l| frame_of(l.trim_start()).is_some())
        .count()
        >= 2
    {
        let mut f = python(text);
        f.kind = if f.cut_off {
            "Python traceback (a fragment)".to_string()
        } else {
            f.kind
        };
        return Some(f);
    }
    if let Some(f) = go_panic(text) {
        return Some(f);
    }
    cpp_fatal(text)
}

fn python(after: &str) -> Failure {
    let lines: Vec<&str> = after.lines().filter(|l| !l.trim().is_empty()).collect();
    let mut frame = None;
    let mut ray_frame = None;
    let mut ray_parts: Vec<String> = Vec::new();
    let mut last_exception: Option<(String, String)> = None;
    let mut more: Vec<&str> = Vec::new();
    let mut ended_in_frame = true;
    for (i, line) in lines.iter().enumerate() {
        let trimmed = line.trim_start();
        if let Some(f) = frame_of(trimmed) {
            let shown = shown_frame(&f.0, &f.1, &f.2);
            if let Some(part) = ray_part(&f.0) {
                if !ray_parts.contains(&part) {
                    ray_parts.push(part);
                }
                if !is_ray_internal(&f.0) {
                    ray_frame = Some(shown);
                }
            } else if !is_ray_or_runtime(&f.0) {
                frame = Some(shown);
            }
            ended_in_frame = true;
            continue;
        }
        // A chained exception starts a new list of frames.
        if trimmed.starts_with("During handling of the above exception")
            || trimmed.starts_with("The above exception was the direct cause")
        {
            frame = None;
            ray_frame = None;
            continue;
        }
        if let Some(exc) = exception_line(line) {
            last_exception = Some(exc);
            more.clear();
            ended_in_frame = false;
            continue;
        }
        // A message that ends in `:` goes on below, indented: gRPC's `<_InactiveRpcError of
        // RPC that terminated with:` and its `status = …` and `details = "…"` (its debug
        // string repeats the details).
        let goes_on = last_exception.as_ref().is_some_and(|(_, m)| announces(m)) && !ended_in_frame;
        if line.starts_with(' ') || line.starts_with('\t') {
            let t = line.trim();
            if goes_on && !t.starts_with("debug_error_string") {
                more.push(t);
            }
            continue;
        }
        // An unindented line after the exception line goes on with its message (a repr's
        // closing `>` says nothing).
        if last_exception.is_some() && !ended_in_frame {
            if line.trim() != ">" {
                more.push(line.trim());
            }
            continue;
        }
        if i + 1 == lines.len() && last_exception.is_none() {
            ended_in_frame = true;
        }
    }
    // Where no frame is outside Ray, the innermost frame of the Ray component's own code.
    let frame = frame.or(ray_frame);
    match last_exception {
        Some((kind, message)) => Failure {
            shape: Shape::PythonTraceback,
            kind,
            message,
            more: more.join(" "),
            frame,
            cut_off: false,
            ray_parts,
        },
        None => Failure {
            shape: Shape::PythonTraceback,
            kind: "Python traceback".to_string(),
            message: String::new(),
            more: String::new(),
            frame,
            cut_off: ended_in_frame,
            ray_parts,
        },
    }
}

/// `File "/app/model.py", line 42, in __init__` → (path, line, function).
fn frame_of(line: &str) -> Option<(String, String, String)> {
    let rest = line.strip_prefix("File \"")?;
    let (path, rest) = rest.split_once('"')?;
    let rest = rest.trim_start_matches(',').trim_start();
    let rest = rest.strip_prefix("line ")?;
    let (num, rest) = rest.split_once(',').unwrap_or((rest, ""));
    let func = rest.trim().strip_prefix("in ").unwrap_or("").trim();
    Some((path.to_string(), num.trim().to_string(), func.to_string()))
}

/// A frame's path with `/` between its folders, whatever the system that wrote it: Windows
/// writes `C:\Users\me\…\site-packages\ray\serve\…` where Linux writes
/// `/home/ray/…/site-packages/ray/serve/…`, and both are read alike.
fn posix(path: &str) -> std::borrow::Cow<'_, str> {
    if path.contains('\\') {
        std::borrow::Cow::Owned(path.replace('\\', "/"))
    } else {
        std::borrow::Cow::Borrowed(path)
    }
}

/// A frame in the standard library: `/usr/lib/python3.11/…` on Linux; on Windows the
/// library has no version in its folder (`C:\Python310\Lib\threading.py`,
/// `…\envs\x\lib\asyncio\…`): there any `lib` folder outside `site-packages` is taken
/// for it.
fn is_standard_library(p: &str) -> bool {
    if p.contains("-packages/") {
        return false;
    }
    let windows = p.as_bytes().get(1..3) == Some(&b":/"[..]);
    p.contains("/lib/python") || windows && p.to_ascii_lowercase().contains("/lib/")
}

/// The path of a Python frame line (`File "/app/model.py", line 42, in load`, or a
/// faulthandler dump's `… line 42 in load`) of code outside the standard library,
/// `/`-separated: Windows paths read like Linux ones.
fn code_frame_path(line: &str) -> Option<String> {
    let (path, _, _) = frame_of(line.trim_start())?;
    let p = posix(&path).into_owned();
    (!is_standard_library(&p)).then_some(p)
}

/// Whether `line` is a Python frame of code outside the standard library (Ray's included).
pub fn is_code_frame(line: &str) -> bool {
    code_frame_path(line).is_some()
}

/// Whether `line` is a Python frame of code outside Ray and the standard library: the user's
/// own, or a library it calls.
pub fn frame_outside_ray(line: &str) -> bool {
    code_frame_path(line).is_some_and(|p| !p.contains("-packages/ray/"))
}

/// Ray's plumbing rather than a component's own code: its private modules and the Cython core.
fn is_ray_internal(path: &str) -> bool {
    let p = posix(path);
    p.contains("/ray/_private/") || p.contains("/ray/_raylet")
}

fn is_ray_or_runtime(path: &str) -> bool {
    let p = posix(path);
    p.contains("-packages/ray/")
        || p.contains("/python/ray/")
        || p.starts_with("<frozen")
        || p.contains("/asyncio/")
        || p.contains("/concurrent/futures/")
        || is_standard_library(&p)
        || p.contains("/starlette/")
        || p.contains("/uvicorn/")
        || p.contains("/fastapi/")
        || p.contains("/grpc/")
}

/// The Ray package a frame is in (`…/site-packages/ray/autoscaler/_private/x.py` →
/// `autoscaler`).
fn ray_part(path: &str) -> Option<String> {
    let p = posix(path);
    let at = p
        .find("-packages/ray/")
        .map(|i| i + "-packages/ray/".len())?;
    let rest = &p[at..];
    let part = rest.split('/').next().unwrap_or(rest);
    Some(part.trim_end_matches(".py").to_string())
}

fn short_path(path: &str) -> String {
    let parts: Vec<&str> = path.rsplit(['/', '\\']).take(2).collect();
    // A job's `working_dir` is unpacked in a folder named by its hash, which says nothing.
    if parts.get(1).is_some_and(|p| p.starts_with("_ray_pkg_")) {
        return parts[0].to_string();
    }
    parts.into_iter().rev().collect::<Vec<_>>().join("/")
}

/// `jobs.py:57 in decode_frame`.
fn shown_frame(path: &str, line: &str, func: &str) -> String {
    format!("{}:{line} in {func}", short_path(path))
}

/// CPython's faulthandler dump: `Fatal Python error: <what>`, then for each thread a block
/// `Current thread 0x… (most recent call first):` (or `Thread 0x…`, or `Stack` when it dumps
/// one thread) of frames `File "<path>", line <n> in <function>`, the innermost first. The
/// frame is the innermost outside Ray and the runtime of the thread that failed (the block
/// `Current thread` or `Stack`, else the first); lines may carry a driver's prefix.
fn faulthandler(text: &str) -> Option<Failure> {
    let at = crate::parse::abort::faulthandler_head(text)?;
    let mut lines = text[at..].lines();
    let head = lines.next()?;
    let message = crate::parse::abort::fatal_python_error(head)?;
    // `Fatal Python error`, or `Windows fatal exception`.
    let kind = head.split(':').next().unwrap_or(head);
    // The frames of each block: (the failing thread's, frames).
    let mut blocks: Vec<(bool, Vec<Frame>)> = Vec::new();
    for line in lines {
        let t = line.trim_end();
        if let Some(head) = t.strip_suffix("(most recent call first):") {
            let failing = head.contains("Current thread") || head.trim_end().ends_with("Stack");
            blocks.push((failing, Vec::new()));
        } else if let Some(f) = fault_frame(t) {
            match blocks.last_mut() {
                Some((_, frames)) => frames.push(f),
                None => blocks.push((true, vec![f])),
            }
        }
    }
    let frames = blocks
        .iter()
        .find(|(failing, _)| *failing)
        .or(blocks.first())
        .map(|(_, frames)| frames.as_slice())
        .unwrap_or_default();
    let mut ray_parts: Vec<String> = Vec::new();
    for (path, _, _) in frames {
        if let Some(part) = ray_part(path) {
            if !ray_parts.contains(&part) {
                ray_parts.push(part);
            }
        }
    }
    // Innermost first: the first frame outside Ray, else the first of a Ray component's own
    // code.
    let frame = frames
        .iter()
        .find(|(path, _, _)| !is_ray_or_runtime(path))
        .or_else(|| {
            frames
                .iter()
                .find(|(path, _, _)| ray_part(path).is_some() && !is_ray_internal(path))
        })
        .map(|(path, no, func)| shown_frame(path, no, func));
    Some(Failure {
        shape: Shape::PythonFatal,
        kind: kind.to_string(),
        message: message.to_string(),
        more: String::new(),
        frame,
        cut_off: false,
        ray_parts,
    })
}

/// A frame: (path, line, function).
type Frame = (String, String, String);

/// A faulthandler frame, anywhere in the line: `File "/app/jobs.py", line 57 in decode_frame`
/// → (path, line, function).
fn fault_frame(line: &str) -> Option<Frame> {
    let at = line.find("File \"")?;
    let rest = &line[at + "File \"".len()..];
    let (path, rest) = rest.split_once('"')?;
    let rest = rest.strip_prefix(", line ")?;
    let (num, func) = rest.split_once(" in ")?;
    if num.is_empty() || !num.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((path.to_string(), num.to_string(), func.trim().to_string()))
}

/// A line at column 0 that names an exception: `ValueError: x`, `ray.exceptions.RayTaskError(KeyError): x`,
/// `KeyboardInterrupt`, `requests.exceptions.ConnectionError: x`.
fn exception_line(line: &str) -> Option<(String, String)> {
    crate::parse::python_exception::raised_error(line).map(|r| (r.kind(), r.text.to_string()))
}

fn go_panic(text: &str) -> Option<Failure> {
    let start = text
        .lines()
        .position(|l| l.trim_start().starts_with("panic: "))?;
    let lines: Vec<&str> = text.lines().collect();
    let message = lines[start]
        .trim_start()
        .trim_start_matches("panic: ")
        .trim()
        .to_string();
    // The first function after the goroutine header that is not the runtime's.
    let frame = lines[start..]
        .iter()
        .map(|l| l.trim())
        .skip_while(|l| !l.starts_with("goroutine "))
        .skip(1)
        .find(|l| {
            l.contains('(')
                && !l.starts_with("panic(")
                && !l.starts_with("runtime.")
                && !l.starts_with("sigs.k8s.io/")
                && !l.starts_with("k8s.io/")
        })
        .map(|l| l.rsplit_once('(').map_or(l, |(f, _)| f).to_string());
    Some(Failure {
        shape: Shape::GoPanic,
        kind: "panic".to_string(),
        message,
        frame,
        cut_off: false,
        ray_parts: Vec::new(),
        more: String::new(),
    })
}

fn cpp_fatal(text: &str) -> Option<Failure> {
    for line in text.lines() {
        if let Some(i) = line.find("Check failed: ") {
            return Some(Failure {
                shape: Shape::CppFatal,
                kind: "Check failed".to_string(),
                // An event file writes the record's line breaks as `\n` (`replaceLineFeed`),
                // JSON-escaped again when it is read as text (`\\n`).
                message: line[i + "Check failed: ".len()..]
                    .split("\\n")
                    .next()
                    .unwrap_or_default()
                    .trim_end_matches('\\')
                    .trim()
                    .to_string(),
                frame: cpp_location(line),
                cut_off: false,
                ray_parts: Vec::new(),
                more: String::new(),
            });
        }
        if let Some(i) = line.find("*** SIG") {
            let sig = line[i + 4..].split_whitespace().next().unwrap_or("signal");
            let message = if crate::parse::abort::asks_to_stop(sig) {
                "the process was told to stop"
            } else {
                "the process was killed by a fatal signal"
            };
            return Some(Failure {
                shape: Shape::CppFatal,
                kind: sig.to_string(),
                message: message.to_string(),
                frame: pc_symbol(text),
                cut_off: false,
                ray_parts: Vec::new(),
                more: String::new(),
            });
        }
    }
    None
}

/// The function absl's dump names where the signal came (`PC: @ 0x7f… (unknown)
/// epoll_wait` → `epoll_wait`), when the symbol is known.
fn pc_symbol(text: &str) -> Option<String> {
    let line = text.lines().find_map(|l| Some(&l[l.find("PC: @")?..]))?;
    let symbol = line.split_whitespace().last()?;
    (symbol != "(unknown)" && !symbol.starts_with("0x")).then(|| symbol.to_string())
}

/// `[… F 21 21] task_manager.cc:123: Check failed` → `task_manager.cc:123`.
fn cpp_location(line: &str) -> Option<String> {
    let after = line.split("] ").nth(1)?;
    let loc = after.split(": ").next()?;
    (loc.contains(".cc:") || loc.contains(".h:")).then(|| loc.to_string())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn a_python_traceback_gives_its_exception_and_the_users_frame() {
        let text = r#"2024-06-12 10:31:40,123	ERROR replica.py:123 -- Exception in replica constructor.
Traceback (most recent call last):
  File "/home/ray/anaconda3/lib/python3.10/site-packages/ray/serve/_private/replica.py", line 410, in initialize
    await self._user_callable_wrapper.initialize_callable()
  File "/home/ray/app/model.py", line 42, in __init__
    self.model = load(path)
  File "/home/ray/anaconda3/lib/python3.10/site-packages/torch/serialization.py", line 791, in load
    with _open_file_like(f, 'rb') as opened_file:
FileNotFoundError: [Errno 2] No such file or directory: '/models/weights.pt'"#;
        let f = failure(text).unwrap();
        assert_eq!(f.kind, "FileNotFoundError");
        assert_eq!(
            f.message,
            "[Errno 2] No such file or directory: '/models/weights.pt'"
        );
        assert_eq!(
            f.frame.as_deref(),
            Some("torch/serialization.py:791 in load")
        );
        assert!(!f.cut_off);
    }

    /// ray-project/ray#49613: an exception message with a line break goes on below the
    /// exception line; the message keeps its first line, `more` the rest.
    #[test]
    fn an_exception_message_goes_on_below_its_line() {
        let text = "Traceback (most recent call last):\n  ...\nValueError: Autoscaler failed to detect `CPU` resources for group head-group.\nSet the `--num-cpus` rayStartParam and/or the CPU resource limit for the Ray container.";
        let f = failure(text).unwrap();
        assert_eq!(f.kind, "ValueError");
        assert_eq!(
            f.message,
            "Autoscaler failed to detect `CPU` resources for group head-group."
        );
        assert_eq!(
            f.more,
            "Set the `--num-cpus` rayStartParam and/or the CPU resource limit for the Ray container."
        );
        // A chained exception starts over.
        let f = failure("Traceback (most recent call last):\n  File \"a.py\", line 1, in f\nKeyError: 'x'\nmore of it\n\nDuring handling of the above exception, another exception occurred:\n\nTraceback (most recent call last):\n  File \"b.py\", line 2, in g\nValueError: bad").unwrap();
        assert_eq!(f.kind, "ValueError");
        assert_eq!(f.more, "");
    }

    /// A gRPC error's message announces what follows (`… terminated with:`): the indented
    /// `status` and `details` below are the message's rest, and the headline says them; the
    /// debug string (the details again) and the closing `>` are left out.
    #[test]
    fn a_message_ending_in_a_colon_is_said_with_what_follows() {
        let text = "Traceback (most recent call last):\n  File \"/home/ray/anaconda3/lib/python3.9/site-packages/ray/scripts/scripts.py\", line 2437, in healthcheck\ngrpc._channel._InactiveRpcError: <_InactiveRpcError of RPC that terminated with:\n\tstatus = StatusCode.UNAVAILABLE\n\tdetails = \"DNS resolution failed for x-head-svc.ml.svc.cluster.local:6379: Domain name not found\"\n\tdebug_error_string = \"UNKNOWN:DNS resolution failed\"\n>";
        let f = failure(text).unwrap();
        assert_eq!(
            f.more,
            "status = StatusCode.UNAVAILABLE details = \"DNS resolution failed for x-head-svc.ml.svc.cluster.local:6379: Domain name not found\""
        );
        assert_eq!(
            f.headline(),
            "_InactiveRpcError: <_InactiveRpcError of RPC that terminated with: status = StatusCode.UNAVAILABLE details = \"DNS resolution failed for x-head-svc.ml.svc.cluster.local:6379: Domain name not found\" at scripts/scripts.py:2437 in healthcheck"
        );
        // A command's output: its last `ERROR:` line.
        let f = failure("Traceback (most recent call last):\n  File \"a.py\", line 1, in f\nray._private.runtime_env.utils.SubprocessCalledProcessError: Run cmd[3] failed with the following details.\nCommand '['python', '-m', 'pip', 'install']' returned non-zero exit status 1.\nLast 50 lines of stdout:\n    ERROR: Could not find a version that satisfies the requirement torchvision==0.99.1 (from versions: 0.15.1)\n    ERROR: No matching distribution found for torchvision==0.99.1").unwrap();
        assert_eq!(
            f.headline(),
            "SubprocessCalledProcessError: Run cmd[3] failed with the following details. ERROR: No matching distribution found for torchvision==0.99.1 at a.py:1 in f"
        );
        // Indented lines after a message that announces nothing are source lines: not kept.
        let f = failure("Traceback (most recent call last):\n  File \"a.py\", line 1, in f\nKeyError: 'x'\n    x = 1").unwrap();
        assert_eq!(f.more, "");
    }

    /// The same traceback written on Windows: frames read like their Linux forms.
    #[test]
    fn windows_frames_read_like_linux_ones() {
        let linux = failure(
            "Traceback (most recent call last):\n  File \"/home/ray/anaconda3/lib/python3.10/site-packages/ray/serve/_private/replica.py\", line 410, in initialize\n  File \"/home/ray/anaconda3/lib/python3.10/site-packages/ray/serve/api.py\", line 5, in run\n  File \"/home/ray/app/model.py\", line 42, in __init__\n  File \"/home/ray/anaconda3/lib/python3.10/json/decoder.py\", line 337, in decode\nValueError: bad",
        )
        .unwrap();
        let windows = failure(
            "Traceback (most recent call last):\n  File \"C:\\Users\\me\\miniconda3\\envs\\x\\lib\\site-packages\\ray\\serve\\_private\\replica.py\", line 410, in initialize\n  File \"C:\\Users\\me\\miniconda3\\envs\\x\\lib\\site-packages\\ray\\serve\\api.py\", line 5, in run\n  File \"C:\\Users\\me\\app\\model.py\", line 42, in __init__\n  File \"C:\\Users\\me\\miniconda3\\envs\\x\\lib\\json\\decoder.py\", line 337, in decode\nValueError: bad",
        )
        .unwrap();
        assert_eq!(linux.frame.as_deref(), Some("app/model.py:42 in __init__"));
        assert_eq!(windows, linux);
        assert!(frame_outside_ray(
            "  File \"C:\\Users\\me\\proj\\app.py\", line 3, in f"
        ));
        assert!(!frame_outside_ray(
            "  File \"C:\\Python310\\Lib\\site-packages\\ray\\_private\\worker.py\", line 1, in init"
        ));
        assert!(!is_code_frame(
            "  File \"C:\\Python310\\Lib\\threading.py\", line 1, in run"
        ));
    }

    /// A worker of a Ray 2.20 session on Windows whose module called `ray.init()` at import:
    /// faulthandler's Windows head, Ray's frames, the user's module, importlib.
    #[test]
    fn a_windows_faulthandler_dump_names_the_users_frame() {
        let dump = "Windows fatal exception: access violation\n\nStack (most recent call first):\n  File \"C:\\Users\\me\\AppData\\Local\\pypoetry\\Cache\\virtualenvs\\bridge-robot-WMeMRp1k-py3.10\\lib\\site-packages\\ray\\_private\\worker.py\", line 2362 in connect\n  File \"C:\\Users\\me\\AppData\\Local\\pypoetry\\Cache\\virtualenvs\\bridge-robot-WMeMRp1k-py3.10\\lib\\site-packages\\ray\\_private\\client_mode_hook.py\", line 103 in wrapper\n  File \"C:\\Users\\me\\Documents\\Github\\bridge-robot\\bridge-robot\\src\\main.py\", line 21 in <module>\n  File \"<frozen importlib._bootstrap>\", line 241 in _call_with_frames_removed\n  File \"C:\\Users\\me\\AppData\\Local\\pypoetry\\Cache\\virtualenvs\\bridge-robot-WMeMRp1k-py3.10\\lib\\site-packages\\ray\\_private\\workers\\default_worker.py\", line 289 in <module>";
        let f = failure(dump).unwrap();
        assert_eq!(f.shape, Shape::PythonFatal);
        assert_eq!(
            f.headline(),
            "Windows fatal exception: access violation at src/main.py:21 in <module>"
        );
        assert_eq!(f.ray_parts, ["_private"]);
    }

    #[test]
    fn ray_wrapped_errors_keep_the_inner_type() {
        let text = "Traceback (most recent call last):\n  File \"/app/job.py\", line 9, in <module>\n    ray.get(f.remote())\nray.exceptions.RayTaskError(KeyError): ray::f() (pid=1, ip=10.0.0.1)\n  File \"/app/job.py\", line 5, in f\nKeyError: 'label'";
        let f = failure(text).unwrap();
        assert_eq!(f.kind, "KeyError");
        assert_eq!(f.message, "'label'");
    }

    #[test]
    fn a_traceback_that_stops_in_a_frame_is_cut_off() {
        let text = "Traceback (most recent call last):\n  File \"/app/serve_app.py\", line 12, in <module>\n    import transformers";
        let f = failure(text).unwrap();
        assert!(f.cut_off);
        assert_eq!(f.frame.as_deref(), Some("app/serve_app.py:12 in <module>"));
        assert!(f.headline().contains("cut off"));
    }

    #[test]
    fn a_traceback_told_one_line_a_record_is_put_back_together() {
        // `kubectl logs --timestamps`: every line is a record; the sieve kept the header and
        // the exception lines only.
        let line = |no: u32, text: &str| {
            let mut e = crate::event::Event::new(no, text);
            e.kind = crate::event::SourceKind::Unknown;
            e
        };
        let events = vec![
            line(1, "Traceback (most recent call last):"),
            line(8, "ConnectionRefusedError: [Errno 111] Connection refused"),
            line(12, "Traceback (most recent call last):"),
            line(18, "requests.exceptions.ConnectionError: HTTPConnectionPool(host='x', port=8265): Max retries exceeded"),
            line(900, "ValueError: The configured object store size (10.24 GB) exceeds /dev/shm size (8.0 GB)."),
        ];
        let found = failures(&events, |_| true);
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(found[0].0, vec![0, 1, 3]);
        assert_eq!(found[0].1.kind, "ConnectionError");
        assert!(!found[0].1.cut_off);
        assert_eq!(found[1].1.kind, "ValueError");
    }

    #[test]
    fn a_fragment_without_its_header_is_a_traceback() {
        let text = "    self.run()\n  File \"/x/site-packages/ray/autoscaler/_private/kuberay/run_autoscaler.py\", line 48, in _run_autoscaler\n    _setup_logging()\n  File \"/x/site-packages/ray/autoscaler/_private/kuberay/run_autoscaler.py\", line 80, in _setup_logging\n    backup_count=5,";
        let f = failure(text).unwrap();
        assert!(f.cut_off);
        assert_eq!(f.ray_parts, vec!["autoscaler".to_string()]);
        assert_eq!(
            f.frame.as_deref(),
            Some("kuberay/run_autoscaler.py:80 in _setup_logging")
        );
    }

    /// Ray 2.9.3, a task that called `ctypes.string_at(0)` in `decode_frame`: the first
    /// frame outside Ray and the standard library, innermost first.
    const FAULTHANDLER: &str = "Fatal Python error: Segmentation fault\n\nStack (most recent call first):\n  File \"/home/ray/anaconda3/lib/python3.11/ctypes/__init__.py\", line 519 in string_at\n  File \"/tmp/ray/session_2026-12-06_08-26-51_265186_2494/runtime_resources/working_dir_files/_ray_pkg_d27099ac56c886be/jobs.py\", line 53 in decode_frame\n  File \"/home/ray/anaconda3/lib/python3.11/site-packages/ray/_private/worker.py\", line 847 in main_loop\n  File \"/home/ray/anaconda3/lib/python3.11/site-packages/ray/_private/workers/default_worker.py\", line 282 in <module>\n\nExtension modules: msgpack._cmsgpack, google._upb._message (total: 2)";

    #[test]
    fn a_faulthandler_dump_gives_the_fatal_error_and_the_users_frame() {
        let f = failure(FAULTHANDLER).unwrap();
        assert_eq!(f.shape, Shape::PythonFatal);
        assert_eq!(
            f.headline(),
            "Fatal Python error: Segmentation fault at jobs.py:53 in decode_frame"
        );
        assert_eq!(f.verb(), "aborted with");
        assert!(!f.requested_stop());
        // Every thread dumped: the one that failed is the current one.
        let threads = "Fatal Python error: Aborted\n\nThread 0x00007f3c6bfff6c0 (most recent call first):\n  File \"/app/poller.py\", line 8 in poll\n\nCurrent thread 0x00007f3c8b7fe740 (most recent call first):\n  File \"/usr/lib/python3.11/threading.py\", line 324 in wait\n  File \"/app/model.py\", line 12 in load\n  File \"/app/model.py\", line 30 in <module>";
        let f = failure(threads).unwrap();
        assert_eq!(f.message, "Aborted");
        assert_eq!(f.frame.as_deref(), Some("app/model.py:12 in load"));
    }

    #[test]
    fn absl_dumps_name_their_signal_and_a_sigterm_is_a_stop() {
        let segv = "*** SIGSEGV received at time=1796545631 on cpu 0 ***\nPC: @     0x7f4179985ad8  (unknown)  (unknown)\n    @     0x7f417985a050  (unknown)  (unknown)";
        let f = failure(segv).unwrap();
        assert_eq!(
            f.headline(),
            "SIGSEGV: the process was killed by a fatal signal"
        );
        assert!(!f.requested_stop());
        let term = "*** SIGTERM received at time=1796546550 on cpu 1 ***\nPC: @     0x7fadbd6ed545  (unknown)  clock_nanosleep\n    @ ... and at least 3 more frames";
        let f = failure(term).unwrap();
        assert!(f.requested_stop());
        assert_eq!(
            f.headline(),
            "SIGTERM: the process was told to stop at clock_nanosleep"
        );
    }

    /// One crash printed four times (absl's dump raw and through the logger in the worker's
    /// stderr, the logger's copy in its core worker log, faulthandler's dump after them, and
    /// the driver's streamed copy told a line a record) is one failure, led by the dump
    /// read whole.
    #[test]
    fn the_dumps_of_one_crash_are_one_failure() {
        use crate::event::{Event, SourceKind};
        let ev = |file: u32, line: u32, kind: SourceKind, text: &str| {
            let mut e = Event::new(line, text);
            e.file = file;
            e.kind = kind;
            e
        };
        let banner = "*** SIGSEGV received at time=1796545631 on cpu 0 ***";
        let logged = format!("{banner}\n[2026-12-06 08:27:11,608 E 3015 3015] logging.cc:361: PC: @     0x7f4179985ad8  (unknown)  (unknown)");
        let driver = |t: &str| format!("\x1b[36m(decode_frame pid=3015)\x1b[0m {t}");
        let events = vec![
            ev(0, 7, SourceKind::JobDriver, &driver(banner)),
            ev(0, 10, SourceKind::JobDriver, &driver("Fatal Python error: Segmentation fault")),
            ev(0, 11, SourceKind::JobDriver, &driver("")),
            ev(0, 12, SourceKind::JobDriver, &driver("Stack (most recent call first):")),
            ev(0, 13, SourceKind::JobDriver, &driver("  File \"/tmp/ray/session_x/runtime_resources/working_dir_files/_ray_pkg_d2/jobs.py\", line 53 in decode_frame")),
            ev(1, 3, SourceKind::Worker, &format!("{banner}\nPC: @     0x7f4179985ad8  (unknown)  (unknown)")),
            ev(1, 6, SourceKind::Worker, &logged),
            ev(2, 50, SourceKind::CoreWorker, &logged),
            ev(1, 9, SourceKind::Worker, FAULTHANDLER),
        ];
        let found = failures(&events, |_| true);
        assert_eq!(found.len(), 1, "{found:?}");
        let (idxs, f) = &found[0];
        assert_eq!(idxs[0], 8, "{idxs:?}");
        assert_eq!(idxs.len(), 6, "{idxs:?}");
        assert_eq!(
            f.headline(),
            "Fatal Python error: Segmentation fault at jobs.py:53 in decode_frame"
        );
        // The driver's copy alone still finds its frame in the records after it.
        let found = failures(&events[..5], |_| true);
        assert_eq!(
            found[0].1.frame.as_deref(),
            Some("jobs.py:53 in decode_frame")
        );
    }

    #[test]
    fn go_panics_and_cpp_checks() {
        let go = "panic: runtime error: invalid memory address or nil pointer dereference\n[signal SIGSEGV: segmentation violation]\n\ngoroutine 312 [running]:\ngithub.com/ray-project/kuberay/ray-operator/controllers/ray.(*RayServiceReconciler).Reconcile(0xc000)\n\t/workspace/controllers/ray/rayservice_controller.go:120 +0x1a";
        let f = failure(go).unwrap();
        assert_eq!(f.shape, Shape::GoPanic);
        assert_eq!(
            f.message,
            "runtime error: invalid memory address or nil pointer dereference"
        );
        assert!(f.frame.unwrap().ends_with("Reconcile"));
        let cpp = "[2024-06-12 10:31:40,123 C 21 21] node_manager.cc:1043: Check failed: node_info != nullptr";
        let f = failure(cpp).unwrap();
        assert_eq!(f.kind, "Check failed");
        assert_eq!(f.frame.as_deref(), Some("node_manager.cc:1043"));
        // The same check in an event file (Ray 2.9.3), its line breaks written as `\n`, as
        // the file holds it and as its JSON decodes.
        let event = r#"{"custom_fields":{},"label":"RAY_FATAL_CHECK_FAILED","message":"core_worker.cc:1:  Check failed: _s.ok() Bad status: IOError: Broken pipe\\n*** StackTrace Information ***\\n/home/ray/anaconda3/lib/python3.11/site-packages/ray/_raylet.so(+0xfe93da) [0x7fb185be93da] ray::operator<<()"}"#;
        for text in [event.to_string(), event.replace(r"\\", r"\")] {
            assert_eq!(
                failure(&text).unwrap().message,
                "_s.ok() Bad status: IOError: Broken pipe",
                "{text}"
            );
        }
        assert!(failure("all is well").is_none());
    }
}
