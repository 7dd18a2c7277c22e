package acp_engine.v2

import acp_engine.Connection
import acp_engine.ConnectionOptions
import acp_engine.SpawnOptions
import acp_engine.ffi.NativeConnection
import acp_engine.ffi.Side

/*
 * ACP version 2 (the draft): the typed connections of both sides, on the same engine as
 * the v1 ones in package `acp_engine`, with v2's method table (Methods.kt). They speak v2
 * only: the engine checks every message against the v2 schema and refuses a v1 peer's
 * `initialize` (-32022). An agent for v1 and v2 clients at once is a plain
 * `acp_engine.Connection` with `protocolVersions = listOf(1, 2)`. Experimental: v2's
 * methods change with the draft.
 */

/** [options] speaking v2 only. */
private fun v2Only(options: ConnectionOptions) = options.copy(protocolVersions = listOf(2))

/**
 * A v2 agent's connection to its client: the client's methods ([ClientPeer]:
 * `updateSession`, `requestPermission`, ...), and the [Agent] that serves the client's
 * requests.
 */
class AgentSideConnection private constructor(override val connection: Connection) : ClientPeer(), AutoCloseable {
    /** Close the connection (see [Connection.close]). */
    override fun close() = connection.close()

    /** Suspend until the connection is closed. */
    suspend fun closed() = connection.closed()

    companion object {
        /**
         * Serve `makeAgent(connection)` on this process's stdin and stdout (an agent
         * launched by its client), speaking v2.
         */
        fun stdio(
            options: ConnectionOptions = ConnectionOptions(),
            makeAgent: (AgentSideConnection) -> Agent,
        ): AgentSideConnection = Connection.typedSide(
            { NativeConnection.stdio(Connection.settings(Side.AGENT, v2Only(options))) },
            ::dispatchAgentRequest,
            ::dispatchAgentNotification,
            ::AgentSideConnection,
            makeAgent,
        )
    }
}

/** Run a v2 agent on this process's stdin and stdout until the client hangs up. */
suspend fun runAgent(options: ConnectionOptions = ConnectionOptions(), makeAgent: (AgentSideConnection) -> Agent) {
    val connection = AgentSideConnection.stdio(options, makeAgent)
    try {
        connection.closed()
    } finally {
        connection.close()
    }
}

/**
 * A v2 client's connection to an agent: the agent's methods ([AgentPeer]: `initialize`,
 * `newSession`, `prompt`, ...), and the [Client] that serves the agent's requests.
 */
class ClientSideConnection private constructor(override val connection: Connection) : AgentPeer(), AutoCloseable {
    /** Close the connection; a spawned agent is stopped and reaped. */
    override fun close() = connection.close()

    /** Suspend until the connection is closed (the agent exited, or [close]). */
    suspend fun closed() = connection.closed()

    companion object {
        /**
         * Start `command args` and talk to it as its v2 client, serving its requests with
         * `makeClient(connection)`. Throws `RequestError` if it cannot be started.
         */
        fun spawn(
            command: String,
            args: List<String> = emptyList(),
            spawn: SpawnOptions = SpawnOptions(),
            options: ConnectionOptions = ConnectionOptions(),
            makeClient: (ClientSideConnection) -> Client,
        ): ClientSideConnection = Connection.typedSide(
            { Connection.spawnNative(Side.CLIENT, v2Only(options), command, args, spawn) },
            ::dispatchClientRequest,
            ::dispatchClientNotification,
            ::ClientSideConnection,
            makeClient,
        )
    }
}

/** Start an agent process and connect to it as a v2 client: [ClientSideConnection.spawn]. */
fun spawnAgent(
    command: String,
    args: List<String> = emptyList(),
    spawn: SpawnOptions = SpawnOptions(),
    options: ConnectionOptions = ConnectionOptions(),
    makeClient: (ClientSideConnection) -> Client,
): ClientSideConnection = ClientSideConnection.spawn(command, args, spawn, options, makeClient)
