// A strict mock of an OpenAI-compatible vendor on 127.0.0.1: it serves only the vendor's own paths, refuses a request
// without the vendor's exact headers as the vendor does (401 with its error body), checks chat bodies by OpenAI's rules
// and answers with the vendor's recorded wire format (relay/providers/<vendor>/__fixtures__/: answer.json, stream.sse,
// error.json). A request for the model `fail-model` gets the recorded error with its recorded status.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { checkOpenAIChatBody } from './mock-openai-rules.js';

/** What one path of the vendor answers: a chat completion (recorded), or a fixed JSON / SSE body of its own. */
export type VendorRoute =
  { kind: 'chat' } | { kind: 'json'; answer: unknown; stream?: string } | { kind: 'recorded-json' };

export interface VendorMockSpec {
  /** the provider's folder under relay/providers/ (its recorded fixtures) */
  provider: string;
  /** path (without query) → what it answers; any other path is a 404 */
  routes: Record<string, VendorRoute>;
  /** headers every request must carry with exactly these values (lower-case names) */
  headers: Record<string, string>;
  /** the vendor's own refusal of a body the OpenAI rules accept (Zhipu: top_p of 1); null when it accepts it */
  refuse?(body: any): string | null;
}

export interface SeenRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: any;
}

const fixtures = (provider: string, file: string) =>
  readFileSync(new URL(`../../src/relay/providers/${provider}/__fixtures__/${file}`, import.meta.url), 'utf8');

export class MockCompatibleVendor {
  readonly requests: SeenRequest[] = [];
  /** requests refused for their path or headers (never answered with a success) */
  readonly refused: SeenRequest[] = [];
  private constructor(
    private readonly server: http.Server,
    readonly url: string,
  ) {}

  static async start(spec: VendorMockSpec): Promise<MockCompatibleVendor> {
    const conformance = JSON.parse(fixtures(spec.provider, 'conformance.json')).cases[0];
    let mock: MockCompatibleVendor | null = null;
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
        const path = (req.url ?? '/').split('?')[0];
        const seen: SeenRequest = { method: req.method ?? '', path, headers: req.headers, body };
        const send = (status: number, payload: unknown, type = 'application/json') => {
          res.writeHead(status, { 'content-type': type });
          res.end(typeof payload === 'string' ? payload : JSON.stringify(payload));
        };
        const route = spec.routes[path];
        if (!route || req.method !== 'POST') {
          mock!.refused.push(seen);
          return send(404, { error: { message: `no route ${req.method} ${path}`, type: 'invalid_request_error' } });
        }
        for (const [name, value] of Object.entries(spec.headers)) {
          if (req.headers[name] !== value) {
            mock!.refused.push(seen);
            return send(401, { error: { message: `header ${name} missing or wrong`, type: 'authentication_error' } });
          }
        }
        mock!.requests.push(seen);
        if (!body || typeof body !== 'object') return send(400, { error: { message: 'body is not JSON' } });
        if (body.model === 'fail-model') return send(conformance.error.status, fixtures(spec.provider, 'error.json'));
        if (route.kind === 'chat') {
          const problem = checkOpenAIChatBody(body) ?? spec.refuse?.(body) ?? null;
          if (problem) return send(400, { error: { message: problem, type: 'invalid_request_error' } });
          if (body.stream) return send(200, fixtures(spec.provider, 'stream.sse'), 'text/event-stream');
          return send(200, fixtures(spec.provider, 'answer.json'));
        }
        if (route.kind === 'recorded-json') return send(200, fixtures(spec.provider, 'answer.json'));
        if (body.stream && route.stream) return send(200, route.stream, 'text/event-stream');
        return send(200, route.answer);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    mock = new MockCompatibleVendor(server, `http://127.0.0.1:${port}`);
    return mock;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** The recorded fixtures' expectations of a provider (conformance.json's first case). */
export function recordedCase(provider: string): any {
  return JSON.parse(fixtures(provider, 'conformance.json')).cases[0];
}
