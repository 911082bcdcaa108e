// Remote images for providers that take images only inline (Gemini, Vertex AI, Bedrock): an http(s) image URL in a
// translated request is fetched with the SSRF-safe client and sent inline; a URL that names or resolves to a private
// address, redirects, is not an image or is too large is a 400 in the client's shape, and nothing goes upstream.
// Every listener is on 127.0.0.1; the image host's one port is declared public through the client's test-only policy
// (lib/safe-fetch.ts AddressPolicy), and names are resolved by a fake resolver, as the webhook tests do.
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { lookup } from 'node:dns/promises';
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { GEMINI_MOCK_KEY, MockGemini } from '../helpers/mock-gemini.js';
import { MockBedrock } from '../helpers/mock-bedrock.js';
import { addChannel, addToken, addUser, channelsChanged, client, relayPost, setOptions } from '../relay/fixtures.js';
import { SafeFetch, userUrlFetch, type Resolver } from '../../src/lib/safe-fetch.js';
import { FormatError } from '../../src/relay/formats/codec.js';
import { REMOTE_IMAGE_MAX_BYTES, remoteImageFetcher } from '../../src/relay/providers/media.js';

// a 1×1 transparent PNG
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);

/** A TCP listener that counts connections: a refused URL must reach it not even for a handshake. */
async function trap() {
  let connections = 0;
  const server = net.createServer((socket) => {
    connections += 1;
    socket.destroy();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    get connections() {
      return connections;
    },
    close: () => new Promise((r) => server.close(r)),
  };
}

/** The image host: a PNG, an HTML page, a redirect, and images over the size limit (declared, and streamed). */
async function imageHost() {
  const hits: string[] = [];
  const server = http.createServer((req, res) => {
    hits.push(req.url ?? '');
    if (req.url === '/cat.png') return res.writeHead(200, { 'content-type': 'image/png' }).end(PNG);
    if (req.url === '/page.html') return res.writeHead(200, { 'content-type': 'text/html' }).end('<html></html>');
    if (req.url === '/slow.png')
      return void setTimeout(() => res.writeHead(200, { 'content-type': 'image/png' }).end(PNG), 2000);
    if (req.url === '/moved.png') return res.writeHead(302, { location: '/cat.png' }).end();
    if (req.url === '/declared-big.png')
      return res
        .writeHead(200, { 'content-type': 'image/png', 'content-length': String(REMOTE_IMAGE_MAX_BYTES + 1) })
        .end();
    if (req.url === '/streamed-big.png') {
      // chunked, no length: the reader must stop at the limit
      res.writeHead(200, { 'content-type': 'image/png' });
      const chunk = Buffer.alloc(1024 * 1024, 7);
      let sent = 0;
      const more = () => {
        while (sent <= REMOTE_IMAGE_MAX_BYTES && !res.destroyed) {
          sent += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', more);
        }
        res.end();
      };
      return more();
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    hits,
    close: () => new Promise((r) => server.close(r)),
  };
}

const GEMINI_MODEL = 'gemini-2.0-flash';
const BEDROCK_MODEL = 'claude-3-haiku-20240307';

describe('remote images inlined for Gemini and Bedrock', () => {
  let s: TestServer;
  let gemini: MockGemini;
  let bedrock: MockBedrock;
  let images: Awaited<ReturnType<typeof imageHost>>;
  let closed: Awaited<ReturnType<typeof trap>>;
  let key: string;

  beforeAll(async () => {
    [gemini, bedrock, images, closed] = await Promise.all([
      MockGemini.start(),
      MockBedrock.start({ accessKeyId: 'AKIDIMG', secretAccessKey: 'img-secret', region: 'us-east-1' }),
      imageHost(),
      trap(),
    ]);
    s = await startTestServer();
    const names: Record<string, string[]> = {
      'images.example': ['127.0.0.1'],
      'rebind.example': ['127.0.0.1'],
      'metadata.example': ['169.254.169.254'],
    };
    const resolve: Resolver = async (host) => names[host] ?? (await lookup(host, { all: true })).map((a) => a.address);
    userUrlFetch(s.ctx).policy = {
      resolve,
      treatAsPublic: (address, port) => address === '127.0.0.1' && port === images.port,
    };
    await setOptions(s, { ModelRatio: { [GEMINI_MODEL]: 1, [BEDROCK_MODEL]: 1 } });
    await addChannel(s, { type: 24, baseUrl: gemini.url, key: GEMINI_MOCK_KEY, models: [GEMINI_MODEL] });
    await addChannel(s, {
      type: 33,
      baseUrl: bedrock.url,
      key: 'AKIDIMG|img-secret|us-east-1',
      models: [BEDROCK_MODEL],
    });
    await channelsChanged(s);
    const u = await addUser(s, { quota: 100_000_000 });
    key = (await addToken(s, u.id)).key;
  });
  afterAll(async () => {
    await s?.close();
    await Promise.all([gemini?.close(), bedrock?.close(), images?.close(), closed?.close()]);
  });
  beforeEach(() => {
    gemini.reset();
    bedrock.requests.length = 0;
  });

  const good = () => `http://images.example:${images.port}/cat.png`;
  const ask = (model: string, url: string) =>
    relayPost(s, '/v1/chat/completions', key, {
      model,
      max_tokens: 50,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is in this picture?' },
            { type: 'image_url', image_url: { url } },
          ],
        },
      ],
    });

  it('inlines a good image as Gemini inlineData (one fetch for a URL used twice)', async () => {
    const c = client(s, key);
    const r = await c.chat.completions.create({
      model: GEMINI_MODEL,
      max_tokens: 50,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image_url', image_url: { url: good() } },
            { type: 'text', text: 'and again' },
            { type: 'image_url', image_url: { url: good() } },
          ],
        },
      ],
    });
    expect(r.choices[0].message.content).toBeTruthy();
    const hitsBefore = images.hits.filter((h) => h === '/cat.png').length;
    expect(hitsBefore).toBe(1);
    const parts = gemini.requests.at(-1)!.body.contents[0].parts;
    const inline = { inlineData: { mimeType: 'image/png', data: PNG.toString('base64') } };
    expect(parts).toEqual([inline, { text: 'and again' }, inline]);
  });

  it('inlines a good image as a base64 Claude source on Bedrock', async () => {
    const r = await ask(BEDROCK_MODEL, good());
    expect(r.status).toBe(200);
    const content = bedrock.requests.at(-1)!.body.messages[0].content;
    expect(content).toContainEqual({
      type: 'image',
      source: { type: 'base64', media_type: 'image/png', data: PNG.toString('base64') },
    });
  });

  it('inlines a Claude client’s image URL on Bedrock, which takes Claude’s body but fetches no URLs', async () => {
    const claude = new Anthropic({ apiKey: `sk-${key}`, baseURL: s.url, maxRetries: 0 });
    const r = await claude.messages.create({
      model: BEDROCK_MODEL,
      max_tokens: 50,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image', source: { type: 'url', url: good() } },
            { type: 'text', text: 'What is this?' },
          ],
        },
      ],
    });
    expect(r.type).toBe('message');
    expect(bedrock.requests.at(-1)!.body.messages[0].content[0]).toEqual({
      type: 'image',
      source: { type: 'base64', media_type: 'image/png', data: PNG.toString('base64') },
    });
    const refused = await claude.messages
      .create({
        model: BEDROCK_MODEL,
        max_tokens: 50,
        messages: [
          {
            role: 'user',
            content: [{ type: 'image', source: { type: 'url', url: `http://127.0.0.1:${closed.port}/x.png` } }],
          },
        ],
      })
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(refused).toBeInstanceOf(Anthropic.BadRequestError);
    expect(closed.connections).toBe(0);
  });

  it('refuses a private address with a 400 in OpenAI shape; the listener sees no connection', async () => {
    for (const url of [`http://127.0.0.1:${closed.port}/x.png`, `http://[::1]:${closed.port}/x.png`]) {
      const r = await ask(GEMINI_MODEL, url);
      expect(r.status).toBe(400);
      const body = (await r.json()) as any;
      expect(body.error.type).toBe('invalid_request_error');
      expect(body.error.message).toContain('could not be fetched');
      expect(body.error.message).toMatch(/local, private or reserved/);
    }
    expect(closed.connections).toBe(0);
    expect(gemini.requests).toHaveLength(0);
  });

  it('refuses a public-looking name that resolves to a private address, on Bedrock too', async () => {
    let r = await ask(GEMINI_MODEL, `http://rebind.example:${closed.port}/x.png`);
    expect(r.status).toBe(400);
    expect(((await r.json()) as any).error.message).toContain('rebind.example resolves to 127.0.0.1');
    r = await ask(BEDROCK_MODEL, `http://metadata.example/latest/meta-data`);
    expect(r.status).toBe(400);
    expect(closed.connections).toBe(0);
    expect(gemini.requests).toHaveLength(0);
    expect(bedrock.requests).toHaveLength(0);
  });

  it('answers a Claude client in its own error shape', async () => {
    const claude = new Anthropic({ apiKey: `sk-${key}`, baseURL: s.url, maxRetries: 0 });
    const err = await claude.messages
      .create({
        model: GEMINI_MODEL,
        max_tokens: 50,
        messages: [
          {
            role: 'user',
            content: [{ type: 'image', source: { type: 'url', url: `http://10.1.2.3:${closed.port}/x.png` } }],
          },
        ],
      })
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    const body = (err as InstanceType<typeof Anthropic.BadRequestError>).error as any;
    expect(body.type).toBe('error');
    expect(body.error.type).toBe('invalid_request_error');
    expect(body.error.message).toContain('could not be fetched');
    expect(gemini.requests).toHaveLength(0);
  });

  it('refuses an image over the size limit, declared or streamed', async () => {
    for (const path of ['/declared-big.png', '/streamed-big.png']) {
      const r = await ask(GEMINI_MODEL, `http://images.example:${images.port}${path}`);
      expect(r.status).toBe(400);
      expect(((await r.json()) as any).error.message).toContain('larger than 20 MB');
    }
    expect(gemini.requests).toHaveLength(0);
  });

  it('refuses what is not an image, a redirect, and a missing image', async () => {
    const cases: [string, RegExp][] = [
      ['/page.html', /not an image \(content-type text\/html\)/],
      ['/moved.png', /redirect \(HTTP 302\)/],
      ['/gone.png', /HTTP 404/],
    ];
    for (const [path, message] of cases) {
      const r = await ask(GEMINI_MODEL, `http://images.example:${images.port}${path}`);
      expect(r.status).toBe(400);
      expect(((await r.json()) as any).error.message).toMatch(message);
    }
    // the redirect's target was not fetched
    expect(images.hits.filter((h) => h === '/moved.png')).toHaveLength(1);
    expect(gemini.requests).toHaveLength(0);
  });

  it('gives up on an image host that does not answer in time', async () => {
    const safe = new SafeFetch({ treatAsPublic: (address, port) => address === '127.0.0.1' && port === images.port });
    try {
      const fetchImage = remoteImageFetcher(safe, { timeoutMs: 200 });
      const err = await fetchImage(`http://127.0.0.1:${images.port}/slow.png`).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(FormatError);
      expect((err as FormatError).status).toBe(400);
      expect((err as FormatError).message).toContain('no answer within 0.2 s');
      const ok = await remoteImageFetcher(safe)(`http://127.0.0.1:${images.port}/cat.png`);
      expect(ok).toEqual({ mimeType: 'image/png', data: PNG.toString('base64') });
    } finally {
      await safe.close();
    }
  });

  it('goes through root’s worker when WorkerUrl is set: the worker fetches, the image host is not dialled', async () => {
    const carried: Array<Record<string, unknown>> = [];
    const worker = http.createServer((req, res) => {
      let raw = '';
      req.on('data', (c) => (raw += c));
      req.on('end', () => {
        carried.push(JSON.parse(raw));
        res.writeHead(200, { 'content-type': 'image/png' }).end(PNG);
      });
    });
    await new Promise<void>((r) => worker.listen(0, '127.0.0.1', r));
    const workerPort = (worker.address() as AddressInfo).port;
    const policy = userUrlFetch(s.ctx).policy;
    userUrlFetch(s.ctx).policy = {
      ...policy,
      treatAsPublic: (address, port) => address === '127.0.0.1' && (port === images.port || port === workerPort),
    };
    await setOptions(s, { WorkerUrl: `http://127.0.0.1:${workerPort}`, WorkerValidKey: 'img-worker-key' });
    const hitsBefore = images.hits.length;
    try {
      const r = await ask(GEMINI_MODEL, good());
      expect(r.status).toBe(200);
      expect(carried).toEqual([{ url: good(), key: 'img-worker-key', headers: { accept: 'image/*' } }]);
      expect(images.hits.length).toBe(hitsBefore);
      const parts = gemini.requests.at(-1)!.body.contents[0].parts;
      expect(parts).toContainEqual({ inlineData: { mimeType: 'image/png', data: PNG.toString('base64') } });
    } finally {
      await setOptions(s, { WorkerUrl: '', WorkerValidKey: '' });
      userUrlFetch(s.ctx).policy = policy;
      await new Promise((r) => worker.close(r));
    }
  });
});
