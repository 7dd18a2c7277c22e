//! A child process and everything it starts, stopped together.
//!
//! Agents are usually launched through wrappers (`npx` runs a shell that
//! runs node, which may run the real agent), and signalling the direct child
//! leaves the rest running. A [`ProcessTree`] starts its child in a process
//! group of its own, so the whole tree can be signalled at once: on stop it
//! gets a grace period to exit by itself, then SIGTERM goes to the group,
//! then SIGKILL to whatever is left. Dropping one unstopped kills the group.

use std::process::ExitStatus;
use std::time::Duration;

use tokio::process::{Child, Command};

/// How long a tree may take to go after SIGTERM before SIGKILL.
pub const TERM_GRACE: Duration = Duration::from_secs(1);

/// How often a stopping tree is looked at.
const POLL: Duration = Duration::from_millis(10);

/// A spawned child in a process group of its own (see the module).
pub struct ProcessTree {
    child: Child,
    /// What `kill(2)` signals: the process group (minus the child's pid), or
    /// the child alone when it shares our group; None once known gone.
    target: Option<libc::pid_t>,
    status: Option<ExitStatus>,
}

impl ProcessTree {
    /// Spawn `command` as the leader of a new process group.
    pub fn spawn(command: &mut Command) -> std::io::Result<Self> {
        Self::spawn_with(command, true)
    }

    /// Spawn `command`, in a process group of its own or (`own_group`
    /// false) in ours, where a Ctrl-C at the terminal reaches it too; then
    /// only the child itself is signalled on stop.
    pub fn spawn_with(command: &mut Command, own_group: bool) -> std::io::Result<Self> {
        if own_group {
            command.process_group(0);
        }
        command.kill_on_drop(true);
        let child = command.spawn()?;
        let target = child.id().map(|pid| {
            if own_group {
                -(pid as libc::pid_t)
            } else {
                pid as libc::pid_t
            }
        });
        Ok(Self {
            child,
            target,
            status: None,
        })
    }

    /// The child process itself (to take its pipes).
    pub fn child_mut(&mut self) -> &mut Child {
        &mut self.child
    }

    /// The child's pid, while it has not been reaped.
    pub fn id(&self) -> Option<u32> {
        self.child.id()
    }

    /// Wait for the child (not its descendants) to exit.
    pub async fn wait(&mut self) -> std::io::Result<ExitStatus> {
        if let Some(status) = self.status {
            return Ok(status);
        }
        let status = self.child.wait().await?;
        self.status = Some(status);
        Ok(status)
    }

    /// The child's exit status, if it has exited (without waiting).
    pub fn try_wait(&mut self) -> std::io::Result<Option<ExitStatus>> {
        if self.status.is_none() {
            self.status = self.child.try_wait()?;
        }
        Ok(self.status)
    }

    /// Stop the tree: give the child `grace` to exit by itself (its stdin
    /// should be closed by now), then SIGTERM the group, and SIGKILL it
    /// after [`TERM_GRACE`]. Returns the child's exit status. Descendants
    /// still running after the child exited are stopped too.
    pub async fn stop(&mut self, grace: Duration) -> Option<ExitStatus> {
        let _ = tokio::time::timeout(grace, self.wait()).await;
        if self.group_alive() {
            self.signal_group(libc::SIGTERM);
            if !self.gone_within(TERM_GRACE).await {
                tracing::debug!("process group still running after SIGTERM; killing it");
                self.signal_group(libc::SIGKILL);
                // Let the kills land (a member killed may linger as a zombie
                // for its new parent to reap: that is no longer running).
                self.gone_within(POLL * 10).await;
            }
        }
        let status = self.wait().await.ok();
        // Whatever is left is gone or killed; the number may be reused now.
        if !self.group_alive() || self.target.is_some_and(|target| target > 0) {
            self.target = None;
        }
        status
    }

