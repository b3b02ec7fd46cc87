//! Kills, by PID, what a test started and could not wait for itself: a successor generation
//! of `twelve serve` is not the test's child.

use std::process::Command;

/// The PIDs to kill with SIGKILL when the test ends, passed or failed.
#[derive(Default)]
pub struct Reap(Vec<u32>);

impl Reap {
    pub fn new(pid: u32) -> Self {
        Self(vec![pid])
    }

    pub fn push(&mut self, pid: u32) {
        self.0.push(pid);
    }

    /// Forgets `pid` before the test waits for it or sees it end: once it is gone, its number
    /// may go to another process, which must not be killed.
    pub fn release(&mut self, pid: u32) {
        self.0.retain(|&p| p != pid);
    }
}

impl Drop for Reap {
    fn drop(&mut self) {
        for pid in &self.0 {
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
        }
    }
}
