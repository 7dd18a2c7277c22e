package acp_engine

import acp_engine.ffi.AcpException
import acp_engine.ffi.NativeConnection
import acp_engine.ffi.Settings
import acp_engine.ffi.Side
import acp_engine.ffi.eventKinds
import acp_engine.ffi.SpawnConfig
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.runBlocking

/**
 * How to start an agent process, and how the connection to it behaves.
 *
 * @property env variables added to this process's environment for the agent (or, with
 *   [clearEnv], its whole environment).
 * @property clearEnv start the agent with [env] only.
 * @property cwd the agent's working directory (`null`: this process's).
 * @property inheritStderr pass the agent's stderr through to ours (true) or drop it.
 * @property exitGraceMillis how long the agent may take to exit after its stdin closed
 *   before it is killed (`null`: the engine's default, 500 ms).
 */
data class SpawnOptions(
    val env: Map<String, String> = emptyMap(),
    val clearEnv: Boolean = false,
    val cwd: String? = null,
    val inheritStderr: Boolean = true,
    val exitGraceMillis: Int? = null,
)

/**
 * Settings of a connection.
 *
 * @property unstable speak the unstable protocol too (its methods are unknown otherwise).
 * @property maxMessageSize the largest inbound message in bytes (`null`: [Defaults.MAX_MESSAGE_SIZE]).
 * @property uncheckedMethods methods outside the ACP schema this connection sends and receives
 *   as they are, unchecked: for peers that still use methods the schema dropped (the legacy
 *   `session/set_model`) or methods of a newer schema. Inbound ones reach the handler's
 *   `extMethod` / `extNotification`; send them with `extMethod` / `extNotification` (or
 *   [Connection.sendRequest] / [Connection.sendNotification]), which send the name as given.
 * @property protocolVersions the ACP versions the connection speaks: `listOf(1)` (the
 *   default), `listOf(2)` (the version 2 draft only: a v1 client's `initialize` is answered
 *   -32022) or both (an agent serves each client the version it asks for). With 2,
 *   `initialize` selects the version ([Connection.protocolVersion]) and the engine checks
 *   every later message against it, both ways.
 */
data class ConnectionOptions(
    val unstable: Boolean = false,
    val maxMessageSize: Long? = null,
    val uncheckedMethods: List<String> = emptyList(),
    val protocolVersions: List<Int> = listOf(1),
) {
    init {
        require(protocolVersions.isNotEmpty() && protocolVersions.all { it == 1 || it == 2 }) {
            "protocolVersions must name 1, 2 or both, not $protocolVersions"
        }
    }
}

/**
 * Which side of ACP a [Connection] made by [Connection.spawn] or [Connection.stdio]
 * plays: the engine checks what it receives and sends against that side's methods
 * ([RAW]: plain JSON-RPC, no checks). For what the typed connections do not cover, such
 * as the version 2 draft ([ConnectionOptions.protocolVersions]).
 */
enum class ConnectionSide(internal val native: Side) {
    RAW(Side.RAW),
    AGENT(Side.AGENT),
    CLIENT(Side.CLIENT),
}

/**
 * A JSON-RPC 2.0 connection run by the engine: newline-delimited JSON over a byte stream.
 * The engine checks every message both ways against the schema, hands inbound
 * notifications over in arrival order (a response is released only after the
 * notifications that came before it), answers `$/cancel_request` and applies every other
 * engine rule; this class moves JSON text. Get one from [AgentSideConnection] or
 * [ClientSideConnection] (ACP, checked against the schema both ways), or from
 * [Connection.spawn] / [Connection.stdio] (plain JSON-RPC).
 */
class Connection internal constructor(private val native: NativeConnection) : AutoCloseable {
    /** Where messages and events cross ([TextConnection], [EventThread]). */
    internal val text = TextConnection(native)

    /** Requests in flight both ways. */
    internal val calls = Calls(native, text)

