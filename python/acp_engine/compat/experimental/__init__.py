"""``acp.experimental``: the official SDK's experimental APIs, on the engine.
So far :mod:`.v2` has ACP v2's models and method tables; its connections and the
v1/v2 negotiation (``AgentProtocolRouter``) are not here yet."""
