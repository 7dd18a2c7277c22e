package acp_engine

import kotlinx.coroutines.runBlocking

/** The agent [UnstableTest] runs: `forkSession` calls the client's `messageMcp` first. */
@OptIn(UnstableProtocol::class)
class UnstableAgent(private val client: AgentSideConnection) : Agent {
    override suspend fun initialize(params: JsonObject): JsonObject = mapOf("protocolVersion" to 1)

    override suspend fun newSession(params: JsonObject): JsonObject = mapOf("sessionId" to "s1")

    override suspend fun prompt(params: JsonObject): JsonObject = mapOf("stopReason" to "end_turn")

    override suspend fun cancel(params: JsonObject) {}

    override suspend fun forkSession(params: JsonObject): JsonObject {
        val answer = client.messageMcp(mapOf("serverId" to "srv", "requestId" to "r1", "method" to "tools/list"))
        val asked = (answer["_meta"] as Map<*, *>)["asked"]
        return mapOf("sessionId" to "${params["sessionId"]}-fork-$asked")
    }
}

/** `UnstableAgentKt true|false`: whether the agent speaks the unstable protocol. */
fun main(args: Array<String>) = runBlocking {
    runAgent(ConnectionOptions(unstable = args.first().toBoolean())) { client -> UnstableAgent(client) }
}
