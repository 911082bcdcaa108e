// Compression: the built console's files go out as their pre-compressed .br/.gz copies per Accept-Encoding (with
// Vary, the original's content type and the cache rules), console JSON above 1 kB is compressed when the caller
// asks, and the relay's answers, streamed or not, never are.
import http from 'node:http';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliCompressSync, brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, describeEachDb, type TestDatabase } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { MockUpstream, chatCompletion } from '../helpers/mock-upstream.js';
import { addChannel, addToken, addUser, channelsChanged, setOptions } from '../relay/fixtures.js';
import { setupAndLoginRoot } from '../console/fixtures.js';
import { negotiateEncoding } from '../../src/lib/compress-json.js';

interface RawAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** the bytes as sent, not decoded */
  raw: Buffer;
}

/** A request whose Accept-Encoding is exactly `acceptEncoding` (fetch would add its own and decode the answer). */
function rawRequest(
  base: string,
  path: string,
  acceptEncoding: string | null,
  opts: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<RawAnswer> {
  const headers: Record<string, string> = { ...opts.headers };
  if (acceptEncoding !== null) headers['accept-encoding'] = acceptEncoding;
  return new Promise((resolve, reject) => {
    const req = http.request(base + path, { method: opts.method ?? 'GET', headers }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, raw: Buffer.concat(parts) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

function decoded(a: RawAnswer): string {
  const enc = a.headers['content-encoding'];
  if (enc === 'br') return brotliDecompressSync(a.raw).toString('utf8');
  if (enc === 'gzip') return gunzipSync(a.raw).toString('utf8');
  expect(enc).toBeUndefined();
  return a.raw.toString('utf8');
}

const varyFields = (a: RawAnswer) =>
  String(a.headers.vary ?? '')
    .toLowerCase()
    .split(',')
    .map((s) => s.trim());

describe('Accept-Encoding negotiation', () => {
  it('prefers brotli on a tie, honours q values, q=0 and *', () => {
    const offered = ['br', 'gzip'] as const;
    expect(negotiateEncoding('gzip, deflate, br', offered)).toBe('br');
    expect(negotiateEncoding('gzip', offered)).toBe('gzip');
    expect(negotiateEncoding('br;q=0.5, gzip', offered)).toBe('gzip');
    expect(negotiateEncoding('br;q=0, *', offered)).toBe('gzip');
    expect(negotiateEncoding('identity', offered)).toBeUndefined();
    expect(negotiateEncoding('*;q=0', offered)).toBeUndefined();
    expect(negotiateEncoding(undefined, offered)).toBeUndefined();
  });
});

describe('serving the pre-compressed console', () => {
  const script = `console.log(${JSON.stringify('x'.repeat(50))});\n`.repeat(200);
  const html = `<!doctype html><html><head><title>console</title></head><body>${'<p>hi</p>'.repeat(200)}</body></html>`;
  const dist = mkdtempSync(join(tmpdir(), 'gw-web-br-'));
  mkdirSync(join(dist, 'assets'));
  for (const [name, text] of [
    ['index.html', html],
    ['assets/app-Ab12.js', script],
  ]) {
    writeFileSync(join(dist, name), text);
    writeFileSync(join(dist, `${name}.br`), brotliCompressSync(text));
    writeFileSync(join(dist, `${name}.gz`), gzipSync(text));
  }
  // a file the build left uncompressed is served plain, whatever the caller accepts
  writeFileSync(join(dist, 'logo.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');

  let database: TestDatabase;
  let server: TestServer;
  beforeAll(async () => {
    database = await createTestDatabase('sqlite');
    server = await startTestServer({ database, env: { WEB_DIST_DIR: dist } });
  });
  afterAll(async () => {
    await server.close();
    await database.drop();
  });

  it('serves a hashed asset as br, gzip or identity per Accept-Encoding, cached for a year', async () => {
    for (const [accept, expected] of [
      ['gzip, deflate, br', 'br'],
      ['gzip', 'gzip'],
      ['br;q=0, gzip;q=0.8', 'gzip'],
      [null, undefined],
      ['identity', undefined],
    ] as const) {
      const a = await rawRequest(server.url, '/assets/app-Ab12.js', accept);
      expect(a.status).toBe(200);
      expect(a.headers['content-encoding'], String(accept)).toBe(expected);
      expect(a.headers['content-type']).toMatch(/^(application|text)\/javascript/);
      expect(varyFields(a)).toContain('accept-encoding');
      expect(a.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      expect(decoded(a)).toBe(script);
      if (expected) expect(a.raw.length).toBeLessThan(script.length / 5);
    }
  });

  it('serves index.html compressed for console routes, never cached without revalidation', async () => {
    for (const path of ['/', '/token', '/channel?x=1']) {
      const a = await rawRequest(server.url, path, 'gzip, br');
      expect(a.status).toBe(200);
      expect(a.headers['content-encoding']).toBe('br');
      expect(a.headers['content-type']).toMatch(/^text\/html/);
      expect(a.headers['cache-control']).toBe('no-cache');
      expect(varyFields(a)).toContain('accept-encoding');
      expect(decoded(a)).toBe(html);
    }
    const gz = await rawRequest(server.url, '/token', 'gzip');
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(decoded(gz)).toBe(html);
  });

  it('falls back to the plain file when no copy exists, and does not expose the copies by their own names', async () => {
    const svg = await rawRequest(server.url, '/logo.svg', 'br, gzip');
    expect(svg.status).toBe(200);
    expect(svg.headers['content-encoding']).toBeUndefined();
    expect(svg.headers['content-type']).toMatch(/^image\/svg\+xml/);
    expect(svg.headers['cache-control']).toBe('max-age=604800');
    expect(svg.raw.toString()).toContain('<svg');
    expect((await rawRequest(server.url, '/assets/app-Ab12.js.br', 'br')).status).toBe(404);
  });
});

await describeEachDb('compression of console JSON and the relay', (kind) => {
  let server: TestServer;
  let up: MockUpstream;
  let cookie: string;
  let rootId: number;
  let key: string;
  const longAnswer = 'lorem ipsum dolor sit amet '.repeat(200);

  beforeAll(async () => {
    server = await startTestServer({ kind });
    const root = await setupAndLoginRoot(server);
    cookie = root.cookie;
    rootId = root.userId!;
    up = await MockUpstream.start();
    await setOptions(server, { ModelRatio: { 'mock-chat': 1 } });
    await addChannel(server, { baseUrl: up.url, models: ['mock-chat'] });
    await channelsChanged(server);
    const u = await addUser(server);
    key = (await addToken(server, u.id, { unlimited: true })).key;
  });
  afterAll(async () => {
    await server?.close();
    await up?.close();
  });

  const rootHeaders = () => ({ cookie, 'New-Api-User': String(rootId) });

  it('compresses a JSON answer above 1 kB when asked, with Vary, and not when not asked', async () => {
    const plain = await rawRequest(server.url, '/api/option/', null, { headers: rootHeaders() });
    expect(plain.status).toBe(200);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(varyFields(plain)).toContain('accept-encoding');
    const body = JSON.parse(decoded(plain));
    expect(body.success).toBe(true);
    expect(plain.raw.length).toBeGreaterThan(1024);

    const gz = await rawRequest(server.url, '/api/option/', 'gzip', { headers: rootHeaders() });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gz.headers['content-type']).toMatch(/^application\/json/);
    expect(varyFields(gz)).toContain('accept-encoding');
    expect(JSON.parse(decoded(gz))).toEqual(body);
    expect(gz.raw.length).toBeLessThan(plain.raw.length / 2);
    expect(Number(gz.headers['content-length'] ?? gz.raw.length)).toBe(gz.raw.length);

    const br = await rawRequest(server.url, '/api/option/', 'gzip, deflate, br', { headers: rootHeaders() });
    expect(br.headers['content-encoding']).toBe('br');
    expect(JSON.parse(decoded(br))).toEqual(body);
  });

  it('leaves a JSON answer below 1 kB alone', async () => {
    const small = await rawRequest(server.url, '/api/setup', 'gzip, br');
    expect(small.status).toBe(200);
    expect(small.raw.length).toBeLessThan(1024);
    expect(small.headers['content-encoding']).toBeUndefined();
    expect(JSON.parse(small.raw.toString()).success).toBe(true);
  });

  it('never compresses relay answers, whole or streamed (SSE)', async () => {
    up.behave = (req) =>
      req.body?.stream
        ? { kind: 'stream', spec: { pieces: Array.from({ length: 40 }, () => longAnswer.slice(0, 200)) } }
        : { kind: 'json', body: chatCompletion('mock-chat', longAnswer) };
    const headers = { authorization: `Bearer sk-${key}`, 'content-type': 'application/json' };
    const whole = await rawRequest(server.url, '/v1/chat/completions', 'gzip, deflate, br', {
      method: 'POST',
      headers,
      body: JSON.stringify({ model: 'mock-chat', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(whole.status, whole.raw.toString()).toBe(200);
    expect(whole.raw.length).toBeGreaterThan(1024);
    expect(whole.headers['content-encoding']).toBeUndefined();
    expect(JSON.parse(whole.raw.toString()).choices[0].message.content).toBe(longAnswer);

    const stream = await rawRequest(server.url, '/v1/chat/completions', 'gzip, deflate, br', {
      method: 'POST',
      headers,
      body: JSON.stringify({ model: 'mock-chat', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(stream.status).toBe(200);
    expect(stream.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(stream.headers['content-encoding']).toBeUndefined();
    const text = stream.raw.toString();
    expect(text.startsWith('data: ')).toBe(true);
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
  });
});
