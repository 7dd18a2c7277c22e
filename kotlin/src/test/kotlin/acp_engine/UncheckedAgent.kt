package acp_engine

import kotlinx.coroutines.runBlocking

/**
 * The agent [UncheckedTest] runs: it takes the legacy `session/set_model` (outside the
 * schema) in `extMethod`, tells its client with `legacy/model_chosen` (outside the schema
 * too) and answers `{}`.
 */
class UncheckedAgent(private val client: AgentSideConnection) : Agent {
    override suspend fun initialize(params: JsonObject): JsonObject = mapOf("protocolVersion" to 1)

    override suspend fun newSession(params: JsonObject): JsonObject = mapOf("sessionId" to "s1")

    override suspend fun prompt(params: JsonObject): JsonObject = mapOf("stopReason" to "end_turn")

    override suspend fun cancel(params: JsonObject) {}

    override suspend fun extMethod(method: String, params: JsonObject): JsonObject {
        if (method != UncheckedTest.SET_MODEL) throw RequestError.methodNotFound(method)
        client.extNotification(UncheckedTest.MODEL_CHOSEN, mapOf("modelId" to params["modelId"]))
        return emptyMap()
    }
}

/** `UncheckedAgentKt [METHOD...]`: the unchecked methods of the agent's connection. */
fun main(args: Array<String>) = runBlocking {
    runAgent(ConnectionOptions(uncheckedMethods = args.toList())) { client -> UncheckedAgent(client) }
}