    /**
     * Send a request and wait for its result. [params] is a JSON value (see [JsonObject]),
     * `null` for none. Cancelling the calling coroutine cancels the request: the peer gets
     * `$/cancel_request`. Throws [RequestError] when the peer answers with an error, when
     * the engine refuses the method (-32601: not one this side sends, nor `_`-prefixed, nor
     * one of [ConnectionOptions.uncheckedMethods]) or the params (-32602), or when the
     * connection closes ([RequestError.isConnectionClosed]).
     */
    suspend fun sendRequest(method: String, params: Any? = null): Any? =
        calls.request(method, params?.let(Json::stringify))

    /** [sendRequest] for a method whose result is a JSON object. */
    suspend fun request(method: String, params: Any?): JsonObject {
        @Suppress("UNCHECKED_CAST")
        return (sendRequest(method, params) as? Map<String, Any?>) ?: emptyMap()
    }

    /**
     * Send a notification. It is queued in order and written without waiting, unless the
     * peer has stopped reading and the connection holds all it may for it: then this
     * suspends until there is room (backpressure), in order with the other sends. Throws
     * [RequestError] when the engine refuses the params or the connection is closed.
     */
    suspend fun sendNotification(method: String, params: Any? = null) {
        try {
            val ticket = text.sendNotification(method, params?.let(Json::stringify))
            if (ticket != null) native.waitWritten(ticket.toULong())
        } catch (error: AcpException) {
            throw RequestError.from(error)
        }
    }

    /**
     * Close the connection: pending requests fail, running handlers are cancelled, queued
     * output is flushed, a spawned agent is reaped. [closed] resumes once that is done.
     */
    override fun close() = native.closeConnection()

    /** Suspend until the connection is closed and torn down (the peer hung up or [close]). */
    suspend fun closed() = native.closed()

    /** True from the moment the connection starts closing. */
    val isClosed: Boolean get() = native.isClosed()

    /** Why the connection closed, once it did. */
    val closeReason: String? get() = native.closeReason()

    /** The spawned agent's process id, for a connection made by spawning one. */
    val pid: Long? get() = native.pid()?.toLong()

    /** The ACP version the connection speaks: the one `initialize` selected, or its lowest until then. */
    val protocolVersion: Int get() = native.protocolVersion().toInt()

