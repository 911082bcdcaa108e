// A strict Gemini API for Veo on 127.0.0.1: every call needs `x-goog-api-key` of the key given (and no Authorization);
// `POST /v1beta/models/{model}:predictLongRunning` takes {instances: [{prompt}], parameters} with Veo's parameters
// only and answers an operation `models/{model}/operations/op-N`; `GET /v1beta/{operation}` answers the state the test
// scripted (a status code other than 200 answers Google's error object).
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface VeoCall {
  method: string;
  path: string;
  key: string | undefined;
  body: any;
}

export interface VeoState {
  done?: boolean;
  error?: string;
  uri?: string;
  filtered?: string;
  http?: number;
}

export interface VeoMock {
  url: string;
  calls: VeoCall[];
  states: Map<string, VeoState>;
  close(): Promise<void>;
}

const PARAMETERS = new Set(['aspectRatio', 'durationSeconds', 'negativePrompt', 'personGeneration', 'resolution']);

export async function startVeoMock(key: string): Promise<VeoMock> {
  let n = 0;
  const operations = new Set<string>();
  const mock: VeoMock = { url: '', calls: [], states: new Map(), close: async () => undefined };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const send = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      const fail = (status: number, message: string) =>
        send(status, { error: { code: status, message, status: 'INVALID_ARGUMENT' } });
      const path = (req.url ?? '').split('?')[0];
      const call: VeoCall = {
        method: req.method ?? '',
        path,
        key: req.headers['x-goog-api-key'] as string,
        body: null,
      };
      mock.calls.push(call);
      if (req.headers['x-goog-api-key'] !== key || req.headers.authorization)
        return fail(403, 'API key not valid. Please pass a valid API key.');
      const submit = /^\/v1beta\/models\/([^/:]+):predictLongRunning$/.exec(path);
      if (req.method === 'POST' && submit) {
        let body: any;
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        } catch {
          return fail(400, 'Invalid JSON payload');
        }
        call.body = body;
        if (Object.keys(body).sort().join() !== 'instances,parameters') return fail(400, 'Unknown top-level field');
        if (
          !Array.isArray(body.instances) ||
          body.instances.length !== 1 ||
          typeof body.instances[0].prompt !== 'string'
        )
          return fail(400, 'instances[0].prompt is required');
        const unknown = Object.keys(body.parameters ?? {}).filter((k) => !PARAMETERS.has(k));
        if (unknown.length) return fail(400, `Invalid JSON payload received. Unknown name "${unknown[0]}"`);
        if (![4, 5, 6, 8].includes(body.parameters.durationSeconds)) return fail(400, 'durationSeconds out of range');
        const name = `models/${submit[1]}/operations/op-${++n}`;
        operations.add(name);
        return send(200, { name });
      }
      const op = /^\/v1beta\/(models\/[^/]+\/operations\/[^/]+)$/.exec(path);
      if (req.method === 'GET' && op) {
        const name = op[1];
        if (!operations.has(name)) return fail(404, 'operation not found');
        const st = mock.states.get(name) ?? {};
        if (st.http && st.http !== 200) return fail(st.http, 'Resource has been exhausted');
        if (st.error) return send(200, { name, done: true, error: { code: 3, message: st.error } });
        if (!st.done) return send(200, { name });
        const response = st.uri
          ? { generateVideoResponse: { generatedSamples: [{ video: { uri: st.uri } }] } }
          : {
              generateVideoResponse: { raiMediaFilteredCount: 1, raiMediaFilteredReasons: [st.filtered ?? 'filtered'] },
            };
        return send(200, {
          name,
          done: true,
          response: { '@type': 'type.googleapis.com/PredictLongRunningResponse', ...response },
        });
      }
      fail(404, `no route ${req.method} ${path}`);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  mock.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  mock.close = () => new Promise<void>((r) => server.close(() => r()));
  return mock;
}
