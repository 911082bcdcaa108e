// Streaming edge cases: client disconnect (upstream aborted, charge = delivered tokens), upstream breaking mid-stream
// (error event + [DONE], charge = delivered), idle timeout, and backpressure-free pass-through of slow streams.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { MockUpstream } from '../helpers/mock-upstream.js';
import {
  addChannel,
  addToken,
  addUser,
  channelsChanged,
  logsOf,
  openHolds,
  setOptions,
  userRow,
  waitFor,
} from './fixtures.js';
import { countTextTokens } from '../../src/services/tokenizer.js';
import { streamIdleMs } from '../../src/relay/attempt.js';

const MODEL = 'stream-model';

describe('relay streaming edge cases', () => {
  let s: TestServer;
  let up: MockUpstream;

  beforeAll(async () => {
    s = await startTestServer({ env: { STREAMING_TIMEOUT: '1' } });
    up = await MockUpstream.start();
    await setOptions(s, { ModelRatio: { [MODEL]: 1 }, CompletionRatio: { [MODEL]: 1 } });
    await addChannel(s, { type: 8, baseUrl: `${up.url}/v1/chat/completions`, models: [MODEL] });
    await channelsChanged(s);
  });
  afterAll(async () => {
    await s?.close();
    await up?.close();
  });

  const body = JSON.stringify({ model: MODEL, stream: true, messages: [{ role: 'user', content: 'count' }] });

  it('aborts the upstream when the client disconnects and bills only what was delivered', async () => {
    up.reset();
    const pieces = Array.from({ length: 40 }, (_, i) => ` w${i}`);
    up.behave = () => ({ kind: 'stream', spec: { pieces, intervalMs: 30, usage: 'never' } });
    const u = await addUser(s, { quota: 1_000_000 });
    const t = await addToken(s, u.id);
    // read a few events, then drop the connection
    const received = await new Promise<string>((resolve, reject) => {
      const req = http.request(
        `${s.url}/v1/chat/completions`,
        { method: 'POST', headers: { authorization: `Bearer sk-${t.key}`, 'content-type': 'application/json' } },
        (res) => {
          let text = '';
          res.on('data', (c) => {
            text += c.toString();
            if ((text.match(/"content"/g) ?? []).length >= 6) {
              req.destroy();
              resolve(text);
            }
          });
          res.on('error', () => undefined);
        },
      );
      req.on('error', () => undefined);
      req.end(body);
      setTimeout(() => reject(new Error('timeout')), 5000);
    });
    expect(received).toContain('w3');
    await waitFor(() => up.closedEarly === 1);
    await waitFor(async () => (await logsOf(s, u.id)).length === 1);
    const [l] = await logsOf(s, u.id);
    // custom channels (type 8) get no include_usage, so completion = tokens of the text actually sent
    const deliveredMax = countTextTokens(pieces.slice(0, 12).join(''), MODEL);
    expect(l.completion_tokens).toBeGreaterThan(0);
    expect(l.completion_tokens).toBeLessThanOrEqual(deliveredMax);
    expect(l.quota).toBe(l.prompt_tokens + l.completion_tokens);
    expect((await userRow(s, u.id)).quota).toBe(1_000_000 - l.quota);
    expect(await openHolds(s, u.id)).toEqual([]);
  });

  it('ends a broken upstream stream with an error event and [DONE], billing what was delivered', async () => {
    up.reset();
    up.behave = () => ({
      kind: 'stream',
      spec: { pieces: [' alpha', ' beta', ' gamma', ' delta'], breakAfter: 2, intervalMs: 10, usage: 'never' },
    });
    const u = await addUser(s, { quota: 1_000_000 });
    const t = await addToken(s, u.id);
    const res = await fetch(`${s.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer sk-${t.key}`, 'content-type': 'application/json' },
      body,
    });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain('alpha');
    expect(text).not.toContain('gamma');
    expect(text).toMatch(/data: \{"error":\{"message":".*\(request id: /);
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
    const [l] = await logsOf(s, u.id);
    expect(l.completion_tokens).toBe(countTextTokens(' alpha beta', MODEL));
    expect((await userRow(s, u.id)).quota).toBe(1_000_000 - l.quota);
    expect(await openHolds(s, u.id)).toEqual([]);
  });

  it('gives up on an idle upstream after STREAMING_TIMEOUT', async () => {
    up.reset();
    up.behave = () => ({ kind: 'stream', spec: { pieces: [' one', ' two', ' three'], hangAfter: 1, usage: 'never' } });
    const u = await addUser(s, { quota: 1_000_000 });
    const t = await addToken(s, u.id);
    const t0 = Date.now();
    const res = await fetch(`${s.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer sk-${t.key}`, 'content-type': 'application/json' },
      body,
    });
    const text = await res.text();
    expect(Date.now() - t0).toBeLessThan(4000);
    expect(text).toContain(' one');
    expect(text).toContain('"error"');
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
    const [l] = await logsOf(s, u.id);
    expect(l.completion_tokens).toBe(countTextTokens(' one', MODEL));
  });

  it('gives o1/o3 upstream models twice STREAMING_TIMEOUT (they think in silence)', () => {
    // undici's body timer ticks coarsely (about half a second), too coarse to tell 1 s from 2 s over the wire
    expect(streamIdleMs(60, 'o3-mini')).toBe(120_000);
    expect(streamIdleMs(60, 'o1-preview')).toBe(120_000);
    expect(streamIdleMs(60, 'gpt-4o')).toBe(60_000);
    expect(streamIdleMs(60, 'gpt-o3')).toBe(60_000);
  });

  it('forwards each chunk as soon as the upstream sends it (no one-chunk lag)', async () => {
    up.reset();
    up.behave = () => ({ kind: 'stream', spec: { pieces: [' first', ' second'], intervalMs: 400, usage: 'never' } });
    const u = await addUser(s);
    const t = await addToken(s, u.id);
    const t0 = Date.now();
    const seen: Array<[string, number]> = [];
    await new Promise<void>((resolve) => {
      const req = http.request(
        `${s.url}/v1/chat/completions`,
        { method: 'POST', headers: { authorization: `Bearer sk-${t.key}`, 'content-type': 'application/json' } },
        (res) => {
          res.on('data', (c) => seen.push([c.toString(), Date.now() - t0]));
          res.on('end', () => resolve());
        },
      );
      req.end(body);
    });
    const first = seen.find(([c]) => c.includes(' first'));
    // ' first' is sent at ~400 ms and ' second' at ~800 ms: the first must arrive before the second is produced
    expect(first![1]).toBeLessThan(700);
  });

  /** One chat.completion.chunk event with the given delta; `sep` ends the event (LF or CRLF blank line). */
  const chunkEvent = (id: string, sep: string, delta: unknown, finish: string | null = null) =>
    `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', model: MODEL, choices: [{ index: 0, delta, finish_reason: finish }] })}${sep}`;
  const usageEvent = (id: string, sep: string, prompt: number, completion: number) =>
    `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', model: MODEL, choices: [], usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion } })}${sep}`;

  /** The upstream answers `raw` in one piece; returns what a fresh user's client received, and that user's one log. */
  async function relayRawStream(raw: string) {
    up.reset();
    up.behave = () => ({ kind: 'raw', status: 200, body: raw, contentType: 'text/event-stream' });
    const u = await addUser(s, { quota: 1_000_000 });
    const t = await addToken(s, u.id);
    const text = await new Promise<string>((resolve) => {
      const req = http.request(
        `${s.url}/v1/chat/completions`,
        { method: 'POST', headers: { authorization: `Bearer sk-${t.key}`, 'content-type': 'application/json' } },
        (res) => {
          let out = '';
          res.on('data', (c) => (out += c.toString()));
          res.on('end', () => resolve(out));
        },
      );
      req.end(body);
    });
    await waitFor(async () => (await logsOf(s, u.id)).length === 1);
    const [log] = await logsOf(s, u.id);
    return { text, log };
  }

  it('scans a whole stream that arrives in one piece once: "[DONE]" inside content is text, the usage chunk is billed and dropped', async () => {
    const content = [
      chunkEvent('c2', '\n\n', { role: 'assistant', content: 'say [DONE] ' }),
      chunkEvent('c2', '\n\n', { content: 'then "usage": {} stop' }),
      chunkEvent('c2', '\n\n', {}, 'stop'),
    ];
    const { text, log } = await relayRawStream(content.join('') + usageEvent('c2', '\n\n', 11, 4) + 'data: [DONE]\n\n');
    expect(text.split('\n\n').filter(Boolean)).toEqual([...content.map((e) => e.trimEnd()), 'data: [DONE]']);
    expect([log.prompt_tokens, log.completion_tokens, log.quota]).toEqual([11, 4, 15]);
  });

  it('handles events separated by CRLF blank lines: content forwarded, usage chunk billed and dropped, [DONE] once', async () => {
    const crlf = '\r\n\r\n';
    const raw =
      chunkEvent('c1', crlf, { role: 'assistant', content: 'Hel' }) +
      chunkEvent('c1', crlf, { content: 'lo' }) +
      chunkEvent('c1', crlf, {}, 'stop') +
      usageEvent('c1', crlf, 7, 3) +
      'data: [DONE]' +
      crlf;
    const { text, log } = await relayRawStream(raw);
    expect(text).toContain('"content":"Hel"');
    expect(text).toContain('"content":"lo"');
    expect(text).not.toContain('"usage"'); // the client did not ask for it
    expect(text.match(/\[DONE\]/g)).toHaveLength(1);
    expect([log.prompt_tokens, log.completion_tokens]).toEqual([7, 3]);
    // ModelRatio 1, CompletionRatio 1: (7 + 3) × 1 = 10
    expect(log.quota).toBe(10);
  });
});
