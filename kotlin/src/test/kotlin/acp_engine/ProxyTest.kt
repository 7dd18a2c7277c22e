package acp_engine

import java.io.File
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

/**
 * A proxy on [runProxy] in a real chain: our conductor (`acp-engine conduct`) runs
 * [LoggingProxy] in a child JVM in front of the Rust example agent, driven by the Rust
 * example client through a whole session (prompt, permission, files, terminal, a
 * cancelled turn).
 */
class ProxyTest {
    @Test
    fun `a Kotlin proxy passes a whole session through our conductor`() {
        val conductor = File(Peers.rustExamples.parentFile, "acp-engine").path
        // One command line for the conductor, which splits it as a shell would.
        val proxy = Peers.jvm("acp_engine.LoggingProxyKt", "--name", "kt").joinToString(" ") { "'$it'" }
        val (status, out, err) = Peers.run(listOf(Peers.rustClient, conductor, "conduct", proxy, Peers.rustAgent))
        assertEquals(0, status, "$out $err")
        assertTrue("interop ok" in out.lines(), "$out $err")
        for (crossed in listOf("-> initialize", "-> session/prompt", "<- session/request_permission", "<- fs/read_text_file")) {
            assertTrue("[kotlin-proxy kt] $crossed" in err, "$crossed: $err")
        }
        assertTrue("stop reason: cancelled" in out, out)
    }
}
