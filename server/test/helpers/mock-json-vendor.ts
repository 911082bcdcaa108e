// A strict mock of a vendor with its own JSON API on 127.0.0.1 (Cohere, MiniMax, Dify, Coze, PaLM): it serves only the
// vendor's paths, refuses a request without the vendor's auth header as the vendor does (its status and error body),
// and hands every other request to the path's handler, which checks the body by the vendor's rules and answers in the
// vendor's wire format (often its recorded fixtures: relay/providers/<vendor>/__fixtures__/).
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface MockAnswer {
  status: number;
  body: string | Record<string, unknown>;
  contentType?: string;
}

export interface SeenRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: http.IncomingHttpHeaders;
  body: any;
}

export interface JsonVendorSpec {
  /** path (without query) → the answer to a request that passed the auth check */
  routes: Record<string, (req: SeenRequest) => MockAnswer>;
  /** the vendor's auth check: null when the request may pass, else the vendor's refusal */
  auth(req: SeenRequest): MockAnswer | null;
  /** the method the routes take (POST unless said) */
  method?: string;
}

/** A recorded fixture of a provider, as text. */
export const fixture = (provider: string, file: string) =>
  readFileSync(new URL(`../../src/relay/providers/${provider}/__fixtures__/${file}`, import.meta.url), 'utf8');

export class MockJsonVendor {
  readonly requests: SeenRequest[] = [];
  readonly refused: SeenRequest[] = [];
  private constructor(
    private readonly server: http.Server,
    readonly url: string,
  ) {}

  static async start(spec: JsonVendorSpec): Promise<MockJsonVendor> {
    let mock: MockJsonVendor | null = null;
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        let body: any = null;
        try {
          body = raw ? JSON.parse(raw) : null;
        } catch {
          body = raw;
        }
        const url = new URL(req.url ?? '/', 'http://mock');
        const seen: SeenRequest = {
          method: req.method ?? '',
          path: url.pathname,
          query: url.searchParams,
          headers: req.headers,
          body,
        };
        const send = (a: MockAnswer) => {
          res.writeHead(a.status, { 'content-type': a.contentType ?? 'application/json' });
          res.end(typeof a.body === 'string' ? a.body : JSON.stringify(a.body));
        };
        const route = spec.routes[url.pathname];
        if (!route || req.method !== (spec.method ?? 'POST')) {
          mock!.refused.push(seen);
          return send({ status: 404, body: { message: `no route ${req.method} ${url.pathname}` } });
        }
        const refusal = spec.auth(seen);
        if (refusal) {
          mock!.refused.push(seen);
          return send(refusal);
        }
        mock!.requests.push(seen);
        send(route(seen));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    mock = new MockJsonVendor(server, `http://127.0.0.1:${port}`);
    return mock;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
