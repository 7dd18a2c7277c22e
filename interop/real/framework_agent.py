"""The agent acp-agent-framework serves in make test-real (`acp-agent run
framework_agent:agent`): its one LLM agent, on its codex backend (codex-acp,
which the framework spawns and drives as an ACP client)."""
from acp_agent_framework.agents import Agent

agent = Agent(name="framework-on-codex", backend="codex", instruction="You are a helpful assistant.")
