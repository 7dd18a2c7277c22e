package acp_engine

import com.sun.net.httpserver.HttpExchange
import com.sun.net.httpserver.HttpServer
import java.net.InetSocketAddress
import java.net.ServerSocket
import java.util.concurrent.CountDownLatch
import java.util.concurrent.Executors
import java.util.concurrent.atomic.AtomicInteger
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows

/**
 * The least of a Streamable HTTP agent (the JDK's HttpServer): it refuses its first
 * `initialize` with 503, as a draining server or a proxy with no backend up would,
 * answers the next, and holds the connection's event stream open until stopped.
 */
class StreamableAgent(port: Int) {
    val initializes = AtomicInteger()
    private val stopped = CountDownLatch(1)
    private val server = HttpServer.create(InetSocketAddress("127.0.0.1", port), 0).apply {
        executor = Executors.newCachedThreadPool()
        createContext("/acp") { exchange -> handle(exchange) }
    }

    private fun handle(exchange: HttpExchange) {
        when (exchange.requestMethod) {
            "POST" -> {
                val body = exchange.requestBody.readBytes().decodeToString()
                val id = Regex("\"id\"\\s*:\\s*(\\d+)").find(body)?.groupValues?.get(1)
                if (initializes.incrementAndGet() == 1 || id == null) {
                    exchange.sendResponseHeaders(503, -1)
                } else {
                    val answer = """{"jsonrpc":"2.0","id":$id,"result":{"protocolVersion":1}}""".encodeToByteArray()
                    exchange.responseHeaders.add("Acp-Connection-Id", "c1")
                    exchange.responseHeaders.add("Content-Type", "application/json")
                    exchange.sendResponseHeaders(200, answer.size.toLong())
                    exchange.responseBody.write(answer)
                }
            }
            "GET" -> {
                exchange.responseHeaders.add("Content-Type", "text/event-stream")
                exchange.sendResponseHeaders(200, 0)
                exchange.responseBody.flush()
                stopped.await()
            }
            else -> exchange.sendResponseHeaders(202, -1)
        }
        exchange.close()
    }

    fun start() = server.start()

    fun stop() {
        stopped.countDown()
        server.stop(0)
    }
}

class RemoteTest {
    private class QuietClient : Client {
        override suspend fun requestPermission(params: JsonObject): JsonObject =
            mapOf("outcome" to mapOf("outcome" to "cancelled"))

        override suspend fun sessionUpdate(params: JsonObject) {}
    }

    private fun initialize(url: String, reconnectTimeoutMillis: Long?): JsonObject {
        val connection = ClientSideConnection.remote(url, reconnectTimeoutMillis = reconnectTimeoutMillis) { QuietClient() }
        try {
            return runBlocking { withTimeout(20_000) { connection.initialize(mapOf("protocolVersion" to 1)) } }
        } finally {
            connection.close()
        }
    }

    /** With a reconnect timeout a client started before its server waits for it (past a 503); without, it fails. */
    @Test
    fun aReconnectingClientWaitsForItsServer() {
        val port = ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress()).use { it.localPort }
        val url = "http://127.0.0.1:$port/acp"
        assertThrows<RequestError> { initialize(url, null) }

        val agent = StreamableAgent(port)
        val starter = Thread {
            Thread.sleep(300)
            agent.start()
        }.apply { start() }
        try {
            val answer = initialize(url, 10_000)
            assertEquals(1L, (answer["protocolVersion"] as Number).toLong())
            assertEquals(2, agent.initializes.get(), "a 503, then the answer")
        } finally {
            starter.join()
            agent.stop()
        }
    }

    /** A server that takes the TCP connection and then says nothing fails the connection in time, with the reason. */
    @Test
    fun aServerThatNeverAnswersFailsTheConnectionInTime() {
        ServerSocket(0, 8, java.net.InetAddress.getLoopbackAddress()).use { silent ->
            val url = "ws://127.0.0.1:${silent.localPort}/acp"
            val started = System.nanoTime()
            val connection = ClientSideConnection.remote(url, connectTimeoutMillis = 300) { QuietClient() }
            try {
                val failure = assertThrows<RequestError> {
                    runBlocking { withTimeout(20_000) { connection.initialize(mapOf("protocolVersion" to 1)) } }
                }
                val said = "${failure.message} ${failure.data}"
                assertTrue("did not take the connection within 300 ms" in said, said)
                val tookMillis = (System.nanoTime() - started) / 1_000_000
                assertTrue(tookMillis < 10_000, "took $tookMillis ms")
            } finally {
                connection.close()
            }
        }
    }
}
