//! The command line: clap types and their conversion into validated library inputs. No other
//! module names clap, and nothing here reads the bundle.

use std::io::{self, BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::analysis::{Analysis, Progress};
use crate::bundle::Limits;
use crate::event::Level;
use crate::exit::{emit, exit_code, Failure};
use crate::load::LoadConfig;
use crate::query::{self, Query};
use crate::rank::Quote;
use crate::redact::{RedactConfig, Redactor};
use crate::report::style::Style;
use crate::report::TextOptions;
use crate::report_data::TimelineDataConfig;
use crate::rules::{library, Rule, Severity};
use crate::timeline::TimeConfig;

#[derive(Parser, Debug)]
#[command(
    name = "raysift",
    version,
    about = "Explain, ranked and with evidence, why a KubeRay RayService / RayCluster / RayJob is broken",
    long_about = "raysift reads a KubeRay / Ray support bundle offline: a .tar.gz/.tgz, .tar or .zip, \
a directory (a hand-made collection, `kubectl ray log` output, a copy of /tmp/ray/session_latest/logs, \
a troubleshoot.sh support bundle, `kubectl cluster-info dump`), a single log file, or - for standard input. \
Files are recognised by content first and name second.\n\n\
Exit codes: 0 success (the whole bundle was read and no cause is at or above --fail-on), \
1 causes found at or above --fail-on, 2 the bundle could not be read at all, or part of it \
could not be read (a truncated or corrupt archive, a limit reached, an unreadable file) and no \
cause is at or above --fail-on, or it is no KubeRay, Ray or Kubernetes bundle at all, or \
--namespace/--object names nothing in it, or the command line is wrong."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Analyse a bundle and print what it holds and why it is broken
    #[command(visible_alias = "analyse")]
    Analyze(AnalyzeArgs),
    /// Print the merged, time-ordered event stream of a bundle
    Timeline(TimelineArgs),
    /// Analyse many bundles, in parallel: one JSON line per bundle
    Batch(BatchArgs),
    /// Say what changed between a bundle that worked (OLD) and one that does not (NEW)
    #[command(long_about = DIFF_ABOUT)]
    Diff(DiffArgs),
    /// List the rules, or print one rule's documentation; search Ray's and KubeRay's messages
    Rules(RulesArgs),
    /// Say what a log line is: the component that writes it, what it means, the versions
    /// that print it, the cause it points to and what to do next
    #[command(
        long_about = "Say what a log line is: the component that writes it, what it means, \
the versions of Ray or KubeRay that print that wording, the catalogue cause it points to and what \
to do next. Give the lines as arguments (quote each), or pipe them on standard input, one a line.\n\n\
The line is matched against the message catalogue: every message Ray's and KubeRay's source can \
log at WARNING or above, raise, or emit as a Warning event, extracted from several versions of \
each (patterns/messages/ in the repository), and against the signatures of the known issues: \
bugs of some releases, with the release that fixed them (patterns/known/, `raysift rules \
--known`).\n\n\
Exit codes: 0 every line matched a template or a known issue, 1 some line matched neither, 2 \
the command line is wrong."
    )]
    Explain(ExplainArgs),
    /// Validate pattern files (every rule, its doc and its sample lines)
    CheckPatterns(CheckPatternsArgs),
    /// Print a shell completion script (bash, zsh or fish) to standard output
    Completions(CompletionsArgs),
    /// Print the JSON Schema of an output: the analyze report, a batch line or a timeline line
    Schema(SchemaArgs),
    /// Gather a bundle from the cluster with your kubectl (read-only) into one .tar.gz
    Collect(CollectArgs),
}

#[derive(Args, Debug)]
pub struct SchemaArgs {
    /// Which output's schema to print
    #[arg(value_enum, value_name = "OUTPUT")]
    pub of: SchemaOf,
}

/// The JSON outputs whose schemas raysift ships (`schema/` in the repository).
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum SchemaOf {
    /// `analyze --format json`: the `raysift.report/v1` report
    Report,
    /// One line of `batch` output
    Batch,
    /// One line of `timeline --format json` output
    Timeline,
    /// `diff --format json`: the `raysift.diff/v1` list of changes
    Diff,
}

impl SchemaOf {
    /// The schema's text (JSON Schema draft 2020-12), compiled in.
    pub fn text(self) -> &'static str {
        match self {
            SchemaOf::Report => include_str!("../schema/report.v1.json"),
            SchemaOf::Batch => include_str!("../schema/batch.v1.json"),
            SchemaOf::Timeline => include_str!("../schema/timeline.v1.json"),
            SchemaOf::Diff => include_str!("../schema/diff.v1.json"),
        }
    }
}

#[derive(Args, Debug)]
#[command(group(clap::ArgGroup::new("target").args(["rayservice", "raycluster", "rayjob", "all"])))]
pub struct CollectArgs {
    /// Namespace of the Ray objects (default: the current context's)
    #[arg(long, short = 'n', value_name = "NS")]
    pub namespace: Option<String>,
    /// Collect this RayService, its RayClusters, their pods and services
    #[arg(long, value_name = "NAME")]
    pub rayservice: Option<String>,
    /// Collect this RayCluster, its pods and services
    #[arg(long, value_name = "NAME")]
    pub raycluster: Option<String>,
    /// Collect this RayJob, its RayCluster and its submitter Job
    #[arg(long, value_name = "NAME")]
    pub rayjob: Option<String>,
    /// Collect every RayService, RayCluster and RayJob of the namespace (the default)
    #[arg(long)]
    pub all: bool,
    /// Namespace of the KubeRay operator (default: found by its label in any namespace)
    #[arg(long, value_name = "NS")]
    pub operator_namespace: Option<String>,
    /// Only logs newer than this (passed to kubectl logs --since, e.g. 2h, 30m)
    #[arg(long, value_name = "DURATION")]
    pub since: Option<String>,
    /// Write the archive here (default: raysift-collect-<namespace>-<time>.tar.gz)
    #[arg(long, value_name = "FILE.tar.gz")]
    pub out: Option<PathBuf>,
    /// Kill a kubectl command that runs longer than this (e.g. 30s, 2m)
    #[arg(long, value_name = "DURATION", default_value = "60s")]
    pub timeout: String,
    /// Keep at most this much of one container's log, and of the head's Ray log directory
    #[arg(long, value_name = "SIZE", default_value = "256M")]
    pub max_log_bytes: String,
    /// kubectl context to use (passed to every kubectl command)
    #[arg(long, value_name = "NAME")]
    pub context: Option<String>,
    /// kubeconfig file to use (passed to every kubectl command)
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
    /// On standard error, only the closing line (no line per command)
    #[arg(long, short)]
    pub quiet: bool,
    #[command(flatten)]
    pub redact: RedactArgs,
}