    /** Plain JSON-RPC connections: any method, no schema checks (ACP: [spawnAgent], [runAgent]). */
    companion object {
        /** Start `command args` and talk plain JSON-RPC to it over its stdin and stdout ([side]: as that side of ACP). */
        fun spawn(
            command: String,
            args: List<String> = emptyList(),
            spawn: SpawnOptions = SpawnOptions(),
            options: ConnectionOptions = ConnectionOptions(),
            side: ConnectionSide = ConnectionSide.RAW,
            makeHandler: (Connection) -> ConnectionHandler,
        ): Connection = open(
            { spawnNative(side.native, options, command, args, spawn) },
            { h: ConnectionHandler, method, params -> h.handleRequest(method, params) },
            { h: ConnectionHandler, method, params -> h.handleNotification(method, params) },
            makeHandler,
        ).first

        /** Talk plain JSON-RPC over this process's stdin and stdout ([side]: as that side of ACP). */
        fun stdio(
            options: ConnectionOptions = ConnectionOptions(),
            side: ConnectionSide = ConnectionSide.RAW,
            makeHandler: (Connection) -> ConnectionHandler,
        ): Connection =
            open(
                { NativeConnection.stdio(settings(side.native, options)) },
                { h: ConnectionHandler, method, params -> h.handleRequest(method, params) },
                { h: ConnectionHandler, method, params -> h.handleNotification(method, params) },
                makeHandler,
            ).first

        /** Start a connection whose handler is made from the connection itself. */
        internal fun <T> open(
            create: () -> NativeConnection,
            request: suspend (T, String, Any?) -> Any?,
            notification: suspend (T, String, Any?) -> Unit,
            make: (Connection) -> T,
        ): Pair<Connection, T> {
            NativeThreads.setUp()
            val connection = Connection(create())
            val target = try {
                make(connection)
            } catch (error: Throwable) {
                connection.close()
                throw error
            }
            // Events wait in the engine until the handler exists.
            EventThread(connection.text, Events(target, connection.calls, request, notification)).start()
            return connection to target
        }

        /**
         * Start a typed connection (v1's here, v2's in `acp_engine.v2`): [wrap] makes the
         * side's connection object once, [make] the user's handler from it, and [request] /
         * [notification] are the side's method table.
         */
        internal fun <H, S : Any> typedSide(
            create: () -> NativeConnection,
            request: suspend (H, String, JsonObject) -> JsonObject,
            notification: suspend (H, String, JsonObject) -> Unit,
            wrap: (Connection) -> S,
            make: (S) -> H,
        ): S {
            var side: S? = null
            open(
                create,
                { handler: H, method, params -> request(handler, method, asObject(params)) },
                { handler: H, method, params -> notification(handler, method, asObject(params)) },
                { connection -> make(wrap(connection).also { side = it }) },
            )
            return checkNotNull(side)
        }

        /** Spawn `command args` as [side]; a failure to start is a [RequestError]. */
        internal fun spawnNative(
            side: Side,
            options: ConnectionOptions,
            command: String,
            args: List<String>,
            spawn: SpawnOptions,
        ): NativeConnection = try {
            NativeConnection.spawn(settings(side, options), spawnConfig(command, args, spawn))
        } catch (error: AcpException) {
            throw RequestError.from(error)
        }

        internal fun settings(side: Side, options: ConnectionOptions) =
            Settings(
                side, options.unstable, options.maxMessageSize?.toULong(), options.uncheckedMethods,
                options.protocolVersions.map { it.toUShort() },
            )

        internal fun spawnConfig(command: String, args: List<String>, options: SpawnOptions) = SpawnConfig(
            command, args, options.env, options.clearEnv, options.cwd, options.inheritStderr,
            options.exitGraceMillis?.toUInt(),
        )
    }
}

/** ACP params are objects (absent params read as an empty one). */
@Suppress("UNCHECKED_CAST")
private fun asObject(params: Any?): JsonObject = (params as? JsonObject) ?: emptyMap()

/**
 * What the owner of a plain JSON-RPC [Connection] implements (ACP programs implement
 * [Agent] or [Client] instead). Requests run concurrently, each in its own coroutine,
 * cancelled when the peer cancels the request; notifications come one at a time, in
 * arrival order. `params` is a JSON value (see [JsonObject]), `null` when absent.
 */
interface ConnectionHandler {
    /** Answer a request with its result (a JSON value); -32601 unless overridden. */
    suspend fun handleRequest(method: String, params: Any?): Any? = throw RequestError.methodNotFound(method)

    /** Handle a notification; ignored unless overridden. */
    suspend fun handleNotification(method: String, params: Any?) {}
}

/**
 * The engine's view of the user's handler: the connection's events (JSON text) in order,
 * on the connection's [EventThread]; the peer's requests start coroutines, ours get their
 * outcomes, notifications are handled one at a time before the next event.
 */
