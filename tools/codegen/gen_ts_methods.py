"""The TypeScript method table: ``node/src/generated/methods.ts`` (stable) and
``node/src/generated/unstable/methods.ts``, from the schema's ``x-method`` / ``x-side``
(via the IR of ``acp_schema``).  Used by ``gen_ts.py``, which writes and checks the files.

Each module holds:

* ``AGENT_METHODS`` / ``CLIENT_METHODS`` / ``PROTOCOL_METHODS`` (and, unstable,
  ``PROXY_METHODS``): method key -> wire name, as the official TypeScript SDK's.
* The ``Agent`` and ``Client`` interfaces users implement: baseline methods required,
  the rest optional; JSDoc from the schema.
* ``AGENT_HANDLERS`` / ``CLIENT_HANDLERS``: wire method -> the handler method names to
  look for, and whether it is a notification (the dispatcher's table).
* ``AgentSideConnection`` / ``ClientSideConnection``: the public classes, each the peer
  methods over the hand-written base (``sides.ts``) that runs the connection.

Names follow the official TypeScript SDK: ``newSession`` from ``NewSessionRequest``;
unstable methods carry its ``unstable_`` prefix (``unstable_forkSession``); a handler may
use either name.
"""

from __future__ import annotations

import json
import textwrap

import acp_schema as ir
from text import METHOD_TABLES, baseline_list, jsdoc

HANDLE_RESULTS = {"CreateTerminalResponse": ("TerminalHandle", "_createTerminal")}

SIDE_DOCS = {
    "agent": "What an agent implements. {baseline} are required (the protocol's baseline); every "
    "other request answers -32601 (method not found) unless implemented, and other notifications "
    "are ignored. Params that do not fit the schema never reach these methods (the client gets "
    "-32602). Requests run concurrently; notifications one at a time, in arrival order (a returned "
    "promise is awaited before the next).",
    "client": "What a client implements; advertise in your capabilities only what you implement. "
    "{baseline} are required (the protocol's baseline); every other request answers -32601 unless "
    "implemented, and other notifications are ignored. Notifications are handled one at a time, "
    "in arrival order.",
}
CLASS_DOCS = {
    "agent": "An agent's connection to its client: serves the `Agent` that `toAgent` makes and "
    "offers every client method.",
    "client": "A client's connection to its agent: serves the `Client` that `toClient` makes and "
    "offers every agent method. `cancel` also answers the session's open permission requests "
    "`cancelled` (the engine does, as the protocol requires) and aborts their handlers' signals.",
}


def camel_name(m: ir.Method) -> str:
    """The official SDK's name: ``unstable_`` + camel case for unstable methods."""
    return f"unstable_{m.camel}" if m.unstable else m.camel


def other_name(m: ir.Method) -> str:
    """The other name a handler may use for the same method."""
    return m.camel if m.unstable else f"unstable_{m.camel}"


def may_be_empty(schema: ir.Schema, name: str) -> bool:
    """A result with no required property: a handler may return nothing (it answers `{}`)."""
    d = schema.definitions.get(name)
    return isinstance(d, ir.Struct) and d.union is None and not any(f.required for f in d.fields)


def optional_params(schema: ir.Schema, name: str) -> bool:
    d = schema.definitions.get(name)
    return isinstance(d, ir.Struct) and d.union is None and not any(f.required for f in d.fields)


def lower_camel(word: str) -> str:
    head, *rest = word.split("_")
    return head + "".join(part.capitalize() for part in rest)


def nest(tree: dict, path: list[str], value: str) -> None:
    for part in path[:-1]:
        tree = tree.setdefault(part, {})
    tree[path[-1]] = value


def emit_tree(tree: dict, indent: str) -> list[str]:
    lines: list[str] = []
    for key, value in tree.items():
        name = key if key.isidentifier() else json.dumps(key)
        if isinstance(value, dict):
            lines += [f"{indent}{name}: {{", *emit_tree(value, indent + "  "), f"{indent}}},"]
        else:
            lines.append(f"{indent}{name}: {json.dumps(value)},")
    return lines


