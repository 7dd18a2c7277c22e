// Connection: a bidirectional JSON-RPC 2.0 peer with no ACP schema checks.

import { Dispatcher, type RequestContext } from "./dispatcher.js";
import { Lifecycle } from "./lifecycle.js";
import { Side, type MessageStream, type Stream } from "./streams.js";

/** `requestHandler(method, params, context)`: its value (or promise) is the result;
 * a thrown RequestError is sent as it is, anything else as -32603. */
export type RequestHandler = (method: string, params: unknown, context: RequestContext) => unknown;
/** `notificationHandler(method, params)`: runs in arrival order; a returned
 * promise is awaited before the next notification. */
export type NotificationHandler = (method: string, params: unknown) => unknown;

/**
 * A bidirectional JSON-RPC 2.0 connection with no ACP schema checks: requests
 * go to `requestHandler` (concurrently), notifications to `notificationHandler`
 * (one at a time, in order).
 */
export class Connection extends Lifecycle {
  /** @internal */
  protected readonly dispatcher: Dispatcher;

  constructor(requestHandler: RequestHandler, notificationHandler: NotificationHandler, stream: Stream | MessageStream) {
    super();
    this.dispatcher = new Dispatcher(stream, Side.Raw, false, requestHandler, notificationHandler);
  }

  sendRequest<T = unknown>(method: string, params?: unknown): Promise<T> {
    return this.dispatcher.sendRequest(method, params) as Promise<T>;
  }

  /** Send a request and get its id too, e.g. for `cancelPendingRequest`. */
  sendRequestWithId<T = unknown>(method: string, params?: unknown): { id: number | undefined; promise: Promise<T> } {
    return this.dispatcher.sendRequestWithId(method, params) as { id: number | undefined; promise: Promise<T> };
  }

  sendNotification(method: string, params?: unknown): Promise<void> {
    return this.dispatcher.sendNotification(method, params);
  }

  /** Send `$/cancel_request` for `params.requestId` (or `params` itself), nothing else. */
  sendCancelRequestNotification(params: { requestId: number | string } | number | string): Promise<void> {
    return this.dispatcher.sendCancelRequestNotification(params);
  }

  /** Cancel our pending request `id`: its promise rejects with -32800, the peer
   * gets `$/cancel_request`, a late response is dropped. False if not pending. */
  cancelPendingRequest(id: number): boolean {
    return this.dispatcher.cancelPendingRequest(id);
  }
}
