//! The seccomp filters bubblewrap loads before it runs a server: system calls a server has no
//! use for, and which widen what it can reach, fail with EPERM (docs/OPERATIONS.md, "Seccomp").
//! The server is not killed: a runtime that probes for a feature takes the error and goes on.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule,
};

/// Refused whatever their arguments.
const REFUSED: [i64; 29] = [
    // Another process's memory.
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    // The kernel keyring.
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_keyctl,
    // Kernel programs and counters.
    libc::SYS_bpf,
    libc::SYS_perf_event_open,
    libc::SYS_userfaultfd,
    // Mounts and namespaces.
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_move_mount,
    libc::SYS_open_tree,
    libc::SYS_fsopen,
    libc::SYS_fsconfig,
    libc::SYS_fsmount,
    libc::SYS_fspick,
    libc::SYS_mount_setattr,
    libc::SYS_unshare,
    libc::SYS_setns,
    // Kernel modules and kexec.
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
    libc::SYS_kexec_load,
    libc::SYS_kexec_file_load,
    // io_uring makes sockets without socket(2), past the family check below.
    libc::SYS_io_uring_setup,
    libc::SYS_io_uring_enter,
    libc::SYS_io_uring_register,
];

/// The namespace flags `clone` may not be given.
const NAMESPACE_FLAGS: [i32; 8] = [
    libc::CLONE_NEWNS,
    libc::CLONE_NEWCGROUP,
    libc::CLONE_NEWUTS,
    libc::CLONE_NEWIPC,
    libc::CLONE_NEWUSER,
    libc::CLONE_NEWPID,
    libc::CLONE_NEWNET,
    libc::CLONE_NEWTIME,
];

fn condition(arg: u8, len: SeccompCmpArgLen, op: SeccompCmpOp, value: u64) -> SeccompCondition {
    SeccompCondition::new(arg, len, op, value).expect("a valid condition")
}

fn rule(conditions: Vec<SeccompCondition>) -> SeccompRule {
    SeccompRule::new(conditions).expect("a rule with conditions")
}

/// The two filters, as bubblewrap reads them (`struct sock_filter`s in the machine's byte
/// order): the first refuses with EPERM; the second answers `clone3` with ENOSYS, whose flags
/// sit behind a pointer no filter can read, so that the C library falls back to `clone`, whose
/// flags the first filter checks.
pub fn filters() -> Result<[Vec<u8>; 2], String> {
    let arch = std::env::consts::ARCH
        .try_into()
        .map_err(|_| format!("no seccomp filter for {}", std::env::consts::ARCH))?;
    let mut refused: BTreeMap<i64, Vec<SeccompRule>> =
        REFUSED.iter().map(|n| (*n, Vec::new())).collect();
    // Only Unix, IPv4 and IPv6 sockets: AF_UNIX 1, AF_INET 2, AF_INET6 10.
    let domain = |op, v| condition(0, SeccompCmpArgLen::Dword, op, v);
    refused.insert(
        libc::SYS_socket,
        vec![
            rule(vec![domain(SeccompCmpOp::Eq, 0)]),
            rule(vec![
                domain(SeccompCmpOp::Ge, 3),
                domain(SeccompCmpOp::Le, 9),
            ]),
            rule(vec![domain(SeccompCmpOp::Gt, 10)]),
        ],
    );
    refused.insert(
        libc::SYS_clone,
        NAMESPACE_FLAGS
            .iter()
            .map(|f| {
                let f = *f as u32 as u64;
                rule(vec![condition(
                    0,
                    SeccompCmpArgLen::Qword,
                    SeccompCmpOp::MaskedEq(f),
                    f,
                )])
            })
            .collect(),
    );
    let eperm = SeccompFilter::new(
        refused,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )
    .map_err(|e| format!("the seccomp filter: {e}"))?;
    let clone3 = SeccompFilter::new(
        [(libc::SYS_clone3, Vec::new())].into_iter().collect(),
        SeccompAction::Allow,
        SeccompAction::Errno(libc::ENOSYS as u32),
        arch,
    )
    .map_err(|e| format!("the seccomp filter: {e}"))?;
    let bytes = |f: SeccompFilter| -> Result<Vec<u8>, String> {
        let program: BpfProgram = f
            .try_into()
            .map_err(|e| format!("the seccomp filter: {e}"))?;
        Ok(program
            .iter()
            .flat_map(|i| {
                let mut b = Vec::with_capacity(8);
                b.extend_from_slice(&i.code.to_ne_bytes());
                b.push(i.jt);
                b.push(i.jf);
                b.extend_from_slice(&i.k.to_ne_bytes());
                b
            })
            .collect())
    };
    Ok([bytes(eperm)?, bytes(clone3)?])
}
