//! `acp-engine conduct`: a proxy chain as one agent on stdio, `editor ->
//! conduct -> proxy... -> agent` (acp_engine::conductor).

use acp_engine::conductor::{ChainEnd, Conductor, NestedConductor};
use acp_engine::{SpawnOptions, Transport};

use crate::args::{Args, Failure};

const HELP: &str = "\
usage: acp-engine conduct [options] [--] PROXY... AGENT
       acp-engine conduct --proxy [--] PROXY...

Runs a proxy chain and speaks for it on stdin/stdout as one agent: the
editor's messages go through each PROXY in order to the AGENT and back
(the ACP proxy-chain protocol, `proxy/initialize` and `proxy/successor`, as
the official Rust SDK's conductor speaks it). Each PROXY and the AGENT is
one command line, quoted as one word and split as a shell would
(\"node filter.mjs --strict\"); with no PROXY the chain is the agent alone.

Every component is started at once, with stderr passed through. When the
editor closes stdin, every component is stopped; when a component exits
first, the editor's pending requests fail with the reason and the chain
stops. Exits 0 when the editor closed, 1 when a component could not start
or exited first (which one and why on stderr), 2 on a usage error.

With --proxy the chain is proxies only and is itself a proxy in another
conductor's chain (which initializes it with `proxy/initialize`): what its
last PROXY sends on goes to that conductor's next component.

options:
  --proxy       run as a proxy (every component is a proxy)
  -h, --help    this text
";

pub fn main(argv: Vec<String>) -> Result<(), Failure> {
    let args = Args::parse_with_flags(argv, &[], &["proxy"])?;
    if args.help {
        out!("{HELP}");
        return Ok(());
    }
    if args.rest.is_empty() {
        return Err(Failure::Usage(
            "conduct needs an agent command (and proxies before it)".to_owned(),
        ));
    }
    let mut components = Vec::with_capacity(args.rest.len());
    for line in &args.rest {
        let words = shlex::split(line)
            .filter(|words| !words.is_empty())
            .ok_or_else(|| Failure::Usage(format!("{line:?} is not a command line")))?;
        crate::agent_command::require(&words)?;
        components.push(SpawnOptions::new(&words[0]).args(&words[1..]));
    }
    let runtime = crate::runtime()?;
    let ended = if args.flag("proxy") {
        let nested = components
            .into_iter()
            .fold(NestedConductor::new(), NestedConductor::proxy);
        // The stdio transport registers with the runtime: make it inside.
        runtime.block_on(async { nested.run(Transport::stdio()).await })
    } else {
        let agent = components.pop().expect("at least one component");
        let conductor = components
            .into_iter()
            .fold(Conductor::new(), Conductor::proxy)
            .agent(agent);
        runtime.block_on(async { conductor.run(Transport::stdio()).await })
    };
    match ended {
        Ok(ChainEnd::EditorClosed) => Ok(()),
        Ok(end) => Err(Failure::Run(end.to_string())),
        Err(error) => Err(Failure::Run(error.to_string())),
    }
}