#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell to complete for
    #[arg(value_enum)]
    pub shell: ShellArg,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum ShellArg {
    Bash,
    Zsh,
    Fish,
}

#[derive(Args, Debug)]
pub struct RedactArgs {
    /// Mask secrets before anything is written: tokens, keys, passwords, credentials in
    /// URLs, cookies, private keys, e-mail addresses
    #[arg(long)]
    pub redact: bool,
    /// Also replace IP addresses and host names with stable pseudonyms (ip-1, host-1, …);
    /// implies --redact
    #[arg(long)]
    pub redact_hosts: bool,
}

impl RedactArgs {
    fn redactor(&self) -> Option<Redactor> {
        (self.redact || self.redact_hosts).then(|| {
            Redactor::new(RedactConfig {
                hosts: self.redact_hosts,
            })
        })
    }
}

#[derive(Args, Debug)]
pub struct RulesArgs {
    /// A rule code (e.g. DSH004) or catalogue id; without it, list every rule
    pub code: Option<String>,
    /// List the templates of Ray's and KubeRay's messages whose wording, id, component or
    /// meaning contains WORD (case-insensitive; an empty WORD lists them all)
    #[arg(long, value_name = "WORD", conflicts_with = "code")]
    pub messages: Option<String>,
    /// List the known issues: bugs of some KubeRay or Ray releases, with the versions they
    /// affect and the release that fixed them
    #[arg(long, conflicts_with_all = ["code", "messages"])]
    pub known: bool,
    /// Also load rules from this directory (they add to or override the built-in ones)
    #[arg(long, value_name = "DIR")]
    pub patterns: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct ExplainArgs {
    /// The lines to explain; without any, lines are read from standard input
    #[arg(value_name = "LINE")]
    pub lines: Vec<String>,
    /// Show every template a line matches, not only the most specific
    #[arg(long)]
    pub all: bool,
    /// Write one JSON object a line instead of text
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct CheckPatternsArgs {
    /// Directory of pattern files (*.toml), or one pattern file
    #[arg(value_name = "DIR|FILE")]
    pub dir: PathBuf,
}

/// How the bundle is read. Flattened after each command's everyday flags, so `--help` lists
/// those first, then these under their own headings.
#[derive(Args, Debug)]
#[command(next_help_heading = "Reading")]
pub struct ReadArgs {
    /// The bundle: .tar.gz/.tgz, .tar, .zip, a directory, a single file, or - for stdin
    #[arg(help_heading = None)]
    pub bundle: PathBuf,
    #[command(flatten)]
    pub how: ReadHow,
}

/// How any bundle is read: what `analyze`, `timeline` and `diff` share besides the bundle.
#[derive(Args, Debug)]
#[command(next_help_heading = "Reading")]
pub struct ReadHow {
    /// UTC offset of the Ray containers' local time (e.g. +08:00, -0700, UTC); overrides
    /// what raysift infers from the bundle
    #[arg(long, value_name = "OFFSET", allow_hyphen_values = true)]
    pub tz: Option<String>,
    /// Parser threads (default: the number of CPUs)
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
    /// Read version-control folders (.git, .hg, .svn) too: a bundle kept in a checkout
    /// carries them, and they are skipped by default
    #[arg(long)]
    pub no_ignore: bool,
    #[command(flatten)]
    pub limits: LimitArgs,
}

/// What protects the machine from a hostile or huge bundle (README "Limits").
#[derive(Args, Debug)]
#[command(next_help_heading = "Limits")]
pub struct LimitArgs {
    /// Stop reading after this many uncompressed bytes in total (e.g. 64G, 500M)
    #[arg(long, value_name = "SIZE", default_value = "64G")]
    pub max_total_bytes: String,
    /// Skip a file bigger than this, uncompressed
    #[arg(long, value_name = "SIZE", default_value = "8G")]
    pub max_file_bytes: String,
    /// Stop after this many files
    #[arg(long, value_name = "N", default_value_t = 200_000)]
    pub max_files: u64,
    /// Open archives nested inside the bundle up to this depth
    #[arg(long, value_name = "N", default_value_t = 4)]
    pub max_depth: u32,
    /// Stop inflating a member that expands more than this many times its compressed size, and a
    /// zip whose entries together expand more than this many times its size plus 64 MiB
    #[arg(long, value_name = "RATIO", default_value_t = 250)]
    pub max_ratio: u64,
}

/// Parses `64G`, `500M`, `12k`, `1048576` (binary units).
fn parse_size(flag: &str, s: &str) -> Result<u64, Failure> {
    let t = s.trim();
    let (num, mult) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => {
            let mult: u64 = match c.to_ascii_lowercase() {
                'k' => 1 << 10,
                'm' => 1 << 20,
                'g' => 1 << 30,
                't' => 1 << 40,
                _ => 0,
            };
            (&t[..i], mult)
        }
        _ => (t, 1),
    };
    match num.parse::<u64>() {
        Ok(n) if mult > 0 => Ok(n.saturating_mul(mult)),
        _ => Err(Failure::usage(format!(
            "{flag} {s:?}: expected a size such as 500M or 64G"
        ))),
    }
}

#[derive(Args, Debug)]
pub struct AnalyzeArgs {
    /// Output format
    #[arg(long, short, value_enum, default_value_t = AnalyzeFormat::Text)]
    pub format: AnalyzeFormat,
    /// Write the report to FILE instead of standard output
    #[arg(long, short, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Print one summary line (the top cause, or "no cause") instead of the report
    #[arg(long, short)]
    pub quiet: bool,
    /// Exit with 1 when a cause at or above this severity is found (info causes are benign
    /// and never fail)
    #[arg(long, value_enum, value_name = "SEVERITY", default_value_t = FailOnArg::Error)]
    pub fail_on: FailOnArg,
    /// Show only causes at or above this severity
    #[arg(long, value_enum, value_name = "SEVERITY", default_value_t = SeverityArg::Info)]
    pub min_severity: SeverityArg,
    /// Print the inventory (files, sources, zones, diagnostics) instead of the causes
    #[arg(long)]
    pub inventory: bool,
    /// Quote every evidence record whole: no line or frame of a traceback left out (by
    /// default a long record keeps its head, its innermost frames outside Ray, its last
    /// lines and the line a rule matched, and says how many lines it leaves out)
    #[arg(long)]
    pub full: bool,
    /// Also load rules from this directory (they add to or override the built-in ones)
    #[arg(long, value_name = "DIR")]
    pub patterns: Option<PathBuf>,
    #[command(flatten)]
    pub objects: ObjectArgs,
    #[command(flatten)]
    pub redact: RedactArgs,
    /// Colour the text: auto (on a terminal, unless NO_COLOR is set or CLICOLOR_FORCE
    /// forces it), always, never
    #[arg(long, value_enum, value_name = "WHEN", default_value_t = ColorArg::Auto)]
    pub color: ColorArg,
    #[command(flatten)]
    pub read: ReadArgs,
}

/// `--color`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum ColorArg {
    Auto,
    Always,
    Never,
}

