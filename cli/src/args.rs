//! Command-line arguments: `--name value` options, flags, and the command
//! after `--`.

/// Why a command did not succeed.
pub enum Failure {
    /// The command line is wrong (exit status 2, with the usage).
    Usage(String),
    /// Something failed at run time (exit status 1).
    Run(String),
    /// Exit with this status, nothing to add (a proxy passing on its
    /// agent's).
    Exit(u8),
}

/// Options before `--`, and the words after it.
pub struct Args {
    options: Vec<(String, Option<String>)>,
    /// The words after `--` (a command to run), or the positional words.
    pub rest: Vec<String>,
    pub help: bool,
}

impl Args {
    /// Parse `argv`; `valued` are the options that take a value.
    pub fn parse(argv: Vec<String>, valued: &[&str]) -> Result<Self, Failure> {
        Self::parse_with_flags(argv, valued, &[])
    }

    /// Parse `argv`; `valued` take a value, `flags` take none.
    pub fn parse_with_flags(argv: Vec<String>, valued: &[&str], flags: &[&str]) -> Result<Self, Failure> {
        let mut args = Args {
            options: Vec::new(),
            rest: Vec::new(),
            help: false,
        };
        let mut words = argv.into_iter();
        while let Some(word) = words.next() {
            if word == "--" {
                args.rest.extend(words.by_ref());
                break;
            }
            if word == "-h" || word == "--help" {
                args.help = true;
            } else if let Some(name) = word.strip_prefix("--") {
                let (name, inline) = match name.split_once('=') {
                    Some((name, value)) => (name.to_owned(), Some(value.to_owned())),
                    None => (name.to_owned(), None),
                };
                if flags.contains(&name.as_str()) && inline.is_none() {
                    args.options.push((name, None));
                    continue;
                }
                if !valued.contains(&name.as_str()) {
                    return Err(Failure::Usage(format!("unknown option --{name}")));
                }
                let value = match inline {
                    Some(value) => value,
                    // `--token -- agent`: the separator is not a value.
                    None => words
                        .next()
                        .filter(|value| value != "--")
                        .ok_or_else(|| Failure::Usage(format!("--{name} needs a value")))?,
                };
                args.options.push((name, Some(value)));
            } else if word.starts_with('-') && word.len() > 1 {
                return Err(Failure::Usage(format!("unknown option {word}")));
            } else {
                args.rest.push(word);
            }
        }
        Ok(args)
    }

    /// The last value given for `--name`.
    pub fn value(&self, name: &str) -> Option<&str> {
        self.options
            .iter()
            .rev()
            .find(|(option, _)| option == name)
            .and_then(|(_, value)| value.as_deref())
    }

    /// Whether the flag `--name` was given.
    pub fn flag(&self, name: &str) -> bool {
        self.options.iter().any(|(option, _)| option == name)
    }

    /// `--name` as a number.
    pub fn number(&self, name: &str) -> Result<Option<usize>, Failure> {
        self.value(name)
            .map(|text| {
                text.parse()
                    .map_err(|_| Failure::Usage(format!("--{name} wants a number, not {text:?}")))
            })
            .transpose()
    }
}

/// The bearer token: `--token`, else the `ACP_ENGINE_TOKEN` variable (which
/// keeps it out of the process list).
pub fn token(args: &Args) -> Option<String> {
    args.value("token").map(str::to_owned).or_else(|| {
        std::env::var("ACP_ENGINE_TOKEN")
            .ok()
            .filter(|token| !token.is_empty())
    })
}
