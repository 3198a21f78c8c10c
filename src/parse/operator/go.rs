//! Record heads written by Go itself rather than by zap: client-go's klog lines (KubeRay
//! before v1.3 left them unconverted) and the first line of a Go runtime crash.
//!
//! klog lines carry no year (`I0411 07:43:44.182159`): the event keeps a year-less time,
//! which the timeline resolves. A crash's `[signal …]`, goroutine and stack frame lines are
//! not heads, so the line driver folds them into the crash's record.

use crate::event::{Event, Level, RawTime};
use crate::parse::primitives::klog_header;

/// `I0411 07:43:44.182159       1 leaderelection.go:250] msg`.
pub(super) fn klog(line: &str) -> Option<Event> {
    let (rest, (letter, month, day, micros_of_day)) = klog_header(line).ok()?;
    let body = rest.strip_prefix(' ')?.trim_start_matches(' ');
    let n_digits = body.bytes().take_while(u8::is_ascii_digit).count();
    let (thread, after) = body.split_at(n_digits);
    let mut fields = Vec::new();
    let message = match after.strip_prefix(' ').and_then(|a| {
        a.split_once("] ")
            .or_else(|| a.strip_suffix(']').map(|s| (s, "")))
    }) {
        Some((source, msg)) if n_digits > 0 && !source.contains(' ') => {
            fields.push(("source".into(), source.into()));
            fields.push(("thread".into(), thread.into()));
            msg
        }
        _ => body,
    };
    let mut ev = Event::new(0, message.to_string());
    ev.raw_time = Some(RawTime::NoYear {
        month,
        day,
        micros_of_day,
    });
    ev.level = match letter {
        'I' => Level::Info,
        'W' => Level::Warning,
        'E' => Level::Error,
        _ => Level::Critical,
    };
    ev.component = "klog".into();
    ev.fields = fields;
    Some(ev)
}

/// The first line of a Go runtime crash. The `[signal …]`, goroutine and frame lines after
/// it are not heads, so they fold into this record.
pub(super) fn go_crash(line: &str) -> Option<Event> {
    if !(line.starts_with("panic: ") || line.starts_with("fatal error: ")) {
        return None;
    }
    let mut ev = Event::new(0, line.to_string());
    ev.level = Level::Critical;
    Some(ev)
}

#[cfg(test)]
mod tests {
    use crate::parse::operator::tests::check;

    // ---- klog (KubeRay < v1.3)

    #[test]
    fn klog_leader_election() {
        check(
            "I0402 13:48:57.637519       1 leaderelection.go:248] attempting to acquire leader lease ray-system/ray-operator-leader...",
            r#"
1+1 --04-02T13:48:57.637519 info klog {source=leaderelection.go:248; thread=1} attempting to acquire leader lease ray-system/ray-operator-leader...
"#,
        );
    }

    #[test]
    fn klog_reflector_rbac() {
        check(
            "W1127 12:42:08.725162       1 reflector.go:539] pkg/mod/k8s.io/client-go@v0.29.6/tools/cache/reflector.go:229: failed to list *v1.Endpoints: endpoints is forbidden: User \"system:serviceaccount:kuberay:kuberay-operator\" cannot list resource \"endpoints\" in API group \"\" at the cluster scope",
            r#"
1+1 --11-27T12:42:08.725162 warning klog {source=reflector.go:539; thread=1} pkg/mod/k8s.io/client-go@v0.29.6/tools/cache/reflector.go:229: failed to list *v1.Endpoints: endpoints is forbidden: User "system:serviceaccount:kuberay:kuberay-operator" cannot list resource "endpoints" in API group "" at the cluster scope
"#,
        );
    }

    #[test]
    fn klog_observed_panic_with_goroutine_dump() {
        check(
            "E0411 07:50:01.000001       1 runtime.go:78] Observed a panic: \"invalid memory address or nil pointer dereference\" (runtime error: invalid memory address or nil pointer dereference)
goroutine 312 [running]:
k8s.io/apimachinery/pkg/util/runtime.logPanic({0x1a2b3c0?, 0x2c5d6e0})
\t/go/pkg/mod/k8s.io/apimachinery@v0.23.0/pkg/util/runtime/runtime.go:74 +0x99

F0411 07:50:02.5       7 main.go:1] fatal
I0411 07:50:03.000000 odd layout",
            r#"
1+5 --04-11T07:50:01.000001 error klog {source=runtime.go:78; thread=1} Observed a panic: "invalid memory address or nil pointer dereference" (runtime error: invalid memory address or nil pointer dereference)\ngoroutine 312 [running]:\nk8s.io/apimachinery/pkg/util/runtime.logPanic({0x1a2b3c0?, 0x2c5d6e0})\n\t/go/pkg/mod/k8s.io/apimachinery@v0.23.0/pkg/util/runtime/runtime.go:74 +0x99\n
6+1 --04-11T07:50:02.500000 critical klog {source=main.go:1; thread=7} fatal
7+1 --04-11T07:50:03.000000 info klog {} odd layout
"#,
        );
    }

    #[test]
    fn klog_lookalikes_are_not_heads() {
        check(
            "2024-01-01T00:00:00.000Z\tINFO\tsetup\tstart
I1345 07:50:03.000000       1 x.go:1] month 13
Everything is fine
E0411",
            r#"
1+4 2024-01-01T00:00:00.000Z info setup {} start\nI1345 07:50:03.000000       1 x.go:1] month 13\nEverything is fine\nE0411
"#,
        );
    }

    // ---- Go runtime crash

    #[test]
    fn go_runtime_panic() {
        check(
            "2024-01-01T00:00:00.000Z\tINFO\tsetup\tstarting manager
panic: runtime error: invalid memory address or nil pointer dereference
[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x1b2c3d4]

goroutine 241 [running]:
github.com/ray-project/kuberay/ray-operator/controllers/ray.(*RayServiceReconciler).Reconcile(0xc0004a2000, {0x2a1b2c0, 0xc000d1e000})
\t/workspace/controllers/ray/rayservice_controller.go:130 +0x1a4
exit status 2
fatal error: concurrent map writes",
            r#"
1+1 2024-01-01T00:00:00.000Z info setup {} starting manager
2+7 - critical - {} panic: runtime error: invalid memory address or nil pointer dereference\n[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x1b2c3d4]\n\ngoroutine 241 [running]:\ngithub.com/ray-project/kuberay/ray-operator/controllers/ray.(*RayServiceReconciler).Reconcile(0xc0004a2000, {0x2a1b2c0, 0xc000d1e000})\n\t/workspace/controllers/ray/rayservice_controller.go:130 +0x1a4\nexit status 2
9+1 - critical - {} fatal error: concurrent map writes
"#,
        );
    }
}
