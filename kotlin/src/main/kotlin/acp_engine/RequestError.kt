package acp_engine

import acp_engine.ffi.AcpException
import acp_engine.ffi.errorCodes
import acp_engine.ffi.standardError

/**
 * A JSON-RPC error: throw it from an [Agent] or [Client] method to answer with
 * it; a request to the peer that fails throws it.
 *
 * @property code the JSON-RPC error code (see the factories and [Codes]).
 * @property data the error's `data`, a JSON value (see [JsonObject]), if any.
 */
class RequestError(val code: Long, message: String, val data: Any? = null) : Exception(message) {
    /** True when the request failed because the connection closed. */
    val isConnectionClosed: Boolean get() = code == Codes.CONNECTION_CLOSED

    override fun toString(): String = "RequestError($code, $message${if (data != null) ", ${Json.stringify(data)}" else ""})"

    /** The error as JSON-RPC error object text (`code`, `message`, `data`). */
    internal fun toJson(): String = Json.stringify(
        if (data == null) mapOf("code" to code, "message" to (message ?: ""))
        else mapOf("code" to code, "message" to (message ?: ""), "data" to data),
    )

    /** The error codes the engine and the protocol use. */
    object Codes {
        private val codes = errorCodes()

        /** -32700: the message was not JSON. */
        val PARSE_ERROR: Long = codes.parseError
        /** -32600: the message was not a valid request. */
        val INVALID_REQUEST: Long = codes.invalidRequest
        /** -32601: the method is unknown. */
        val METHOD_NOT_FOUND: Long = codes.methodNotFound
        /** -32602: the params do not fit the method. */
        val INVALID_PARAMS: Long = codes.invalidParams
        /** -32603: the handler failed. */
        val INTERNAL_ERROR: Long = codes.internalError
        /** Authentication is required first. */
        val AUTH_REQUIRED: Long = codes.authRequired
        /** A resource (a file) does not exist. */
        val RESOURCE_NOT_FOUND: Long = codes.resourceNotFound
        /** -32800: the request was cancelled. */
        val REQUEST_CANCELLED: Long = codes.requestCancelled
        /** The connection closed before the answer came. */
        val CONNECTION_CLOSED: Long = codes.connectionClosed
        /** MCP-over-ACP -33000: a binding limit was exceeded. */
        val MCP_RESOURCE_LIMIT_EXCEEDED: Long = codes.mcpResourceLimitExceeded
        /** MCP-over-ACP -33001: no server is registered under the id. */
        val MCP_SERVER_UNAVAILABLE: Long = codes.mcpServerUnavailable
        /** MCP-over-ACP -33002: the server failed without a valid MCP outcome. */
        val MCP_BACKEND_FAILED: Long = codes.mcpBackendFailed
    }

    /** The protocol's errors, with the engine's messages. */
    companion object {
        /** -32700. */
        fun parseError(): RequestError = standard(Codes.PARSE_ERROR)
        /** -32600. */
        fun invalidRequest(): RequestError = standard(Codes.INVALID_REQUEST)
        /** -32601 for [method]. */
        fun methodNotFound(method: String): RequestError = standard(Codes.METHOD_NOT_FOUND, method)
        /** -32602, with what is wrong in [data]. */
        fun invalidParams(data: Any? = null): RequestError = standard(Codes.INVALID_PARAMS).withData(data)
        /** -32603, with optional [data]. */
        fun internalError(data: Any? = null): RequestError = standard(Codes.INTERNAL_ERROR).withData(data)
        /** Authentication required. */
        fun authRequired(): RequestError = standard(Codes.AUTH_REQUIRED)
        /** Resource not found (the [uri], if known). */
        fun resourceNotFound(uri: String? = null): RequestError = standard(Codes.RESOURCE_NOT_FOUND, uri)
        /** -32800: cancelled. */
        fun requestCancelled(): RequestError = standard(Codes.REQUEST_CANCELLED)

        private fun standard(code: Long, detail: String? = null): RequestError = from(standardError(code, detail))

        /** The error of a JSON-RPC error object (as [Json.parse] gives it). */
        internal fun fromJson(error: Any?): RequestError {
            val fields = error as? Map<*, *> ?: emptyMap<String, Any?>()
            return RequestError((fields["code"] as? Number)?.toLong() ?: Codes.INTERNAL_ERROR, fields["message"] as? String ?: "", fields["data"])
        }

        internal fun from(error: AcpException): RequestError = when (error) {
            is AcpException.Rpc -> RequestError(error.code, error.reason, error.data?.let(Json::parse))
        }
    }

    private fun withData(data: Any?): RequestError = if (data == null) this else RequestError(code, message ?: "", data)
}
