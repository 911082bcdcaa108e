// The project's own interface between an HTTP client and whoever reads its response: the lean client
// (lib/lean-http/client.ts) calls it directly, undici through a small adapter (relay/transport/undici.ts). One request
// gets onStart first, then either onHeaders, onData… and onEnd, or onError (at any point; nothing follows it).

/** One outgoing request: a body in hand, the two timeouts of undici's Dispatcher. */
export interface OutgoingRequest {
  /** scheme://host[:port] */
  origin: string;
  /** path and query */
  path: string;
  method: string;
  headers: Record<string, string>;
  body: Buffer | string | null;
  /** ms from the request's write to the end of the response head */
  headersTimeout: number;
  /** ms allowed between two body chunks */
  bodyTimeout: number;
}

export interface ResponseSink {
  /** the request is under way; abort() ends it at any point (onError follows unless the response already ended) */
  onStart(abort: (err?: Error) => void): void;
  /** the final response head (1xx heads are skipped): name, value, name, value…; resume() undoes a pause */
  onHeaders(status: number, rawHeaders: Buffer[], resume: () => void): void;
  /** a piece of the body; false pauses the reading until resume() */
  onData(chunk: Buffer): boolean;
  /** the body is complete */
  onEnd(): void;
  onError(err: Error): void;
}
