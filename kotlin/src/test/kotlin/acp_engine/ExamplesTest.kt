package acp_engine

import acp_engine.examples.runExampleClient
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

/** The example programs against each other and against the Rust examples, over real pipes. */
class ExamplesTest {
    @Test
    fun `kotlin client drives the rust example agent`() = runBlocking {
        withTimeout(30_000) { assertTrue(runExampleClient(Peers.rustAgent, emptyList())) }
    }

    @Test
    fun `rust client drives the kotlin example agent`() {
        val (code, out, err) = Peers.run(listOf(Peers.rustClient) + Peers.jvm("acp_engine.examples.ExampleAgentKt"))
        assertEquals(0, code, "client failed:\n$out\n$err")
        assertTrue(out.lines().contains("interop ok"), out)
    }

    @Test
    fun `kotlin client drives the kotlin example agent and both JVMs exit`() {
        val agent = Peers.jvm("acp_engine.examples.ExampleAgentKt")
        val (code, out, err) = Peers.run(Peers.jvm("acp_engine.examples.ExampleClientKt", *agent.toTypedArray()))
        assertEquals(0, code, "client failed:\n$out\n$err")
        assertTrue(out.lines().contains("interop ok"), out)
    }

    @Test
    fun `kotlin client reaches a remote agent over WebSocket and Streamable HTTP`() = runBlocking {
        // The Rust example agent serving remote clients; its first two lines are its URLs.
        val server = ProcessBuilder(Peers.rustAgent, "--serve", "127.0.0.1:0")
            .redirectError(ProcessBuilder.Redirect.DISCARD)
            .start()
        try {
            val lines = server.inputStream.bufferedReader()
            val urls = listOf(lines.readLine(), lines.readLine())
            assertTrue(urls[0].startsWith("ws://") && urls[1].startsWith("http://"), urls.toString())
            for (url in urls) {
                withTimeout(30_000) { assertTrue(runExampleClient(url, emptyList()), url) }
            }
        } finally {
            server.destroy()
            server.waitFor()
        }
    }
}
