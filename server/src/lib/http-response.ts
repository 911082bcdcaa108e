// The answer side the relay writes to, whichever way the request came in: Node's ServerResponse satisfies it, and so
// does the lean HTTP front's LeanResponse (lib/lean-http/response.ts), so the relay names no particular server.

/** What the relay writes its answers to: Node's ServerResponse or a LeanResponse. */
export interface HttpResponse {
  readonly headersSent: boolean;
  readonly writableEnded: boolean;
  readonly writableFinished: boolean;
  readonly writableNeedDrain: boolean;
  readonly destroyed: boolean;
  setHeader(name: string, value: string): unknown;
  writeHead(status: number, headers: Record<string, string>): unknown;
  write(chunk: Buffer | string): boolean;
  end(chunk?: Buffer | string): unknown;
  destroy(error?: Error): unknown;
  once(event: 'close' | 'drain', listener: () => void): unknown;
  off(event: 'close' | 'drain', listener: () => void): unknown;
}

/** Waits for the client to take more of a streamed answer, or to leave (a closed answer never drains). */
export function drained(res: HttpResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.once('drain', done);
    res.once('close', done);
  });
}
