//! Pinning a measuring thread to a core, for the benchmarks and the
//! examples that time a sender against a receiver on the other core.

use std::process::{Command, Stdio};

/// Pins the calling thread (and the threads it starts from now on) to
/// `core`, with taskset on its kernel thread id. Panics if it cannot: a
/// measure with load on the server's core would mislead.
pub fn pin_this_thread(core: &str) {
    let me = std::fs::read_link("/proc/thread-self").expect("/proc/thread-self");
    let tid = me.file_name().expect("a thread id").to_owned();
    let status = Command::new("taskset")
        .arg("-pc")
        .arg(core)
        .arg(&tid)
        .stdout(Stdio::null())
        .status()
        .expect("taskset");
    assert!(status.success(), "taskset -pc {core} {tid:?} failed");
}
