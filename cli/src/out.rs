//! Printing that survives a closed pipe. `println!` panics when stdout is
//! gone (`acp-engine check agent -- ... | head`, a log reader that quit),
//! and a panic would end a command halfway, or a server with every
//! connection on it: these macros write and let a failed write pass (the
//! reader left; the work goes on). `cli/clippy.toml` refuses the std ones.

/// `print!` to stdout, flushed (prompts end without a newline).
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let mut stdout = std::io::stdout().lock();
        let _ = write!(stdout, $($arg)*);
        let _ = stdout.flush();
    }};
}

/// `println!` to stdout.
macro_rules! outln {
    () => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout());
    }};
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

/// `eprintln!` to stderr.
macro_rules! errln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}