impl ColorArg {
    fn style(self, is_tty: bool) -> Style {
        Style::choose(
            match self {
                ColorArg::Auto => None,
                ColorArg::Always => Some(true),
                ColorArg::Never => Some(false),
            },
            is_tty,
        )
    }
}

/// Narrowing to one namespace or object, for `analyze` and `timeline`.
#[derive(Args, Debug)]
pub struct ObjectArgs {
    /// Keep only the events of this namespace (events that name no object are kept)
    #[arg(long, short = 'n', value_name = "NS")]
    pub namespace: Option<String>,
    /// Keep only the events of this object, KIND/NAME (rayservice, raycluster, rayjob, pod,
    /// node, service), and of the objects KubeRay names after it: a RayService's clusters,
    /// their pods and services
    #[arg(long, value_name = "KIND/NAME")]
    pub object: Option<String>,
}

impl ObjectArgs {
    pub fn filter(&self) -> Result<Option<crate::objects::Filter>, Failure> {
        crate::objects::Filter::new(self.namespace.as_deref(), self.object.as_deref())
            .map_err(Failure::usage)
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum SeverityArg {
    Info,
    #[value(alias = "warn")]
    Warning,
    Error,
    Critical,
}

/// `--fail-on`: a severity, `info` accepted only to be refused with a reason (info causes are
/// benign and never fail), so it is not offered in the help.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum FailOnArg {
    #[value(hide = true)]
    Info,
    #[value(alias = "warn")]
    Warning,
    Error,
    Critical,
}

impl From<FailOnArg> for Severity {
    fn from(s: FailOnArg) -> Severity {
        match s {
            FailOnArg::Info => Severity::Info,
            FailOnArg::Warning => Severity::Warning,
            FailOnArg::Error => Severity::Error,
            FailOnArg::Critical => Severity::Critical,
        }
    }
}

impl From<SeverityArg> for Severity {
    fn from(s: SeverityArg) -> Severity {
        match s {
            SeverityArg::Info => Severity::Info,
            SeverityArg::Warning => Severity::Warning,
            SeverityArg::Error => Severity::Error,
            SeverityArg::Critical => Severity::Critical,
        }
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum AnalyzeFormat {
    /// The ranked report for a terminal
    Text,
    /// The `raysift.report/v1` JSON contract
    Json,
    /// GitHub-flavoured markdown for an issue or a ticket
    Markdown,
    /// One self-contained HTML page with the incident timeline picture
    Html,
}

#[derive(Args, Debug)]
#[command(
    after_help = "Exit codes: 0 every bundle was analysed; 2 a bundle could not be (its line is an `error`: a mistyped path, no archive, nothing readable, no Ray bundle), no bundle was found, or the command line is wrong. Each line's `exit` is what `raysift analyze` exits with on that bundle."
)]
pub struct BatchArgs {
    /// Bundle files (one bundle each, whatever the name); directories; quoted patterns with `*`
    /// and `?`.
    ///
    /// A directory is walked down. A folder that directly holds a file whose content raysift
    /// recognises as a Ray, KubeRay or Kubernetes log or object is one unpacked bundle, with
    /// everything under it (archives and compressed logs such as raylet.out.1.gz included).
    /// Below the directory
    /// given, a folder with no archive anywhere under it is one unpacked bundle too (such as a
    /// Troubleshoot support-bundle-… folder). Any other folder is a shelf: each .tar.gz, .tgz,
    /// .tar, .zip or .gz file in it is a bundle, each sub-folder is looked at in turn, and other
    /// files (notes, a README) are ignored. A directory in which this finds nothing is itself
    /// one bundle. Links to directories are not followed. Paths are cleaned before they are
    /// compared (./a.tar.gz and a.tar.gz are one bundle), and each bundle is analysed once.
    #[arg(required = true, value_name = "DIR|GLOB|FILE")]
    pub inputs: Vec<PathBuf>,
    /// Bundles analysed at once, each with one parser thread (default: the number of CPUs)
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,
    /// Causes listed per bundle (and counted by --summary)
    #[arg(long, value_name = "K", default_value_t = 5)]
    pub top: usize,
    /// Write the lines to FILE (created or truncated; appended to when it is also the
    /// --skip-done file) instead of standard output
    #[arg(long, short, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Skip the bundles that have an "ok" line in this results file (errors are retried);
    /// a missing file skips nothing
    #[arg(long, value_name = "FILE")]
    pub skip_done: Option<PathBuf>,
    /// Keep only shard I of N (0-based, as an Indexed Job's JOB_COMPLETION_INDEX), chosen by a
    /// stable hash of each bundle's path
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,
    /// Print what would be analysed, in run order (after --shard and --skip-done), one
    /// "PATH<tab>archive|folder|file|missing" line each, and analyse nothing
    #[arg(long)]
    pub dry_run: bool,
    /// At the end, print how many bundles had each cause (actionable first, benign after) and
    /// how many had none, the failed bundles and the totals (to standard error; to standard
    /// output with --out)
    #[arg(long)]
    pub summary: bool,
    /// Also load rules from this directory (they add to or override the built-in ones)
    #[arg(long, value_name = "DIR")]
    pub patterns: Option<PathBuf>,
    /// A bundle's "exit" is 1 when a cause at or above this severity is found (info causes
    /// are benign and never fail)
    #[arg(long, value_enum, value_name = "SEVERITY", default_value_t = FailOnArg::Error)]
    pub fail_on: FailOnArg,
    /// List only causes at or above this severity
    #[arg(long, value_enum, value_name = "SEVERITY", default_value_t = SeverityArg::Info)]
    pub min_severity: SeverityArg,
}

const DIFF_ABOUT: &str = "Say what changed between a bundle that worked (OLD) and one that \
does not (NEW): \"it worked yesterday\". Both bundles are analysed as `raysift analyze` \
would (the same rules, limits, --namespace/--object narrowing and redaction), and the \
differences are \
listed, the one that matters most first:\n\n\
- each cause NEW has and OLD had not, at error or above, followed by the changes its evidence \
quotes (the image tag a pull failed on) and those of the kind that cause is known to follow \
(an application's import_path under a new bad_import_path, a \
worker group's replicas under new unschedulable Serve replicas, an image under a new image \
pull failure);\n\
- the states that got worse (an application RUNNING in OLD and DEPLOY_FAILED in NEW, a \
condition Ready turned False, a pod that fails only in NEW);\n\
- new causes below error; then the versions the bundles state (KubeRay, Ray, Kubernetes, \
Python), the images (by repository), and the spec fields of each RayService, RayCluster and \
RayJob found in both: serveConfigV2 read field by field (per application import_path, \
route_prefix, runtime_env, deployments, num_replicas, ray_actor_options), worker groups by \
groupName (replicas, min and max, resources, image), the head group, rayStartParams and \
container env;\n\
- the error templates no rule claims that NEW has and OLD had not, with their counts; the \
causes that went away; the Ray objects found in one bundle only.\n\n\
Objects are matched by kind, namespace and name with the random parts KubeRay adds left \
out (a RayService's cluster `chat-xk4dz` in OLD is `chat-b7q2m` in NEW). A diff of a bundle \
with itself prints `no difference`.\n\n\
Exit codes: 0 no new cause at or above --fail-on (and both bundles read in full), 1 NEW has a \
cause OLD had not at or above --fail-on, 2 a bundle could not be read (the message names \
OLD or NEW), or one was read only in part and no new cause fails, or the command line is wrong.";

#[derive(Args, Debug)]
pub struct DiffArgs {
    /// The bundle that worked: .tar.gz/.tgz, .tar, .zip, a directory or a single file
    #[arg(value_name = "OLD")]
    pub old: PathBuf,
    /// The bundle that does not: the same forms
    #[arg(value_name = "NEW")]
    pub new: PathBuf,
    /// Output format: text, or the `raysift.diff/v1` JSON (`raysift schema diff`)
    #[arg(long, short, value_enum, default_value_t = TimelineFormat::Text)]
    pub format: TimelineFormat,
    /// Write the diff to FILE instead of standard output
    #[arg(long, short, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Exit with 1 when NEW has a cause OLD had not at or above this severity (info causes
    /// are benign and never fail)
    #[arg(long, value_enum, value_name = "SEVERITY", default_value_t = FailOnArg::Error)]
    pub fail_on: FailOnArg,
    /// Also load rules from this directory (they add to or override the built-in ones)
    #[arg(long, value_name = "DIR")]
    pub patterns: Option<PathBuf>,
    #[command(flatten)]
    pub objects: ObjectArgs,
    #[command(flatten)]
    pub redact: RedactArgs,
    #[command(flatten)]
    pub read: ReadHow,
}

#[derive(Args, Debug)]
pub struct TimelineArgs {
    /// Keep only files whose path, name or source kind matches GLOB (repeatable; `*` and `?`)
    #[arg(long, value_name = "GLOB")]
    pub source: Vec<String>,
    /// Keep only events at or above this level (a log record whose continuation lines are a
    /// traceback ending in its exception counts, and is shown, as error)
    #[arg(long, value_enum)]
    pub level: Option<LevelArg>,
    /// Keep only events whose printed text matches this regex: the message (every line), the
    /// component, and the fields the text shows as key=value (object, RayService=ns/name,
    /// namespace, name, error, reason, message, …); not the time, file, source or level
    #[arg(long, value_name = "RE")]
    pub grep: Option<String>,
    /// Keep only events at or after this time: 2024-05-01T10:00:00Z, "2024-05-01 10:00"
    /// (UTC), 2024-05-01 (the whole day), 16:05 (on the capture date), 10m (before the
    /// capture time), +5m (after the first event)
    #[arg(long, value_name = "TIME", allow_hyphen_values = true)]
    pub since: Option<String>,
    /// Keep only events at or before this time (the same forms as --since)
    #[arg(long, value_name = "TIME", allow_hyphen_values = true)]
    pub until: Option<String>,
    /// Centre a window on FILE:LINE (FILE may be a path suffix) or on a TIME (as --since)
    #[arg(long, value_name = "FILE:LINE|TIME", allow_hyphen_values = true)]
    pub around: Option<String>,
    /// Half-width of the --around window (e.g. 500ms, 30s, 2m, 1h30m; default 2m)
    #[arg(long, value_name = "DURATION")]
    pub window: Option<String>,
    /// Output format: aligned text, or one JSON object per event
    #[arg(long, short, value_enum, default_value_t = TimelineFormat::Text)]
    pub format: TimelineFormat,
    /// Show only the first N of the events kept
    #[arg(long, value_name = "N", conflicts_with = "tail")]
    pub limit: Option<usize>,
    /// Show only the last N of the events kept
    #[arg(long, value_name = "N")]
    pub tail: Option<usize>,
    /// Text: one line an event, its first line and why (the `error`, `reason` or `message`
    /// field, cut to the line); the lines below it (stack frames) are counted, not shown. The
    /// default on a terminal
    #[arg(long, conflicts_with = "full")]
    pub oneline: bool,
    /// Text: every line of every event, on a terminal too
    #[arg(long)]
    pub full: bool,
    #[command(flatten)]
    pub objects: ObjectArgs,
    #[command(flatten)]
    pub redact: RedactArgs,
    /// Colour the text: auto (on a terminal, unless NO_COLOR is set or CLICOLOR_FORCE
    /// forces it), always, never
    #[arg(long, value_enum, value_name = "WHEN", default_value_t = ColorArg::Auto)]
    pub color: ColorArg,
    #[command(flatten)]
    pub read: ReadArgs,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum TimelineFormat {
    Text,
    Json,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum LevelArg {
    Debug,
    Info,
    #[value(alias = "warn")]
    Warning,
    Error,
    Critical,
}

impl From<LevelArg> for Level {
    fn from(l: LevelArg) -> Level {
        match l {
            LevelArg::Debug => Level::Debug,
            LevelArg::Info => Level::Info,
            LevelArg::Warning => Level::Warning,
            LevelArg::Error => Level::Error,
            LevelArg::Critical => Level::Critical,
        }
    }
}

/// Runs the command line; returns the exit code.
pub fn run(cli: Cli) -> Result<ExitCode, Failure> {
    match cli.command {
        Command::Analyze(args) => analyze(args),
        Command::Timeline(args) => timeline(args),
        Command::Batch(args) => batch(args),
        Command::Diff(args) => diff(args),
        Command::Rules(args) => rules_cmd(args),
        Command::Explain(args) => explain(args),
        Command::CheckPatterns(args) => check_patterns(args),
        Command::Completions(args) => completions(args),
        Command::Schema(args) => emit(None, args.of.text().as_bytes()).map(|()| ExitCode::SUCCESS),
        Command::Collect(args) => collect(args),
    }
}

fn collect(args: CollectArgs) -> Result<ExitCode, Failure> {
    use crate::collect::{Config, Target};
    let timeout = query::parse_duration_arg(&args.timeout)
        .ok()
        .filter(|&us| us > 0)
        .ok_or_else(|| {
            Failure::usage(format!(
                "--timeout {:?}: expected a duration such as 30s or 2m",
                args.timeout
            ))
        })?;
    if let Some(since) = &args.since {
        // kubectl would refuse it on every `logs`: say so once, before anything runs.
        query::parse_duration_arg(since).map_err(|e| Failure::usage(format!("--since: {e}")))?;
    }
    let target = match (&args.rayservice, &args.raycluster, &args.rayjob) {
        (Some(n), _, _) => Target::RayService(n.clone()),
        (_, Some(n), _) => Target::RayCluster(n.clone()),
        (_, _, Some(n)) => Target::RayJob(n.clone()),
        _ => Target::All,
    };
    let mut global = Vec::new();
    if let Some(c) = &args.context {
        global.extend(["--context".to_string(), c.clone()]);
    }
    if let Some(k) = &args.kubeconfig {
        global.extend(["--kubeconfig".to_string(), k.display().to_string()]);
    }
    let cfg = Config {
        kubectl: "kubectl".to_string(),
        global,
        namespace: args.namespace.clone(),
        operator_namespace: args.operator_namespace.clone(),
        target,
        since: args.since.clone(),
        out: args.out.clone(),
        timeout: std::time::Duration::from_micros(timeout.unsigned_abs()),
        max_log_bytes: parse_size("--max-log-bytes", &args.max_log_bytes)?,
        redactor: args.redact.redactor(),
        progress: !args.quiet,
    };
    let done = crate::collect::run(cfg).map_err(|e| Failure::usage(e.to_string()))?;
    if done.failed == done.commands {
        return Err(Failure::usage(format!(
            "no kubectl command succeeded (is the cluster reachable with this context?); what each \
             said is in {}",
            done.path.display()
        )));
    }
    eprintln!(
        "raysift collect: wrote {} ({} files, {} bytes); {} of {} kubectl commands failed \
         (each is recorded in metadata.json)",
        done.path.display(),
        done.files,
        done.bytes,
        done.failed,
        done.commands
    );
    Ok(ExitCode::SUCCESS)
}

fn load_config(read: &ReadHow) -> Result<(LoadConfig, TimeConfig), Failure> {
    let threads = match read.threads {
        Some(0) => return Err(Failure::usage("--threads must be at least 1")),
        Some(n) => n,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let tz_override = match &read.tz {
        Some(tz) => Some(query::parse_tz_arg(tz).map_err(|e| Failure::usage(e.to_string()))?),
        None => None,
    };
    Ok((
        LoadConfig {
            sieve: None,
            limits: Limits {
                max_total_bytes: parse_size("--max-total-bytes", &read.limits.max_total_bytes)?,
                max_entry_bytes: parse_size("--max-file-bytes", &read.limits.max_file_bytes)?,
                max_entries: read.limits.max_files,
                max_depth: read.limits.max_depth,
                max_ratio: read.limits.max_ratio.max(1),
                read_vcs: read.no_ignore,
            },
            threads,
            progress: None,
        },
        TimeConfig { tz_override },
    ))
}

/// A progress line on standard error while a bundle is read (bytes so far, speed, the file
/// being read), only when standard error is a terminal: never in a pipe, a file or CI logs.
/// A new line for each read, cleared when the read is over.
#[derive(Default)]
struct ReadingBar(Mutex<Option<indicatif::ProgressBar>>);

impl Progress for ReadingBar {
    fn start(&self) -> Option<crate::load::Progress> {
        if !io::stderr().is_terminal() {
            return None;
        }
        let bar = indicatif::ProgressBar::with_draw_target(
            None,
            indicatif::ProgressDrawTarget::stderr_with_hz(10),
        );
        let style = indicatif::ProgressStyle::with_template(
            "{spinner} reading {bytes} ({bytes_per_sec}) {wide_msg:.dim}",
        )
        .ok()?;
        bar.set_style(style);
        bar.enable_steady_tick(std::time::Duration::from_millis(100));
        if let Ok(mut shown) = self.0.lock() {
            *shown = Some(bar.clone());
        }
        Some(Arc::new(move |path: &str, bytes: u64| {
            bar.inc(bytes);
            bar.set_message(path.to_string());
        }))
    }

    fn finish(&self) {
        if let Some(bar) = self.0.lock().ok().and_then(|mut b| b.take()) {
            bar.finish_and_clear();
        }
    }
}

fn load_rules(patterns: Option<&std::path::Path>) -> Result<Vec<Rule>, Failure> {
    let base =
        library::builtin().map_err(|e| Failure::usage(format!("built-in pattern library: {e}")))?;
    match patterns {
        Some(dir) => {
            let user = library::load_dir(dir).map_err(|e| pattern_problems(dir, &e))?;
            Ok(library::with_overrides(base, user))
        }
        None => Ok(base),
    }
}

fn analyze(args: AnalyzeArgs) -> Result<ExitCode, Failure> {
    check_analyze_flags(&args)?;
    let rules = load_rules(args.patterns.as_deref())?;
    let filter = args.objects.filter()?;
    if filter.is_some() && args.inventory {
        return Err(Failure::usage(
            "--inventory lists every file of the bundle; --namespace and --object narrow the causes and the timeline",
        ));
    }
    let to_tty = args.out.is_none() && io::stdout().is_terminal();
    let text = TextOptions {
        style: args.color.style(to_tty),
        width: terminal_width(to_tty),
    };
    let mut redactor = args.redact.redactor();
    let mut buf: Vec<u8> = Vec::new();
    let (load_cfg, time_cfg) = load_config(&args.read.how)?;
    if args.inventory {
        // The inventory counts every line: a streamed full read, nothing kept.
        let bar = ReadingBar::default();
        let load_cfg = LoadConfig {
            progress: bar.start(),
            ..load_cfg
        };
        let outline = crate::streamed::outline(&args.read.bundle, &load_cfg, &time_cfg);
        bar.finish();
        let outline = outline.map_err(|e| Failure::usage(e.to_string()))?;
        let mut inv = outline.inventory();
        if let Some(r) = &mut redactor {
            inv.redact(r);
        }
        match args.format {
            AnalyzeFormat::Json => {
                serde_json::to_writer_pretty(&mut buf, &inv).map_err(io::Error::from)?;
                buf.push(b'\n');
            }
            _ => crate::report::inventory::write_text(&mut buf, &inv, text.style)?,
        }
        emit(args.out.as_deref(), &buf)?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut analysis = Analysis::new(rules, load_cfg, time_cfg)
        .fail_on(Severity::from(args.fail_on))
        .min_severity(Severity::from(args.min_severity))
        .filter(filter)
        .quote(if args.full { Quote::Whole } else { Quote::Cut })
        .progress(Arc::new(ReadingBar::default()));
    if args.format == AnalyzeFormat::Html {
        analysis = analysis.picture(TimelineDataConfig::HTML);
    }
    let outcome = analysis
        .run(&args.read.bundle)
        .map_err(read_failure(&args.read.bundle))?;
    // No cause in a bundle with nothing readable would read as a clean bill of health.
    if let Some(why) = outcome.unreadable {
        return Err(Failure::usage(format!(
            "cannot analyse bundle {}: {why}",
            args.read.bundle.display()
        )));
    }
    let mut report = outcome.report;
    if let Some(r) = &mut redactor {
        report.redact(r);
    }
    if args.quiet {
        crate::report::text::write_summary_line(&mut buf, &report)?;
    } else {
        match args.format {
            AnalyzeFormat::Text => crate::report::text::write(&mut buf, &report, text)?,
            AnalyzeFormat::Json => {
                serde_json::to_writer_pretty(&mut buf, &report).map_err(io::Error::from)?;
                buf.push(b'\n');
            }
            AnalyzeFormat::Markdown => crate::report::markdown::write(&mut buf, &report)?,
            AnalyzeFormat::Html => crate::report::html::write(&mut buf, &report)?,
        }
    }
    emit(args.out.as_deref(), &buf)?;
    Ok(ExitCode::from(exit_code(&report, outcome.failing)))
}

/// Flags that ask for two different outputs, or for something that cannot happen: a one-line
/// error rather than one of them silently ignored.
fn check_analyze_flags(args: &AnalyzeArgs) -> Result<(), Failure> {
    if args.inventory && matches!(args.format, AnalyzeFormat::Markdown | AnalyzeFormat::Html) {
        return Err(Failure::usage(
            "--inventory prints text or JSON; the markdown and HTML reports end with the inventory",
        ));
    }
    if args.inventory && args.quiet {
        return Err(Failure::usage(
            "--inventory and --quiet ask for different outputs: give one of them",
        ));
    }
    if args.quiet && args.format != AnalyzeFormat::Text {
        return Err(Failure::usage(format!(
            "--quiet prints one line of text: it cannot be combined with --format {}",
            format_name(args.format)
        )));
    }
    check_fail_on(args.fail_on)
}

fn format_name(f: AnalyzeFormat) -> &'static str {
    match f {
        AnalyzeFormat::Text => "text",
        AnalyzeFormat::Json => "json",
        AnalyzeFormat::Markdown => "markdown",
        AnalyzeFormat::Html => "html",
    }
}

/// `--fail-on info` would never fire: info causes are benign and never fail a run.
fn check_fail_on(fail_on: FailOnArg) -> Result<(), Failure> {
    if fail_on == FailOnArg::Info {
        return Err(Failure::usage(
            "--fail-on info can never fire: info causes are benign and never fail a run; \
             use --fail-on warning for the lowest that can",
        ));
    }
    Ok(())
}

/// What ends a command that reads `bundle`, as the binary says it.
fn read_failure(bundle: &Path) -> impl Fn(crate::streamed::Error) -> Failure + '_ {
    move |e| match e {
        crate::streamed::Error::Open(e) => Failure::usage(e.to_string()),
        crate::streamed::Error::Query(e) => Failure::usage(e.to_string()),
        crate::streamed::Error::Io(e) => Failure::from(e),
        crate::streamed::Error::Unreadable(why) => {
            Failure::usage(format!("cannot analyse bundle {}: {why}", bundle.display()))
        }
    }
}

fn batch(args: BatchArgs) -> Result<ExitCode, Failure> {
    let jobs = match args.jobs {
        Some(0) => return Err(Failure::usage("--jobs must be at least 1")),
        Some(n) => n,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    if args.top == 0 {
        return Err(Failure::usage(
            "--top 0 would list no cause: give at least 1 (--top is the causes listed per bundle)",
        ));
    }
    check_fail_on(args.fail_on)?;
    let shard = args
        .shard
        .as_deref()
        .map(crate::batch::Shard::parse)
        .transpose()
        .map_err(Failure::usage)?;
    let rules = load_rules(args.patterns.as_deref())?;
    // One parser thread per bundle: --jobs bundles keep about --jobs cores busy.
    let load = LoadConfig {
        sieve: None,
        limits: Limits::DEFAULT,
        threads: 1,
        progress: None,
    };
    let analysis = Analysis::new(rules, load, TimeConfig { tz_override: None })
        .fail_on(Severity::from(args.fail_on))
        .min_severity(Severity::from(args.min_severity));
    let cfg = crate::batch::Config {
        inputs: args.inputs,
        jobs,
        top: args.top,
        out: args.out,
        skip_done: args.skip_done,
        shard,
        summary: args.summary,
        dry_run: args.dry_run,
    };
    crate::batch::run(&cfg, &analysis)
}

fn diff(args: DiffArgs) -> Result<ExitCode, Failure> {
    check_fail_on(args.fail_on)?;
    if args.old == Path::new("-") && args.new == Path::new("-") {
        return Err(Failure::usage(
            "OLD and NEW cannot both be standard input: give at most one of them as -",
        ));
    }
    let rules = load_rules(args.patterns.as_deref())?;
    let filter = args.objects.filter()?;
    let (load_cfg, time_cfg) = load_config(&args.read)?;
    let fail_on = Severity::from(args.fail_on);
    let analysis = Analysis::new(rules, load_cfg, time_cfg)
        .fail_on(fail_on)
        .filter(filter)
        .progress(Arc::new(ReadingBar::default()));
    let mut diff = crate::diff::run(&analysis, &args.old, &args.new, fail_on)?;
    if let Some(r) = &mut args.redact.redactor() {
        diff.redact(r);
    }
    let mut buf: Vec<u8> = Vec::new();
    match args.format {
        TimelineFormat::Text => crate::diff::render::text(&mut buf, &diff)?,
        TimelineFormat::Json => {
            serde_json::to_writer_pretty(&mut buf, &diff).map_err(io::Error::from)?;
            buf.push(b'\n');
        }
    }
    emit(args.out.as_deref(), &buf)?;
    Ok(ExitCode::from(diff.exit_code()))
}

/// Columns to wrap text to: only on a terminal; `COLUMNS` when set (an override: shells keep
/// it but do not export it), else the terminal's own width, else 100.
fn terminal_width(is_tty: bool) -> Option<usize> {
    if !is_tty {
        return None;
    }
    let columns = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|&c| c >= 20);
    let measured = || {
        terminal_size::terminal_size_of(io::stdout())
            .map(|(w, _)| usize::from(w.0))
            .filter(|&c| c >= 20)
    };
    Some(columns.or_else(measured).unwrap_or(100))
}

fn completions(args: CompletionsArgs) -> Result<ExitCode, Failure> {
    use clap::CommandFactory;
    use clap_complete::Shell;
    let shell = match args.shell {
        ShellArg::Bash => Shell::Bash,
        ShellArg::Zsh => Shell::Zsh,
        ShellArg::Fish => Shell::Fish,
    };
    let mut buf: Vec<u8> = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "raysift", &mut buf);
    emit(None, &buf)?;
    Ok(ExitCode::SUCCESS)
}

fn rules_cmd(args: RulesArgs) -> Result<ExitCode, Failure> {
    if let Some(word) = &args.messages {
        let found = crate::messages::Catalogue::builtin().search(word);
        crate::report::message::listing(&mut io::stdout().lock(), &found)?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut rules = load_rules(args.patterns.as_deref())?;
    if args.known {
        let mut out = io::stdout().lock();
        for r in &rules {
            if let Some(k) = &r.known_issue {
                writeln!(
                    out,
                    "{}  {:<28}  {:<36}  fixed in {:<24}  {}",
                    r.code,
                    k.reference(),
                    k.affects_text(),
                    k.fixed_in,
                    r.title
                )?;
            }
        }
        return Ok(ExitCode::SUCCESS);
    }
    // The Serve schema check and the open world's generic findings are listed after the
    // library's rules.
    rules.push(crate::serve_schema::listed_rule());
    rules.extend(crate::open_world::generic_rules());
    let mut out = io::stdout().lock();
    match &args.code {
        None => {
            for r in &rules {
                writeln!(
                    out,
                    "{}  {:<8}  {:<38}  {}",
                    r.code,
                    r.severity.as_str(),
                    r.id,
                    r.title
                )?;
            }
        }
        Some(code) => {
            let matching: Vec<&Rule> = rules
                .iter()
                .filter(|r| r.code.as_str().eq_ignore_ascii_case(code) || r.id == *code)
                .collect();
            if matching.is_empty() {
                return Err(Failure::usage(format!(
                    "no rule has code or id {code:?} (see `raysift rules`)"
                )));
            }
            for r in matching {
                writeln!(
                    out,
                    "{} {} ({}, {})\n",
                    r.code,
                    r.title,
                    r.id,
                    r.severity.as_str()
                )?;
                writeln!(out, "{}", r.doc.trim())?;
                if !r.explains.is_empty() {
                    writeln!(out, "\nExplains: {}", r.explains.join(", "))?;
                }
                writeln!(out, "\nDefined in {}\n", r.origin)?;
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn explain(args: ExplainArgs) -> Result<ExitCode, Failure> {
    let rules = load_rules(None)?;
    let lines: Vec<String> = if args.lines.is_empty() {
        io::stdin()
            .lock()
            .lines()
            .collect::<Result<_, _>>()
            .map_err(|e| Failure::usage(format!("standard input: {e}")))?
    } else {
        args.lines
    };
    let mut out = io::stdout().lock();
    let mut unknown = false;
    for (n, line) in lines.iter().filter(|l| !l.trim().is_empty()).enumerate() {
        let e = crate::open_world::known::explain(line, &rules, args.all);
        unknown |= e.matches.is_empty() && e.known_issues.is_empty();
        if args.json {
            serde_json::to_writer(&mut out, &e).map_err(io::Error::other)?;
            writeln!(out)?;
        } else {
            if n > 0 {
                writeln!(out)?;
            }
            crate::report::message::explanation(&mut out, &e)?;
        }
    }
    Ok(if unknown {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn check_patterns(args: CheckPatternsArgs) -> Result<ExitCode, Failure> {
    let rules = library::load_dir(&args.dir).map_err(|e| pattern_problems(&args.dir, &e))?;
    let samples: usize = rules.iter().map(|r| r.samples.len()).sum();
    println!(
        "{}: {} rules, {} sample lines checked, all valid",
        args.dir.display(),
        rules.len(),
        samples
    );
    Ok(ExitCode::SUCCESS)
}

/// Prints every problem of a pattern directory or file on standard error, one a line, and
/// returns the failure that ends the command (its message counts them).
fn pattern_problems(path: &Path, problems: &[crate::rules::loader::LoadError]) -> Failure {
    if let [one] = problems {
        return Failure::usage(one.to_string());
    }
    let mut err = io::stderr().lock();
    for p in problems {
        let _ = writeln!(err, "raysift: {p}");
    }
    let files: std::collections::BTreeSet<&str> =
        problems.iter().map(|p| p.origin.as_str()).collect();
    let n = problems.len();
    Failure::usage(format!(
        "{n} problem{} in {} file{} of {}",
        if n == 1 { "" } else { "s" },
        files.len(),
        if files.len() == 1 { "" } else { "s" },
        path.display()
    ))
}

fn timeline(args: TimelineArgs) -> Result<ExitCode, Failure> {
    let q = timeline_query(&args)?;
    // Streamed: the selected events are put aside as the bundle is read and written in
    // timeline order once every time is resolved (redacted on the way out, selected on the
    // bundle's own text).
    let (load_cfg, time_cfg) = load_config(&args.read.how)?;
    let bar = ReadingBar::default();
    let load_cfg = LoadConfig {
        progress: bar.start(),
        ..load_cfg
    };
    let stdout = io::stdout();
    let to_tty = stdout.is_terminal();
    let style = args.color.style(to_tty);
    let mut out = io::BufWriter::with_capacity(1 << 16, stdout.lock());
    let got = crate::streamed::timeline(
        &args.read.bundle,
        &load_cfg,
        &time_cfg,
        &q,
        crate::streamed::TimelineOutput {
            json: args.format == TimelineFormat::Json,
            style,
            oneline: args.oneline || (to_tty && !args.full),
            limit: args.limit,
            tail: args.tail,
            redactor: args.redact.redactor(),
            out: &mut out,
            read_done: &|| bar.finish(),
        },
    );
    let diagnostics = got.map_err(read_failure(&args.read.bundle))?;
    out.flush()?;
    for d in &diagnostics {
        eprintln!("raysift: {d}");
    }
    Ok(ExitCode::SUCCESS)
}

/// The selection `timeline`'s flags ask for, checked as far as it can be before the bundle is
/// read (times relative to the bundle are checked once it is).
fn timeline_query(args: &TimelineArgs) -> Result<Query, Failure> {
    let usage = |e: query::QueryError| Failure::usage(e.to_string());
    let mut q = Query::everything();
    q.sources = args.source.clone();
    q.min_level = args.level.map(Level::from);
    if let Some(re) = &args.grep {
        q.grep =
            Some(regex::Regex::new(re).map_err(|e| Failure::usage(format!("--grep {re:?}: {e}")))?);
    }
    let time = |flag: &'static str, v: &Option<String>| {
        v.as_deref()
            .map(|s| query::TimeSpec::parse(flag, s))
            .transpose()
            .map_err(usage)
    };
    q.since = time("--since", &args.since)?;
    q.until = time("--until", &args.until)?;
    q.check_fixed_bounds().map_err(usage)?;
    q.around = args
        .around
        .as_deref()
        .map(query::parse_anchor_arg)
        .transpose()
        .map_err(usage)?;
    if let Some(w) = &args.window {
        if q.around.is_none() {
            return Err(Failure::usage(format!(
                "--window {w} is the half-width of the --around window: give --around FILE:LINE \
                 or --around TIME too (or use --since and --until)"
            )));
        }
        q.window = query::parse_duration_arg(w).map_err(usage)?;
    }
    q.objects = args.objects.filter()?;
    Ok(q)
}
