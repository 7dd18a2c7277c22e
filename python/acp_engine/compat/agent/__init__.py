from .connection import AgentSideConnection

__all__ = ["AgentSideConnection"]
