package acp_engine

import java.io.File
import java.util.concurrent.TimeUnit

/** Where the tests find the peers they run. */
object Peers {
    /** The Rust example programs (`cargo build -p acp-engine --examples`). */
    val rustExamples: File = File(System.getProperty("acp.examples") ?: "../target/debug/examples")

    /** The Rust example agent. */
    val rustAgent: String get() = File(rustExamples, "agent").also { check(it.canExecute()) { "build $it first" } }.path

    /** The Rust example client. */
    val rustClient: String get() = File(rustExamples, "client").also { check(it.canExecute()) { "build $it first" } }.path

    /** A command that runs [mainClass] (a Kotlin `main`) in a child JVM with this JVM's class path. */
    fun jvm(mainClass: String, vararg args: String): List<String> {
        val java = File(System.getProperty("java.home"), "bin/java").path
        return listOf(java, "-Xshare:auto", "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"), mainClass) + args
    }

    /** Run [command] to its end (at most [seconds]); its exit code and its stdout and stderr. */
    fun run(command: List<String>, seconds: Long = 60): Triple<Int, String, String> {
        val out = File.createTempFile("acp-kotlin-test", ".out")
        val err = File.createTempFile("acp-kotlin-test", ".err")
        try {
            val process = ProcessBuilder(command).redirectOutput(out).redirectError(err).start()
            if (!process.waitFor(seconds, TimeUnit.SECONDS)) {
                process.destroyForcibly()
                throw AssertionError("$command still ran after ${seconds}s: ${out.readText()} ${err.readText()}")
            }
            return Triple(process.exitValue(), out.readText(), err.readText())
        } finally {
            out.delete()
            err.delete()
        }
    }
}