def app_tables(schema: ir.Schema) -> list[str]:
    """The app API's tables (the official SDK 2.x's ``methods``): wire names nested by their
    path (``session/set_mode`` -> ``methods.agent.session.setMode``), and per side the params
    and result type of each method, which the app's handler types are derived from."""
    tree: dict = {}
    for m in schema.methods:
        if m.side not in ("agent", "client", "protocol"):
            continue
        path = [lower_camel(part) for part in m.name.removeprefix("$/").split("/")]
        nest(tree, [m.side, *path], m.name)
    out = ["", *jsdoc("ACP method names by side and path, as the official SDK 2.x's `methods`."), "export const methods = {"]
    out += emit_tree(tree, "  ")
    out.append("} as const;")
    empty = sorted(m.name for m in schema.methods if m.result is not None and may_be_empty(schema, m.result))
    out += [
        "",
        *jsdoc("Requests whose result has no required property: a `null` or missing result reads as `{}`."),
        "export const EMPTY_RESULT_METHODS: ReadonlySet<string> = new Set([",
        *[f"  {json.dumps(name)}," for name in empty],
        "]);",
    ]
    for side in ("agent", "client"):
        for notification in (False, True):
            kind = "Notifications" if notification else "Requests"
            handled = [m for m in schema.methods if m.side == side and m.notification == notification]
            out += ["", *jsdoc(f"The {kind.lower()} the {side} handles: wire name -> params" + ("" if notification else " and result") + " types."), f"export type {side.capitalize()}{kind} = {{"]
            for m in handled:
                if notification:
                    out.append(f"  {json.dumps(m.name)}: {{ params: schema.{m.params} }};")
                else:
                    void = " | void" if may_be_empty(schema, m.result) else ""
                    out.append(f"  {json.dumps(m.name)}: {{ params: schema.{m.params}; result: schema.{m.result}; handlerResult: schema.{m.result}{void} }};")
            out.append("};")
    return out


def generate(schema: ir.Schema, schema_rel: str, generator: str, up: str, class_api: bool = True) -> str:
    """``up``: the path from the module to ``node/src`` (``..`` or ``../..``). ``class_api``: the
    1.x class API too (the `Agent` and `Client` interfaces and the connection classes)."""
    out: list[str] = [
        "// The ACP method table: the method constants, "
        + ("the `Agent` and `Client` interfaces, the" if class_api else "the dispatcher's tables and the app API."),
        *(["// dispatcher's tables and the typed connection classes with every peer method."] if class_api else []),
        f"// @generated by {generator} from {schema_rel}.",
        "// Do not edit by hand: change the schema or the generator, then run `make codegen`.",
        "",
        f'import type {{ MessageStream, Stream }} from "{up}/streams.js";',
        *([f'import {{ AgentSide, ClientSide, type HandlerTable, type MaybePromise, type RequestContext }} from "{up}/sides.js";',
           f'import type {{ RequestError }} from "{up}/errors.js";']
          if class_api else [f'import type {{ HandlerTable, MaybePromise }} from "{up}/sides.js";']),
        *([f'import type {{ TerminalHandle }} from "{up}/terminal.js";']
          if class_api and any(m.result in HANDLE_RESULTS for m in schema.methods) else []),
        f'import {{ AgentAppBase, ClientAppBase, type HandlerContext, type RequestHandlerContext }} from "{up}/app/app.js";',
        "import {",
        "  AgentConnection as AgentConnectionOf,",
        "  AgentContext as AgentContextOf,",
        "  ClientConnection as ClientConnectionOf,",
        "  ClientContext as ClientContextOf,",
        f'}} from "{up}/app/context.js";',
        (f'import {{ ActiveSessionV2 as ActiveSessionOf }} from "{up}/app/session-v2.js";' if schema.protocol_version >= 2
         else f'import {{ ActiveSession as ActiveSessionOf }} from "{up}/app/session.js";'),
        f'import {{ SessionBuilder as SessionBuilderOf }} from "{up}/app/session.js";',
        f'import type {{ InitializationSnapshot as InitializationSnapshotOf }} from "{up}/app/initialization.js";',
        f'import type {{ AppOptions, ParamsParser }} from "{up}/app/options.js";',
        f'import type {{ AppProtocol }} from "{up}/app/protocol.js";',
        'import type * as schema from "./schema.js";',
    ]
    for const, side, doc in METHOD_TABLES:
        entries = {m.key: m.name for m in schema.methods if m.side == side}
        if not entries:
            continue
        out += ["", *jsdoc(f"{doc}: key -> wire name."), f"export const {const} = Object.freeze({{"]
        out += [f"  {key}: {json.dumps(name)}," for key, name in entries.items()]
        out.append("} as const);")
    out += ["", "/** The protocol version these types describe. */", f"export const PROTOCOL_VERSION = {schema.protocol_version};"]
    out += app_tables(schema)

    for side in ("agent", "client"):
        handled = [m for m in schema.methods if m.side == side]
        if class_api:
            out += interface(schema, side, handled)
        out += [
            "",
            *jsdoc(f"Each {side} method (wire name): the `{side.capitalize()}` method names that handle it, and whether it is a notification."),
            f"export const {side.upper()}_HANDLERS: HandlerTable = new Map([",
        ]
        for m in handled:
            names = json.dumps([camel_name(m), other_name(m)])
            out.append(f"  [{json.dumps(m.name)}, {{ names: {names}, notification: {'true' if m.notification else 'false'} }}],")
        out.append("]);")
    if class_api:
        out += connection_classes(schema)
    out += app_classes(schema)
    return "\n".join(out) + "\n"


