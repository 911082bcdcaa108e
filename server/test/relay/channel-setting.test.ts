// Channel `setting`: thinking_to_content and force_format (stream and JSON) and an upstream proxy.
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { MockUpstream } from '../helpers/mock-upstream.js';
import { addChannel, addToken, addUser, channelsChanged, client, setOptions } from './fixtures.js';

const chunk = (delta: Record<string, unknown>) =>
  `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'think', choices: [{ index: 0, delta, finish_reason: null }] })}\n\n`;

describe('channel setting', () => {
  let s: TestServer;
  let up: MockUpstream;
  let proxy: http.Server;
  let tunnels = 0;
  let key: string;

  beforeAll(async () => {
    s = await startTestServer();
    up = await MockUpstream.start();
    proxy = http.createServer();
    proxy.on('connect', (req, socket, head) => {
      tunnels++;
      const [host, port] = String(req.url).split(':');
      const upstream = net.connect(Number(port), host, () => {
        socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        upstream.write(head);
        upstream.pipe(socket);
        socket.pipe(upstream);
      });
      upstream.on('error', () => socket.destroy());
      socket.on('error', () => upstream.destroy());
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', () => r()));
    await setOptions(s, { ModelRatio: { think: 1, proxied: 1, strict: 1 } });
    await addChannel(s, { baseUrl: up.url, models: ['strict'], setting: { force_format: true } });
    await addChannel(s, { baseUrl: up.url, models: ['think'], setting: { thinking_to_content: true } });
    await addChannel(s, {
      baseUrl: up.url,
      models: ['proxied'],
      setting: { proxy: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}` },
    });
    await channelsChanged(s);
    const u = await addUser(s);
    key = (await addToken(s, u.id)).key;
  });
  afterAll(async () => {
    await s?.close();
    await up?.close();
    proxy?.closeAllConnections?.();
    await new Promise<void>((r) => proxy.close(() => r()));
  });

  it('turns reasoning_content into <think> content in streams', async () => {
    up.behave = () => ({
      kind: 'raw',
      status: 200,
      contentType: 'text/event-stream',
      body:
        chunk({ role: 'assistant', reasoning_content: 'let me' }) +
        chunk({ reasoning_content: ' think' }) +
        chunk({ content: 'Answer' }) +
        'data: [DONE]\n\n',
    });
    const stream = await client(s, key).chat.completions.create({
      model: 'think',
      messages: [{ role: 'user', content: 'q' }],
      stream: true,
    });
    let text = '';
    for await (const c of stream) text += c.choices[0]?.delta?.content ?? '';
    expect(text).toBe('<think>\nlet me think\n</think>\nAnswer');
  });

  it('closes the <think> block before a tool call that follows the reasoning', async () => {
    const call = { index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{}' } };
    up.behave = () => ({
      kind: 'raw',
      status: 200,
      contentType: 'text/event-stream',
      body:
        chunk({ role: 'assistant', reasoning_content: 'weather?' }) +
        chunk({ tool_calls: [call] }) +
        `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'think', choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] })}\n\n` +
        'data: [DONE]\n\n',
    });
    const stream = await client(s, key).chat.completions.create({
      model: 'think',
      messages: [{ role: 'user', content: 'q' }],
      stream: true,
    });
    let text = '';
    const names: string[] = [];
    for await (const c of stream) {
      text += c.choices[0]?.delta?.content ?? '';
      for (const t of c.choices[0]?.delta?.tool_calls ?? []) if (t.function?.name) names.push(t.function.name);
    }
    expect(text).toBe('<think>\nweather?\n</think>\n');
    expect(names).toEqual(['get_weather']);
  });

  it('turns reasoning_content into <think> content in JSON answers', async () => {
    up.behave = () => ({
      kind: 'json',
      body: {
        id: 'x',
        object: 'chat.completion',
        model: 'think',
        choices: [{ index: 0, message: { role: 'assistant', content: 'A', reasoning_content: 'R' } }],
        usage: { prompt_tokens: 1, completion_tokens: 1 },
      },
    });
    const r = await client(s, key).chat.completions.create({
      model: 'think',
      messages: [{ role: 'user', content: 'q' }],
    });
    expect(r.choices[0].message.content).toBe('<think>\nR\n</think>\nA');
  });

  it('force_format: stream chunks keep only OpenAI chunk fields, and the usage still bills', async () => {
    const vendor = (delta: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
      `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'strict', provider: 'Acme', citations: ['u'], choices: [{ index: 0, delta: { ...delta, vendor_note: 'x' }, native_finish_reason: 'eos', finish_reason: null }], ...extra })}\n\n`;
    up.behave = () => ({
      kind: 'raw',
      status: 200,
      contentType: 'text/event-stream',
      body:
        vendor({ role: 'assistant', content: 'Hel' }) +
        vendor({ content: 'lo' }) +
        `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'strict', provider: 'Acme', choices: [], usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5, cost: 0.1 } })}\n\n` +
        'data: [DONE]\n\n',
    });
    const res = await fetch(`${s.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer sk-${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'strict',
        stream: true,
        stream_options: { include_usage: true },
        messages: [{ role: 'user', content: 'q' }],
      }),
    });
    const events = (await res.text())
      .split('\n\n')
      .filter((e) => e.startsWith('data: {'))
      .map((e) => JSON.parse(e.slice(6)));
    expect(events.map((e) => e.choices[0]?.delta?.content ?? '').join('')).toBe('Hello');
    for (const e of events) {
      expect(
        Object.keys(e).every((k) =>
          ['id', 'object', 'created', 'model', 'system_fingerprint', 'choices', 'usage'].includes(k),
        ),
        JSON.stringify(e),
      ).toBe(true);
      for (const c of e.choices) expect(Object.keys(c).sort()).toEqual(['delta', 'finish_reason', 'index', 'logprobs']);
      for (const c of e.choices) expect(c.delta.vendor_note).toBeUndefined();
    }
    expect(events.at(-1).usage).toEqual({ prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 });
  });

  it('force_format: a JSON answer keeps only OpenAI fields', async () => {
    up.behave = () => ({
      kind: 'json',
      body: {
        id: 'x',
        object: 'chat.completion',
        created: 2,
        model: 'strict',
        provider: 'Acme',
        citations: ['u'],
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: 'A', annotations: [] },
            finish_reason: 'stop',
            native_finish_reason: 'eos',
          },
        ],
        usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
      },
    });
    const res = await fetch(`${s.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer sk-${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'strict', messages: [{ role: 'user', content: 'q' }] }),
    });
    expect(await res.json()).toEqual({
      id: 'x',
      object: 'chat.completion',
      created: 2,
      model: 'strict',
      choices: [{ index: 0, message: { role: 'assistant', content: 'A' }, logprobs: null, finish_reason: 'stop' }],
      usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
    });
  });

  it('sends upstream calls through the channel proxy', async () => {
    up.reset();
    const r = await client(s, key).chat.completions.create({
      model: 'proxied',
      messages: [{ role: 'user', content: 'q' }],
    });
    expect(r.choices[0].message.content).toBe('Hello world!');
    expect(tunnels).toBeGreaterThan(0);
    expect(up.requests).toHaveLength(1);
  });
});
