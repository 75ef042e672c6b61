//! The sandbox on Linux: a Landlock ruleset handling every write access, allowed beneath the
//! writable folders only, and a seccomp filter refusing non-Unix sockets (and io_uring, which
//! could open them behind the filter's back). Both restrict the calling thread and what it
//! starts, so they are applied on a thread made for one command.

use super::{Confinement, DEVICES, Enforcement, SandboxError, WhenUnavailable};
use landlock::{
    ABI, AccessFs, Ruleset, RulesetAttr, RulesetCreatedAttr, RulesetStatus, path_beneath_rules,
};
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule,
};
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// The newest Landlock ABI this sandbox asks for; older kernels enforce what they know.
const LANDLOCK_ABI: ABI = ABI::V6;

/// The error a refused socket gets.
const REFUSED: u32 = libc::EPERM as u32;

/// Runs `start` on a new thread once the confinement holds there.
pub(super) fn run_confined<T: Send>(
    confinement: &Confinement,
    start: impl FnOnce() -> T + Send,
) -> Result<(T, Enforcement), SandboxError> {
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                let enforcement = confine_this_thread(confinement)?;
                Ok((start(), enforcement))
            })
            .join()
            .unwrap_or_else(|_| Err(SandboxError("the sandbox's thread panicked".to_owned())))
    })
}

/// Confines the calling thread (and the processes it starts from now on).
fn confine_this_thread(confinement: &Confinement) -> Result<Enforcement, SandboxError> {
    let enforcement = match restrict_writes(confinement)? {
        RulesetStatus::NotEnforced => {
            let reason = "this kernel has no Landlock (it is older than Linux 5.13, or Landlock \
                          is not enabled at boot)"
                .to_owned();
            if confinement.when_unavailable == WhenUnavailable::Refuse {
                return Err(SandboxError(format!(
                    "Bash cannot run sandboxed: {reason}, and the sandbox's when_unavailable \
                     setting is \"refuse\""
                )));
            }
            Enforcement::Unavailable(reason)
        }
        RulesetStatus::FullyEnforced | RulesetStatus::PartiallyEnforced => Enforcement::Enforced,
    };
    if !confinement.network {
        let filter = network_filter().map_err(|e| SandboxError(e.clone()))?;
        seccompiler::apply_filter(filter)
            .map_err(|e| SandboxError(format!("cannot turn the network off: {e}")))?;
    }
    Ok(enforcement)
}

/// Allows writes beneath the writable folders only.
fn restrict_writes(confinement: &Confinement) -> Result<RulesetStatus, SandboxError> {
    // Connecting to Unix sockets by path stays allowed: only the network is confined.
    let handled = AccessFs::from_write(LANDLOCK_ABI);
    let writable = confinement
        .writable
        .iter()
        .map(|path| path.as_path())
        .chain(DEVICES.iter().map(std::path::Path::new));
    let status = Ruleset::default()
        .handle_access(handled)
        .and_then(|ruleset| ruleset.create())
        .and_then(|ruleset| ruleset.add_rules(path_beneath_rules(writable, handled)))
        .and_then(|ruleset| ruleset.restrict_self())
        .map_err(|e| SandboxError(format!("cannot confine the command's writes: {e}")))?;
    Ok(status.ruleset)
}

/// The seccomp program refusing sockets other than Unix ones, built once.
fn network_filter() -> Result<&'static BpfProgram, &'static String> {
    static FILTER: OnceLock<Result<BpfProgram, String>> = OnceLock::new();
    FILTER
        .get_or_init(|| {
            build_network_filter().map_err(|e| format!("cannot build the network filter: {e}"))
        })
        .as_ref()
}

fn build_network_filter() -> Result<BpfProgram, seccompiler::BackendError> {
    let not_unix = SeccompRule::new(vec![SeccompCondition::new(
        0,
        SeccompCmpArgLen::Dword,
        SeccompCmpOp::Ne,
        libc::AF_UNIX as u64,
    )?])?;
    let rules: BTreeMap<i64, Vec<SeccompRule>> = [
        (libc::SYS_socket, vec![not_unix.clone()]),
        (libc::SYS_socketpair, vec![not_unix]),
        // Every io_uring: its socket operations would not pass through this filter.
        (libc::SYS_io_uring_setup, vec![]),
    ]
    .into_iter()
    .collect();
    SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(REFUSED),
        std::env::consts::ARCH.try_into()?,
    )?
    .try_into()
}