internal class Events<T>(
    private val target: T,
    private val calls: Calls,
    private val request: suspend (T, String, Any?) -> Any?,
    private val notification: suspend (T, String, Any?) -> Unit,
) {
    /**
     * Handle one batch: a JSON array of event arrays. Only notification handlers run in
     * a scope of this thread (the peer's requests run on [Calls]' own), hence the
     * [InNotification] mark; a batch without notifications needs no scope.
     */
    fun handle(batch: String) {
        val events = Json.parse(batch) as List<*>
        if (events.any { kind(it) == NOTIFICATION }) {
            runBlocking(InNotification) { for (event in events) handleEvent(event as List<*>) }
        } else {
            for (event in events) handleOther(event as List<*>)
        }
    }

    private suspend fun handleEvent(event: List<*>) {
        if (kind(event) != NOTIFICATION) return handleOther(event)
        try {
            notification(target, event[1] as String, event[2])
        } catch (cancelled: CancellationException) {
            throw cancelled
        } catch (error: Throwable) {
            // Notifications get no answer; the next one goes on.
        }
    }

    /** Every event but a notification: none suspends this thread's scope. */
    private fun handleOther(event: List<*>) {
        when (kind(event)) {
            REQUEST -> {
                val method = event[2] as String
                val params = event[3]
                calls.serve((event[1] as Number).toLong()) { request(target, method, params) }
            }
            RESULT -> calls.settle((event[1] as Number).toLong(), Outcome(event[2], null))
            ERROR -> calls.settle((event[1] as Number).toLong(), Outcome(null, RequestError.fromJson(event[2])))
            CANCELLED -> calls.stop((event[1] as Number).toLong())
            INVALID_NOTIFICATION -> invalidNotification(target, event[1] as String, RequestError.fromJson(event[2]))
            CLOSED -> calls.closeAll(event[1] as? String ?: "closed")
        }
    }

    private companion object {
        fun kind(event: Any?): Int = ((event as List<*>)[0] as Number).toInt()

        val KINDS = eventKinds()
        val NOTIFICATION = KINDS.notification.toInt()
        val REQUEST = KINDS.request.toInt()
        val RESULT = KINDS.result.toInt()
        val ERROR = KINDS.error.toInt()
        val CANCELLED = KINDS.cancelled.toInt()
        val CLOSED = KINDS.closed.toInt()
        val INVALID_NOTIFICATION = KINDS.invalidNotification.toInt()
    }
}

/**
 * An agent's connection to its client: the client's methods ([ClientPeer]: `sessionUpdate`,
 * `requestPermission`, `readTextFile`, `createTerminal`, ...), and the [Agent] that serves
 * the client's requests.
 */
class AgentSideConnection private constructor(override val connection: Connection) : ClientPeer(), AutoCloseable {
    /** Close the connection (see [Connection.close]). */
    override fun close() = connection.close()

    /** Suspend until the connection is closed. */
    suspend fun closed() = connection.closed()

    companion object {
        /**
         * Serve `makeAgent(connection)` on this process's stdin and stdout (an agent
         * launched by its client). The agent gets the connection to call its client back.
         */
        fun stdio(
            options: ConnectionOptions = ConnectionOptions(),
            makeAgent: (AgentSideConnection) -> Agent,
        ): AgentSideConnection = Connection.typedSide(
            { NativeConnection.stdio(Connection.settings(Side.AGENT, options)) },
            ::dispatchAgentRequest,
            ::dispatchAgentNotification,
            ::AgentSideConnection,
            makeAgent,
        )
    }
}

/**
 * Run an agent on this process's stdin and stdout until the client hangs up.
 *
 * ```kotlin
 * fun main() = runBlocking { runAgent { client -> MyAgent(client) } }
 * ```
 */
suspend fun runAgent(options: ConnectionOptions = ConnectionOptions(), makeAgent: (AgentSideConnection) -> Agent) {
    val connection = AgentSideConnection.stdio(options, makeAgent)
    try {
        connection.closed()
    } finally {
        connection.close()
    }
}

/**
 * A client's connection to an agent: the agent's methods ([AgentPeer]: `initialize`,
 * `newSession`, `prompt`, `cancel`, ...), and the [Client] that serves the agent's requests.
 */
class ClientSideConnection private constructor(override val connection: Connection) : AgentPeer(), AutoCloseable {
    /** Close the connection; a spawned agent is stopped and reaped. */
    override fun close() = connection.close()

    /** Suspend until the connection is closed (the agent exited, or [close]). */
    suspend fun closed() = connection.closed()

