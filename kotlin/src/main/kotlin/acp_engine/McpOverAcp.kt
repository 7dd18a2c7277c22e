package acp_engine

import acp_engine.ffi.AcpException
import acp_engine.ffi.McpOperationHandle
import acp_engine.ffi.McpProviderHandle
import acp_engine.ffi.mcpConstants
import acp_engine.ffi.mcpGenerateId
import acp_engine.ffi.mcpOutcomeOfResponse
import acp_engine.ffi.mcpWithRequestMeta
import java.util.Collections
import java.util.WeakHashMap
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.Deferred
import kotlinx.coroutines.async
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.isActive
import kotlinx.coroutines.joinAll
import kotlinx.coroutines.supervisorScope

// MCP-over-ACP (unstable): MCP servers one side offers the other over the ACP connection
// itself (MCP 2026-07-28 in `mcp/message`), named as the official TypeScript SDK names them
// (`McpOverAcpProvider`, `McpOverAcpCaller`). The binding's rules (envelope, request meta,
// outcome carriers, duplicate ids, per-server limits, error mapping) are the engine's
// (`acp_engine::mcp`); this file runs the handlers and listeners.

/** MCP-over-ACP's constants (the engine's generated tables; its error codes are [RequestError.Codes]' `MCP_*`). */
object McpOverAcp {
    private val constants = mcpConstants()

    /** `mcp/message`. */
    const val MESSAGE_METHOD: String = ClientMethods.MCP_MESSAGE
    /** The only MCP revision the binding supports. */
    val PROTOCOL_VERSION: String = constants.protocolVersion
    /** Inner `_meta` keys: protocol version, client capabilities, client info. */
    val META_PROTOCOL_VERSION: String = constants.metaProtocolVersion
    val META_CLIENT_CAPABILITIES: String = constants.metaClientCapabilities
    val META_CLIENT_INFO: String = constants.metaClientInfo

    /** [params] with MCP 2026-07-28's request meta added, never replacing the caller's. */
    fun withRequestMeta(params: JsonObject?, clientCapabilities: JsonObject? = null, clientInfo: JsonObject? = null): JsonObject =
        Json.parseObject(mcpWithRequestMeta(params?.let(Json::stringify), clientCapabilities?.let(Json::stringify), clientInfo?.let(Json::stringify)))

    /** Whether a session's `mcpServers` entry is a server provided over ACP. */
    fun isServerAcp(server: Any?): Boolean =
        server is Map<*, *> && server["type"] == "acp" && server["name"] is String && server["serverId"] is String
}

/** An inner MCP error a server handler throws: answered inside the response's `error` carrier. */
class McpProtocolError(val code: Long, message: String, val data: Any? = null) : Exception(message) {
    internal fun toMcpError(): JsonObject =
        if (data == null) mapOf("code" to code, "message" to (message ?: "")) else mapOf("code" to code, "message" to (message ?: ""), "data" to data)
}

/** What a server handler gets for one MCP request. */
class McpOperationContext internal constructor(
    val serverId: String,
    val requestId: String,
    val method: String,
    val params: JsonObject?,
    val protocolVersion: String,
    val clientCapabilities: JsonObject,
    val clientInfo: Any?,
    val envelopeMeta: JsonObject?,
    private val operation: McpOperationHandle,
    private val connection: Connection,
) {
    /** Send an MCP notification scoped to this request (dropped once it completed). */
    suspend fun notify(method: String, params: JsonObject? = null) {
        val notification = operation.notification(method, params?.let(Json::stringify)) ?: return
        connection.sendNotification(McpOverAcp.MESSAGE_METHOD, Json.parseObject(notification))
    }
}

/** A registered server: publish [declaration] in a session's `mcpServers`. */
class McpServerRegistration internal constructor(val name: String, val serverId: String, private val release: suspend () -> Unit) {
    /** `{"type": "acp", "name", "serverId"}`. */
    val declaration: JsonObject get() = mapOf("type" to "acp", "name" to name, "serverId" to serverId)

    /** Remove the registration: later requests get -33001, running ones are cancelled. */
    suspend fun dispose() = release()
}

/** Serves MCP servers to an ACP peer over `mcp/message`; one per app. */
class McpOverAcpProvider {
    private class Server(val handler: suspend (McpOperationContext) -> JsonObject) {
        val running: MutableSet<Deferred<JsonObject>> = Collections.synchronizedSet(mutableSetOf())
    }

    private class State {
        val handle = McpProviderHandle()
        val servers: MutableMap<String, Server> = Collections.synchronizedMap(mutableMapOf())
    }

    private val states: MutableMap<Connection, State> = Collections.synchronizedMap(WeakHashMap())

    private fun stateOf(connection: Connection): State = synchronized(states) { states.getOrPut(connection) { State() } }

    /** Register a server on [connection] (ready at once: publish its declaration afterwards). */
    fun registerServer(
        connection: Connection,
        name: String,
        serverId: String? = null,
        maxActiveRequests: Int? = null,
        handler: suspend (McpOperationContext) -> JsonObject,
    ): McpServerRegistration {
        require(maxActiveRequests == null || maxActiveRequests >= 1) { "maxActiveRequests must be a positive integer" }
        val state = stateOf(connection)
        val registered = try {
            state.handle.register(name, serverId, maxActiveRequests?.toUInt())
        } catch (error: AcpException) {
            throw IllegalArgumentException(RequestError.from(error).message)
        }
        val server = Server(handler)
        state.servers[registered] = server
        return McpServerRegistration(name, registered) {
            if (state.handle.dispose(registered)) {
                state.servers.remove(registered)
                val running = synchronized(server.running) { server.running.toList() }
                running.forEach { it.cancel() }
                running.joinAll()
            }
        }
    }

