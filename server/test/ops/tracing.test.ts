// OpenTelemetry tracing: with OTEL_EXPORTER_OTLP_ENDPOINT set, each relay request is one span with child spans for
// the reservation, each upstream attempt and the settlement, all carrying the request id, exported over OTLP/HTTP
// JSON to a local receiver. Without it, no tracer exists.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDb } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { MockUpstream } from '../helpers/mock-upstream.js';
import { relayServices } from '../../src/relay/services.js';
import { addChannel, addToken, addUser, channelsChanged, relayPost, setOptions } from '../relay/fixtures.js';

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: Array<{ key: string; value: { stringValue?: string; intValue?: string | number } }>;
}

/** A collector on 127.0.0.1 that keeps the spans of every OTLP/HTTP JSON export it receives. */
async function otlpReceiver() {
  const spans: OtlpSpan[] = [];
  const contentTypes: string[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      contentTypes.push(String(req.headers['content-type']));
      if (req.url === '/v1/traces') {
        const doc = JSON.parse(body);
        for (const rs of doc.resourceSpans ?? [])
          for (const ss of rs.scopeSpans ?? []) for (const sp of ss.spans ?? []) spans.push(sp);
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    contentTypes,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

const attr = (s: OtlpSpan, key: string) => {
  const v = s.attributes.find((a) => a.key === key)?.value;
  return v?.stringValue ?? (v?.intValue !== undefined ? Number(v.intValue) : undefined);
};

await describeEachDb('relay tracing', (kind) => {
  let s: TestServer;
  let up: MockUpstream;
  let bad: MockUpstream;
  let receiver: Awaited<ReturnType<typeof otlpReceiver>>;
  let goodChannel: number;
  let badChannel: number;

  beforeAll(async () => {
    receiver = await otlpReceiver();
    s = await startTestServer({ kind, env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url } });
    up = await MockUpstream.start();
    bad = await MockUpstream.start();
    bad.behave = () => ({ kind: 'json', status: 502, body: { error: { message: 'bad gateway' } } });
    await setOptions(s, { ModelRatio: { 'trace-m': 1 }, RetryTimes: '1', AutomaticDisableChannelEnabled: 'false' });
    goodChannel = await addChannel(s, { baseUrl: up.url, models: ['trace-m'], autoBan: 0 });
    badChannel = await addChannel(s, { baseUrl: bad.url, models: ['trace-m'], priority: 5, autoBan: 0 });
    await channelsChanged(s);
  });
  afterAll(async () => {
    await s?.close();
    await up?.close();
    await bad?.close();
    await receiver?.close();
  });

  it('exports one span per request with reservation, attempt and settlement children carrying the request id', async () => {
    const u = await addUser(s, { quota: 5_000_000 });
    const t = await addToken(s, u.id);
    const res = await relayPost(s, '/v1/chat/completions', t.key, {
      model: 'trace-m',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    const reqId = res.headers.get('x-oneapi-request-id')!;
    expect(reqId).toBeTruthy();
    await relayServices(s.ctx).tracer!.flush();

    const mine = receiver.spans.filter((sp) => attr(sp, 'gateway.request_id') === reqId);
    const root = mine.find((sp) => sp.name === 'relay chat')!;
    expect(root).toBeDefined();
    expect(root.parentSpanId ?? '').toBe('');
    expect(attr(root, 'http.response.status_code')).toBe(200);
    expect(attr(root, 'gateway.channel_id')).toBe(String(goodChannel));
    const children = mine.filter((sp) => sp !== root);
    for (const c of children) {
      expect(c.traceId).toBe(root.traceId);
      expect(c.parentSpanId).toBe(root.spanId);
    }
    expect(children.map((c) => c.name).sort()).toEqual(['reserve', 'settle', 'upstream attempt', 'upstream attempt']);
    const attempts = children.filter((c) => c.name === 'upstream attempt');
    expect(
      attempts.map((a) => [attr(a, 'gateway.attempt'), attr(a, 'gateway.channel_id'), attr(a, 'gateway.outcome')]),
    ).toEqual(
      expect.arrayContaining([
        [1, badChannel, 'failed'],
        [2, goodChannel, 'done'],
      ]),
    );
    expect(receiver.contentTypes.every((ct) => ct.startsWith('application/json'))).toBe(true);
  });
});

await describeEachDb(
  'relay without tracing',
  (kind) => {
    let s: TestServer;
    beforeAll(async () => {
      s = await startTestServer({ kind });
    });
    afterAll(async () => {
      await s?.close();
    });

    it('has no tracer when OTEL_EXPORTER_OTLP_ENDPOINT is unset', () => {
      expect(relayServices(s.ctx).tracer).toBeNull();
    });
  },
  ['postgres', 'mysql'],
);