def interface(schema: ir.Schema, side: str, handled: list[ir.Method]) -> list[str]:
    """The class API's `Agent` or `Client`: a method per method the side handles."""
    iface = side.capitalize()
    baseline = baseline_list(handled, camel_name)
    out = ["", *jsdoc(textwrap.fill(SIDE_DOCS[side].format(baseline=baseline), 92)), f"export interface {iface} {{"]
    for m in handled:
        opt = "" if m.baseline else "?"
        name = camel_name(m)
        kind = "notification" if m.notification else "request"
        doc = f"{m.doc}\n\nHandles the `{m.name}` {kind}" + (
            "." if m.baseline else f" (also found as `{other_name(m)}`)."
        )
        out += jsdoc(doc, "  ")
        if m.notification:
            out.append(f"  {name}{opt}(params: schema.{m.params}): MaybePromise<void>;")
        else:
            result = f"schema.{m.result}" + (" | void" if may_be_empty(schema, m.result) else "")
            out.append(f"  {name}{opt}(params: schema.{m.params}, context: RequestContext): MaybePromise<{result}>;")
    return out + [
        "  /** A request for a method outside this side's table (a custom one, such as an `_`-prefixed extension), named as it came; unless implemented, -32601. */",
        "  extMethod?(method: string, params: Record<string, unknown>, context: RequestContext): MaybePromise<Record<string, unknown>>;",
        "  /** A notification for a method outside this side's table, named as it came; ignored unless implemented. */",
        "  extNotification?(method: string, params: Record<string, unknown>): MaybePromise<void>;",
        "  /** A notification from the peer whose params fail the schema was dropped (`error`: the -32602 saying what failed); without this, a process warning. */",
        "  onInvalidNotification?(method: string, error: RequestError): void;",
        "}",
    ]