    /** [registerServer] on a peer's connection. */
    fun registerServer(peer: AgentPeer, name: String, serverId: String? = null, maxActiveRequests: Int? = null, handler: suspend (McpOperationContext) -> JsonObject) =
        registerServer(peer.connection, name, serverId, maxActiveRequests, handler)

    /** Answer an `mcp/message` request (a client's `messageMcp` handler). */
    suspend fun handleRequest(connection: Connection, params: JsonObject): JsonObject {
        val state = stateOf(connection)
        val started = try {
            state.handle.start(Json.stringify(params))
        } catch (error: AcpException) {
            throw RequestError.from(error)
        }
        val operation = started.operation ?: return Json.parseObject(started.json)
        val context = Json.parseObject(started.json)
        val server = state.servers.getValue(context["serverId"] as String)
        @Suppress("UNCHECKED_CAST")
        val handlerContext = McpOperationContext(
            serverId = context["serverId"] as String,
            requestId = context["requestId"] as String,
            method = context["method"] as String,
            params = context["params"] as JsonObject?,
            protocolVersion = context["protocolVersion"] as String,
            clientCapabilities = context["clientCapabilities"] as JsonObject,
            clientInfo = context["clientInfo"],
            envelopeMeta = context["envelopeMeta"] as JsonObject?,
            operation = operation,
            connection = connection,
        )
        var outcome: String? = null
        var failure: String? = null
        supervisorScope {
            val task = async { server.handler(handlerContext) }
            server.running.add(task)
            try {
                outcome = Json.stringify(task.await())
            } catch (error: McpProtocolError) {
                failure = Json.stringify(mapOf("protocol" to error.toMcpError()))
            } catch (error: CancellationException) {
                if (!currentCoroutineContext().isActive) {
                    // The caller cancelled (the engine answered -32800 already): stop the handler, free the slot.
                    operation.cancel()
                    task.cancel()
                    runCatching { operation.finish(null, Json.stringify(mapOf("details" to "cancelled"))) }
                    throw error
                }
                // The registration was disposed: the handler was cancelled (-32800).
                failure = Json.stringify(mapOf("details" to "the MCP server registration was disposed"))
            } catch (error: RequestError) {
                failure = Json.stringify(mapOf("details" to (error.message ?: ""), "code" to error.code))
            } catch (error: Exception) {
                failure = Json.stringify(mapOf("details" to (error.message ?: error.toString())))
            } finally {
                server.running.remove(task)
            }
        }
        return try {
            Json.parseObject(operation.finish(outcome, failure))
        } catch (error: AcpException) {
            throw RequestError.from(error)
        }
    }

    /** [handleRequest] on a peer's connection. */
    suspend fun handleRequest(peer: AgentPeer, params: JsonObject): JsonObject = handleRequest(peer.connection, params)
}

/** Calls MCP servers an ACP peer declared with `"type": "acp"`; one per app. */
class McpOverAcpCaller(private val clientCapabilities: JsonObject? = null, private val clientInfo: JsonObject? = null) {
    private val routes: MutableMap<Connection, MutableMap<Pair<String, String>, (JsonObject) -> Unit>> =
        Collections.synchronizedMap(WeakHashMap())

    private fun routesOf(connection: Connection) = synchronized(routes) { routes.getOrPut(connection) { Collections.synchronizedMap(mutableMapOf()) } }

    /**
     * Send one MCP request and return its inner outcome (`{"result"}` or `{"error"}`); outer
     * failures throw [RequestError]. Cancelling the calling coroutine sends `$/cancel_request`.
     */
    suspend fun request(
        connection: Connection,
        serverId: String,
        method: String,
        params: JsonObject? = null,
        requestId: String? = null,
        meta: JsonObject? = null,
        onNotification: (JsonObject) -> Unit = {},
    ): JsonObject {
        val routes = routesOf(connection)
        val id = requestId ?: mcpGenerateId("mcp-request")
        val key = serverId to id
        synchronized(routes) {
            require(key !in routes) { "MCP request $id is already active for server $serverId" }
            routes[key] = onNotification
        }
        try {
            val envelope = buildMap {
                put("serverId", serverId)
                put("requestId", id)
                put("method", method)
                put("params", McpOverAcp.withRequestMeta(params, clientCapabilities, clientInfo))
                if (meta != null) put("_meta", meta)
            }
            val response = connection.sendRequest(McpOverAcp.MESSAGE_METHOD, envelope)
            return try {
                Json.parseObject(mcpOutcomeOfResponse(Json.stringify(response)))
            } catch (error: AcpException) {
                throw RequestError.from(error)
            }
        } finally {
            routes.remove(key)
        }
    }

    /** [request] on a peer's connection. */
    suspend fun request(peer: ClientPeer, serverId: String, method: String, params: JsonObject? = null, onNotification: (JsonObject) -> Unit = {}) =
        request(peer.connection, serverId, method, params, onNotification = onNotification)

    /** Route an `mcp/message` notification to its request's listener (an agent's `messageMcp`); others are dropped. */
    fun handleNotification(connection: Connection, params: JsonObject) {
        val listener = routesOf(connection)[params["serverId"].toString() to params["requestId"].toString()] ?: return
        val notification: JsonObject = buildMap {
            put("method", params["method"])
            params["params"]?.let { put("params", it) }
            (params["_meta"] as? Map<*, *>)?.let { put("_meta", it) }
        }
        listener(notification)
    }

    /** [handleNotification] on a peer's connection. */
    fun handleNotification(peer: ClientPeer, params: JsonObject) = handleNotification(peer.connection, params)
}
