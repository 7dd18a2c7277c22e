"""acp_engine.compat's schema modules create their model classes on first use:
importing the package creates none, and a name asked for in any way (attribute,
from-import, star import, the top-level package, the ``acp`` alias) is the one
class, created with everything it needs. Each check runs in a fresh interpreter:
this process has long created its classes."""

import subprocess
import sys
import textwrap

import pytest
from conftest import official_ts


def run_fresh(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


CREATED = "sorted(name for name, value in vars(schema).items() if isinstance(value, type) and issubclass(value, schema.BaseModel) and value.__module__ == schema.__name__)"


@pytest.mark.parametrize("module", ["acp_engine.compat.schema", "acp_engine.compat.experimental.v2.schema"])
def test_importing_creates_no_model(module: str) -> None:
    out = run_fresh(f"""
        import acp_engine.compat, importlib
        schema = importlib.import_module("{module}")
        print({CREATED})
        print(len(schema.__all__) > 100, set(schema.__all__) <= set(dir(schema)))
    """)
    assert out.splitlines() == ["[]", "True True"]


def test_a_model_is_created_once_with_what_it_needs() -> None:
    out = run_fresh(f"""
        import acp_engine.compat as acp
        from acp_engine.compat import schema
        from acp_engine.compat.schema import PromptRequest
        created = {CREATED}
        # what a prompt holds was created with it, nothing unrelated
        print("TextContentBlock" in created, "ResourceLink" in created, "WriteTextFileRequest" in created)
        print(schema.PromptRequest is PromptRequest is acp.PromptRequest)
        request = PromptRequest.model_validate({{"sessionId": "s", "prompt": [{{"type": "text", "text": "hi"}}]}})
        print(type(request.prompt[0]).__name__, request.prompt[0] == schema.TextContentBlock(type="text", text="hi"))
        print(PromptRequest.__module__, PromptRequest.__qualname__)
    """)
    assert out.splitlines() == [
        "True True False",
        "True",
        "TextContentBlock True",
        "acp_engine.compat.schema PromptRequest",
    ]


def test_star_import_and_unknown_names() -> None:
    out = run_fresh("""
        namespace = {}
        exec("from acp_engine.compat.schema import *", namespace)
        from acp_engine.compat import schema
        print(all(namespace[name] is getattr(schema, name) for name in schema.__all__))
        try:
            schema.NotAModel
        except AttributeError as error:
            print(error)
    """)
    assert out.splitlines() == ["True", "module 'acp_engine.compat.schema' has no attribute 'NotAModel'"]


def test_threads_asking_at_once_get_one_class() -> None:
    out = run_fresh("""
        import threading
        from acp_engine.compat import schema
        seen = []
        start = threading.Barrier(8)
        def ask():
            start.wait()
            seen.append(schema.SessionNotification)
        threads = [threading.Thread(target=ask) for _ in range(8)]
        for thread in threads: thread.start()
        for thread in threads: thread.join()
        print(len(seen), len({id(cls) for cls in seen}))
    """)
    assert out == "8 1"


def test_the_acp_alias_keeps_our_modules_own_spec() -> None:
    out = run_fresh("""
        import warnings
        warnings.simplefilter("error")  # a relative import under a foreign spec warns
        from acp_engine.compat.as_acp import install
        install()
        import acp.schema
        from acp.schema import InitializeRequest
        print(acp.schema.__spec__.name, acp.schema.__name__, InitializeRequest.__module__)
    """)
    assert out == "acp_engine.compat.schema acp_engine.compat.schema acp_engine.compat.schema"


def test_a_clients_first_request_readies_the_update_models_while_the_agent_starts() -> None:
    # The official TypeScript agent, spawned: while the client waits for its
    # first answer, the models of what its handler takes (session/update's
    # tree) are created and built, not when the first update of a turn comes.
    agent = official_ts("agent.mjs")
    out = run_fresh(f"""
        import asyncio
        from acp_engine.compat import connect_to_agent, schema

        class Client:
            async def session_update(self, session_id, update, **kwargs):
                pass

        async def main():
            process = await asyncio.create_subprocess_exec(*{agent!r}, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
            before = "SessionNotification" in {CREATED}
            async with connect_to_agent(Client(), process.stdin, process.stdout) as conn:
                await conn.initialize(protocol_version=1)
                print(before, "SessionNotification" in {CREATED}, schema.SessionNotification.__pydantic_complete__)
            process.stdin.close()
            await process.wait()

        asyncio.run(main())
    """)
    assert out.splitlines() == ["False True True"]


AGENT_REPORTING_ITS_MODELS = f"""
import asyncio
from acp_engine.compat import run_agent, schema
from acp_engine.compat.schema import InitializeResponse, NewSessionResponse

class Agent:
    async def initialize(self, protocol_version, **kwargs):
        return InitializeResponse(protocol_version=1)

    async def new_session(self, cwd, **kwargs):
        return NewSessionResponse(session_id="s1")

    async def ext_method(self, method, params):
        return {{"created": "SessionNotification" in {CREATED}}}

asyncio.run(run_agent(Agent()))
"""


def test_an_agent_readies_its_update_writer_once_a_session_is_made() -> None:
    # A compat agent, spawned: once its answer to session/new is out, it makes
    # what writing session/update takes (that tree of models), not when the
    # first update of the first turn is sent. It says whether it has, before
    # and after a session is made, when asked.
    out = run_fresh(f"""
        import asyncio, sys
        from acp_engine.compat import connect_to_agent

        class Client:
            pass

        async def main():
            process = await asyncio.create_subprocess_exec(
                sys.executable, "-c", {AGENT_REPORTING_ITS_MODELS!r},
                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
            async with connect_to_agent(Client(), process.stdin, process.stdout) as conn:
                await conn.initialize(protocol_version=1)
                before = (await conn.ext_method("created", {{}}))["created"]
                await conn.new_session(cwd="/tmp")
                await asyncio.sleep(0.5)
                after = (await conn.ext_method("created", {{}}))["created"]
                print(before, after)
            process.stdin.close()
            await process.wait()

        asyncio.run(main())
    """)
    assert out.splitlines() == ["False True"]
