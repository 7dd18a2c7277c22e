package acp_engine

import java.io.File
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows

/**
 * The ACP version 2 draft on the plain connection ([ConnectionSide], [ConnectionOptions.protocolVersions]):
 * [DualVersionAgent] in a child JVM serves the official TypeScript SDK 2.4.0's v2 client and
 * its v1 client (interop/ts, installed by interop/setup.sh) the version each asks for; a
 * v2-only connection refuses a v1 client's `initialize` with -32022.
 */
class V2Test {
    private fun officialTs(script: String): String {
        val ts = File("../interop/ts")
        check(File(ts, "node_modules/@agentclientprotocol/sdk").isDirectory) { "the official TypeScript SDK is not installed: run interop/setup.sh" }
        return File(ts, script).path
    }

    @Test
    fun `the official clients get the version they ask for`() {
        for ((script, ok) in listOf("v2-client.mjs" to "v2 ok", "readme-client.mjs" to "readme ok")) {
            val (status, out, err) = Peers.run(listOf("node", officialTs(script)) + Peers.jvm("acp_engine.DualVersionAgentKt"))
            assertEquals(0, status, "$script: $out $err")
            assertEquals(ok, out.trim().lines().last(), "$script: $err")
        }
    }

    @Test
    fun `a v2-only agent refuses a v1 initialize and the connection goes on`() = runBlocking {
        val command = Peers.jvm("acp_engine.DualVersionAgentKt", "--v2-only")
        Connection.spawn(command.first(), command.drop(1), side = ConnectionSide.CLIENT) { object : ConnectionHandler {} }.use { agent ->
            repeat(2) {
                val refused = assertThrows<RequestError> {
                    runBlocking {
                        agent.sendRequest(AgentMethods.INITIALIZE, mapOf("protocolVersion" to 1, "clientCapabilities" to emptyMap<String, Any?>()))
                    }
                }
                assertEquals(-32022L, refused.code, refused.message)
            }
            assertEquals(1, agent.protocolVersion)
        }
        assertThrows<IllegalArgumentException> { ConnectionOptions(protocolVersions = listOf(3)) }
        Unit
    }
}