    /// Whether the group is gone within `limit`, looking every [`POLL`] (the
    /// child is reaped on the way: a zombie still counts as a member).
    async fn gone_within(&mut self, limit: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let _ = self.try_wait();
            if !self.group_alive() {
                return true;
            }
            if tokio::time::Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// Whether any process of the group (or the child) is still there.
    fn group_alive(&self) -> bool {
        if self.target.is_some_and(|target| target > 0) && self.status.is_some() {
            return false;
        }
        // SAFETY: kill with signal 0 only checks that the target exists.
        let exists = self
            .target
            .is_some_and(|target| unsafe { libc::kill(target, 0) } == 0);
        match self.target {
            // Zombies count as members: where PID 1 does not reap orphans (a
            // container without an init), a finished group would look alive
            // until its kill. Look for a member that still runs.
            Some(target) if exists && target < 0 => running_member(-target).unwrap_or(true),
            _ => exists,
        }
    }

    fn signal_group(&self, signal: libc::c_int) {
        match self.target {
            // A lone child already reaped: its pid may belong to another process.
            Some(target) if target > 0 && self.status.is_some() => {}
            // SAFETY: a plain kill(2) of our own child or its process group.
            Some(target) => unsafe {
                libc::kill(target, signal);
            },
            None => {}
        }
    }
}

impl Drop for ProcessTree {
    fn drop(&mut self) {
        // Not stopped (a runtime shut down, a connection dropped): nothing of
        // the tree may outlive it.
        self.signal_group(libc::SIGKILL);
    }
}

/// How child `pid` ended, if it has exited and is not reaped yet, in words
/// ("exited with status 1", "killed by signal 9 (SIGKILL)"); it stays
/// unreaped (WNOWAIT), for whoever waits for it. A child that is still
/// running gets up to `patience` to exit: its output may end a moment
/// before it becomes waitable.
pub(crate) fn exit_of(pid: u32, patience: Duration) -> Option<String> {
    let deadline = std::time::Instant::now() + patience;
    loop {
        // SAFETY: waitid on our own child, into a zeroed siginfo_t we own.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        let peeked = unsafe {
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
            )
        };
        if peeked != 0 {
            return None; // not our child, or already reaped
        }
        // SAFETY: waitid filled it in (si_pid 0: no state change yet).
        let (exited, code, status) = unsafe { (info.si_pid(), info.si_code, info.si_status()) };
        if exited != 0 {
            return Some(match code {
                libc::CLD_EXITED => format!("exited with status {status}"),
                _ => format!("killed by signal {status}{}", signal_name(status)),
            });
        }
        if std::time::Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(Duration::from_micros(200));
    }
}

fn signal_name(signal: libc::c_int) -> &'static str {
    match signal {
        libc::SIGKILL => " (SIGKILL)",
        libc::SIGTERM => " (SIGTERM)",
        libc::SIGSEGV => " (SIGSEGV)",
        libc::SIGABRT => " (SIGABRT)",
        libc::SIGINT => " (SIGINT)",
        libc::SIGHUP => " (SIGHUP)",
        libc::SIGPIPE => " (SIGPIPE)",
        libc::SIGBUS => " (SIGBUS)",
        _ => "",
    }
}

/// Whether process group `group` has a member that is not a zombie (None:
/// `/proc` could not be read).
fn running_member(group: libc::pid_t) -> Option<bool> {
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let name = entry.file_name();
        if !name
            .to_str()
            .is_some_and(|name| name.bytes().all(|b| b.is_ascii_digit()))
        {
            continue;
        }
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue; // gone meanwhile
        };
        // "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses.
        let Some(fields) = stat
            .rsplit_once(')')
            .map(|(_, rest)| rest.split_whitespace().collect::<Vec<_>>())
        else {
            continue;
        };
        if fields.get(2).and_then(|pgrp| pgrp.parse::<libc::pid_t>().ok()) == Some(group)
            && !matches!(fields.first(), Some(&"Z") | Some(&"X"))
        {
            return Some(true);
        }
    }
    Some(false)
}