def connection_classes(schema: ir.Schema) -> list[str]:
    """The class API's `AgentSideConnection` and `ClientSideConnection`: every peer method."""
    out: list[str] = []
    for side, peer, base in (("agent", "client", "AgentSide"), ("client", "agent", "ClientSide")):
        cls = f"{side.capitalize()}SideConnection"
        factory = "toAgent" if side == "agent" else "toClient"
        called = [m for m in schema.methods if m.side == peer]
        unstable = "true" if schema.stable is not None else "false"
        out += [
            "",
            *jsdoc(textwrap.fill(CLASS_DOCS[side], 92)),
            f"export class {cls} extends {base} {{",
            f"  constructor({factory}: (connection: {cls}) => {side.capitalize()}, stream: Stream | MessageStream) {{",
            f"    super({factory}, stream, {side.upper()}_HANDLERS, {unstable});",
            "  }",
        ]
        for m in called:
            name = camel_name(m)
            kind = "notification" if m.notification else "request"
            out += ["", *jsdoc(f"{m.doc}\n\nSends the `{m.name}` {kind}.", "  ")]
            params = f"params: schema.{m.params}" + (" = {}" if optional_params(schema, m.params) else "")
            if m.notification:
                out += [f"  {name}({params}): Promise<void> {{", f"    return this._notify({json.dumps(m.name)}, params);", "  }"]
            elif m.result in HANDLE_RESULTS:
                handle, wrapper = HANDLE_RESULTS[m.result]
                out += [f"  {name}({params}): Promise<{handle}> {{", f"    return this.{wrapper}({json.dumps(m.name)}, params);", "  }"]
            else:
                empty = ", true" if may_be_empty(schema, m.result) else ""
                out += [
                    f"  {name}({params}): Promise<schema.{m.result}> {{",
                    f"    return this._request({json.dumps(m.name)}, params{empty}) as Promise<schema.{m.result}>;",
                    "  }",
                ]
        out.append("}")
    return out


APP_DOCS = {
    "agent": "An agent app (the official SDK 2.x's `agent()`): handlers registered by ACP method "
    "name, served on the engine by `connect` / `connectWith`. With an `initialize` handler, other "
    "requests answer -32600 until `initialize` succeeded.",
    "client": "A client app (the official SDK 2.x's `client()`): handlers registered by ACP method "
    "name; `connectWith` runs a workflow with the agent's context (`request`, `buildSession`).",
}


def typed_app_classes(schema: ir.Schema) -> list[str]:
    """The app API's sessions, contexts and connections typed by this schema, as the official
    SDK's entry points type them (its classes are not generic: one set per version). The
    classes are written once (``app/``), over loose shapes; each is exported as a value (for
    ``instanceof``) and as its type here."""
    if schema.protocol_version >= 2:
        message = [
            '  | { kind: "session_update"; notification: schema.UpdateSessionNotification; update: schema.SessionUpdate }',
            '  | { kind: "stop"; notification: schema.UpdateSessionNotification; update: schema.SessionUpdate; '
            'stopReason: schema.IdleStateUpdate["stopReason"] };',
        ]
        message_doc = "an update, or the idle state update that ends the turn (`stop`)"
        own_types = [
            "  configOption: schema.SessionConfigOption;",
            "  backgroundWork: schema.BackgroundWork;",
            "  permissionRequest: schema.RequestPermissionRequest;",
            "  setConfigOptionRequest: ActiveSessionSetConfigOptionRequest;",
            "  setConfigOptionResponse: schema.SetSessionConfigOptionResponse;",
            "  cancelToolCallResponse: schema.CancelToolCallResponse;",
            "  cancelTerminalResponse: schema.CancelTerminalResponse;",
        ]
    else:
        message = [
            '  | { kind: "session_update"; notification: schema.SessionNotification; update: schema.SessionUpdate }',
            '  | { kind: "stop"; response: schema.PromptResponse; stopReason: schema.StopReason };',
        ]
        message_doc = "an update, or the prompt's response that ends the turn (`stop`)"
        own_types = ["  modes: schema.SessionModeState;"]
    session_types = [
        "  contentBlock: schema.ContentBlock;",
        "  newSessionResponse: schema.NewSessionResponse;",
        "  promptResponse: schema.PromptResponse;",
        "  message: ActiveSessionMessage;",
        *own_types,
    ]
    typed = [
        ("ActiveSession", "ActiveSessionOf<{\n" + "\n".join(session_types) + "\n}>",
         "A session's prompts and its updates, in arrival order."),
        ("SessionBuilder", "SessionBuilderOf<schema.NewSessionRequest, ActiveSession>",
         "Builds a session's `session/new` request, then starts it."),
        ("AgentContext", "AgentContextOf<ClientRequests, ClientNotifications, InitializationSnapshot>",
         "An agent's way to call its client: `client` in handlers, `onConnect`, `connectWith`."),
        ("ClientContext",
         "ClientContextOf<AgentRequests, AgentNotifications, ActiveSession, schema.NewSessionRequest, InitializationSnapshot>",
         "A client's way to call its agent: `agent` in handlers, `connectWith`."),
        ("AgentConnection", "AgentConnectionOf<ClientRequests, ClientNotifications, InitializationSnapshot>",
         "An agent app's open connection: `client` calls the client."),
        ("ClientConnection",
         "ClientConnectionOf<AgentRequests, AgentNotifications, ActiveSession, schema.NewSessionRequest, InitializationSnapshot>",
         "A client app's open connection: `agent` calls the agent."),
    ]
    out = [
        "",
        "/** The request and the response of the connection's last successful `initialize` (`initialized`). */",
        "export type InitializationSnapshot = InitializationSnapshotOf<schema.InitializeRequest, schema.InitializeResponse>;",
        "",
        f"/** What `ActiveSession.nextUpdate` yields: {message_doc}. */",
        "export type ActiveSessionMessage =",
        *message,
    ]
    for name, type_, doc in typed:
        out += ["", f"/** {doc} */", f"export type {name} = {type_};", f"export const {name} = {name}Of;"]
    return out


