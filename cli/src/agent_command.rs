//! The agent command a user typed, checked before anything is started: a
//! program that does not exist is one clear error at start, not a failure
//! per connection or per case later.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::args::Failure;

/// Where `program` would be run from, as `execvp` looks it up.
pub fn find(program: &str) -> Option<PathBuf> {
    let runnable = |path: &Path| {
        path.metadata()
            .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
    };
    if program.contains('/') {
        let path = PathBuf::from(program);
        return runnable(&path).then_some(path);
    }
    let search = std::env::var_os("PATH")?;
    std::env::split_paths(&search)
        .map(|dir| dir.join(program))
        .find(|path| runnable(path))
}

/// Fail (exit 1) unless `command[0]` can be run.
pub fn require(command: &[String]) -> Result<(), Failure> {
    let program = &command[0];
    match find(program) {
        Some(_) => Ok(()),
        None => Err(Failure::Run(format!(
            "cannot start the agent: {program:?} is not a program that can be run (not found, or not executable)"
        ))),
    }
}