    companion object {
        /**
         * Start `command args` and talk to it as its client, serving its requests with
         * `makeClient(connection)`. Throws [RequestError] if it cannot be started.
         */
        fun spawn(
            command: String,
            args: List<String> = emptyList(),
            spawn: SpawnOptions = SpawnOptions(),
            options: ConnectionOptions = ConnectionOptions(),
            makeClient: (ClientSideConnection) -> Client,
        ): ClientSideConnection = open(makeClient) {
            Connection.spawnNative(Side.CLIENT, options, command, args, spawn)
        }

        /**
         * Connect to a remote agent at [url]: `ws://` or `wss://` (WebSocket), `http://` or
         * `https://` (Streamable HTTP), in the background: a failure closes the connection
         * with the reason. [caFile]: a PEM file of CA certificates to trust besides the
         * system's. [reconnectTimeoutMillis]: how long to keep trying, with backoff and jitter,
         * to reopen a broken Streamable HTTP event stream or resume a broken WebSocket (the
         * server sends what was lost, once) or to reach the server for a message (an `initialize` answered 502 to 504
         * too), before the connection closes with the reason; null or 0
         * ([Defaults.RECONNECT_TIMEOUT_MS]) closes it at the first break.
         * [connectTimeoutMillis]: how long the server has to take the connection (the TCP
         * connect, the TLS handshake and the WebSocket upgrade) before it closes with the
         * reason; null: [Defaults.CONNECT_TIMEOUT_MS]; 0: wait for ever.
         */
        fun remote(
            url: String,
            bearerToken: String? = null,
            caFile: String? = null,
            options: ConnectionOptions = ConnectionOptions(),
            reconnectTimeoutMillis: Long? = null,
            connectTimeoutMillis: Long? = null,
            makeClient: (ClientSideConnection) -> Client,
        ): ClientSideConnection = open(makeClient) {
            NativeConnection.remote(
                Connection.settings(Side.CLIENT, options),
                url,
                bearerToken,
                caFile,
                reconnectTimeoutMillis?.toULong(),
                connectTimeoutMillis?.toULong(),
            )
        }

        private fun open(
            makeClient: (ClientSideConnection) -> Client,
            create: () -> NativeConnection,
        ): ClientSideConnection = Connection.typedSide(
            create,
            ::dispatchClientRequest,
            ::dispatchClientNotification,
            ::ClientSideConnection,
            makeClient,
        )
    }
}

/** Start an agent process and connect to it as a client: [ClientSideConnection.spawn]. */
fun spawnAgent(
    command: String,
    args: List<String> = emptyList(),
    spawn: SpawnOptions = SpawnOptions(),
    options: ConnectionOptions = ConnectionOptions(),
    makeClient: (ClientSideConnection) -> Client,
): ClientSideConnection = ClientSideConnection.spawn(command, args, spawn, options, makeClient)

/**
 * A terminal the agent created on its client (`createTerminal`). Release it when done.
 *
 * @property sessionId the session it belongs to.
 * @property terminalId the client's id for it.
 */
class TerminalHandle internal constructor(
    private val peer: ClientPeer,
    val sessionId: String,
    val terminalId: String,
) {
    private val ids: JsonObject get() = mapOf("sessionId" to sessionId, "terminalId" to terminalId)

    /** Its output so far (and its exit status, once it exited). */
    suspend fun currentOutput(): JsonObject = peer.terminalOutput(ids)

    /** Suspend until the command exits; its exit status. */
    suspend fun waitForExit(): JsonObject = peer.waitForTerminalExit(ids)

    /** Kill the command; the terminal stays until released. */
    suspend fun kill(): JsonObject = peer.killTerminal(ids)

    /** Release the terminal (killing the command if it still runs). */
    suspend fun release(): JsonObject = peer.releaseTerminal(ids)

    internal companion object {
        fun created(peer: ClientPeer, params: JsonObject, result: JsonObject) =
            TerminalHandle(peer, params["sessionId"] as String, result["terminalId"] as String)
    }
}