def app_classes(schema: ir.Schema) -> list[str]:
    """``AgentApp`` / ``ClientApp`` over the hand-written bases (``app/app.ts``), typed by the
    generated request / notification maps."""
    unstable = "true" if schema.stable is not None else "false"
    out = [
        "",
        "const APP_PROTOCOL: AppProtocol = {",
        f"  unstable: {unstable},",
        f"  protocolVersion: {schema.protocol_version},",
        "  methods,",
        "  emptyResults: EMPTY_RESULT_METHODS,",
        "  idempotentMethods: new Set([methods.agent.session.close, methods.agent.session.delete]),",
        "  initializeMethod: methods.agent.initialize,",
        "  agentHandlers: AGENT_HANDLERS,",
        "  clientHandlers: CLIENT_HANDLERS,",
        "};",
    ]
    out += typed_app_classes(schema)
    for side, peer in (("agent", "client"), ("client", "agent")):
        S, P = side.capitalize(), peer.capitalize()
        ctx, conn = f"{S}Context", f"{S}Connection"
        out += [
            "",
            f"/** What an {side} request handler gets: `method`, `params`, `requestId`, `signal`, and `{peer}` to call the {peer}. */",
            f"export type {S}RequestContext<Params> = RequestHandlerContext<Params> & {{ {peer}: {ctx} }};",
            f"/** What an {side} notification handler gets. */",
            f"export type {S}NotificationContext<Params> = HandlerContext<Params> & {{ {peer}: {ctx} }};",
            f"export type {S}RequestHandler<Params, Response> = (context: {S}RequestContext<Params>) => MaybePromise<Response>;",
            f"export type {S}NotificationHandler<Params> = (context: {S}NotificationContext<Params>) => MaybePromise<void>;",
            f"export type {S}RequestMethod = keyof {S}Requests & string;",
            f"export type {S}NotificationMethod = keyof {S}Notifications & string;",
            f"export type {S}ConnectHandler = (connection: {conn}) => MaybePromise<void>;",
            "/** The official SDK's names: the context every handler gets, and what each method takes. */",
            f"export type {S}HandlerContext<Params> = {S}NotificationContext<Params>;",
            f"export type {S}RequestHandlersByMethod = {{",
            f'  [Method in {S}RequestMethod]: {S}RequestHandler<{S}Requests[Method]["params"], {S}Requests[Method]["handlerResult"]>;',
            "};",
            f"export type {S}NotificationHandlersByMethod = {{",
            f'  [Method in {S}NotificationMethod]: {S}NotificationHandler<{S}Notifications[Method]["params"]>;',
            "};",
            f'export type {S}RequestParamsByMethod = {{ [Method in {S}RequestMethod]: {S}Requests[Method]["params"] }};',
            f'export type {S}RequestResponsesByMethod = {{ [Method in {S}RequestMethod]: {S}Requests[Method]["result"] }};',
            f'export type {S}NotificationParamsByMethod = {{ [Method in {S}NotificationMethod]: {S}Notifications[Method]["params"] }};',
            "",
            *jsdoc(textwrap.fill(APP_DOCS[side], 92)),
            f"export class {S}App extends {S}AppBase<{P}App> {{",
            "  constructor(options?: AppOptions) {",
            "    super(APP_PROTOCOL, options);",
            "  }",
            "",
            f"  /** Serves this app on `target`: a stream, or a {peer} app (in memory). */",
            f"  connect(target: Stream | MessageStream | {P}App): {conn} {{",
            f"    return this.connectTo(target) as {conn};",
            "  }",
            "",
            "  /** Connects for the lifetime of `op`, then closes; rejects if the connection closes first. */",
            f"  connectWith<T>(target: Stream | MessageStream | {P}App, op: ({peer}: {ctx}) => MaybePromise<T>): Promise<T> {{",
            "    return this.runWith(target, op);",
            "  }",
            "",
            "  /** Runs on each connection before its first message is handled; a throw closes it. */",
            f"  onConnect(handler: {S}ConnectHandler): this {{",
            "    this.connectHandlers.push(handler as never);",
            "    return this;",
            "  }",
            "",
            "  /** A request handler by ACP method name; custom methods take a params parser; `*`: the fallback. */",
            f'  onRequest(method: "*", handler: {S}RequestHandler<unknown, unknown>): this;',
            f'  onRequest<Method extends {S}RequestMethod>(method: Method, handler: {S}RequestHandler<{S}Requests[Method]["params"], {S}Requests[Method]["handlerResult"]>): this;',
            f"  onRequest<Params, Response>(method: string, params: ParamsParser<Params>, handler: {S}RequestHandler<Params, Response>): this;",
            "  onRequest(method: string, parserOrHandler: unknown, handler?: unknown): this {",
            '    return this.register("request", method, parserOrHandler, handler);',
            "  }",
            "",
            "  /** A notification handler; handlers start in arrival order without waiting for each other. */",
            f'  onNotification(method: "*", handler: {S}NotificationHandler<unknown>): this;',
            f'  onNotification<Method extends {S}NotificationMethod>(method: Method, handler: {S}NotificationHandler<{S}Notifications[Method]["params"]>): this;',
            f"  onNotification<Params>(method: string, params: ParamsParser<Params>, handler: {S}NotificationHandler<Params>): this;",
            "  onNotification(method: string, parserOrHandler: unknown, handler?: unknown): this {",
            '    return this.register("notification", method, parserOrHandler, handler);',
            "  }",
            "}",
            "",
            f"/** Creates an {side} app. */",
            f"export function {side}(options?: AppOptions): {S}App {{",
            f"  return new {S}App(options);",
            "}",
        ]
    if schema.protocol_version >= 2:
        out += [
            "",
            "/** A custom method's name (the official SDK's v2 type): `_`-prefixed. */",
            "export type ExtensionMethod = `_${string}`;",
            "/** A method name outside this draft's tables (the official SDK's v2 type, for the untyped calls). */",
            "export type UnrecognizedMethod<Method extends string> = string extends Method",
            "  ? Method",
            "  : Method extends AgentRequestMethod | AgentNotificationMethod | ClientRequestMethod | ClientNotificationMethod",
            "      | (typeof PROTOCOL_METHODS)[keyof typeof PROTOCOL_METHODS]",
            "    ? never",
            "    : Method;",
            "/** `ActiveSession.setConfigOption`'s request: `session/set_config_option`'s params but the session id. */",
            "export type ActiveSessionSetConfigOptionRequest = schema.SetSessionConfigOptionRequest extends infer Request",
            '  ? Request extends unknown ? Omit<Request, "sessionId"> : never',
            "  : never;",
        ]
    return out

