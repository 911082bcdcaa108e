// A stream whose client leaves before its first byte, on every database:
//   (a) the upstream has not answered yet (no response head) → the upstream request is aborted, nothing is billed,
//       the reservation goes back and the consume log says `client_left` with quota 0;
//   (b) the upstream has answered (head out, generating) → as for a non-stream request, the stream is read to its end
//       for its usage, which is billed and logged with `client_left`.
// The upstream is a listener the test drives step by step (head, then the rest), so no step waits on a timer.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { describeEachDb } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import {
  addChannel,
  addToken,
  addUser,
  channelsChanged,
  logsOf,
  openHolds,
  rawChat,
  setOptions,
  tokenRow,
  userRow,
  waitFor,
} from './fixtures.js';
import { relayServices } from '../../src/relay/services.js';
import { UpstreamCall } from '../../src/relay/upstream-call.js';

const MODEL = 'left-early-model';
const USAGE = { prompt_tokens: 10, completion_tokens: 50, total_tokens: 60 };

/** An SSE upstream: `answer` decides when the head and the rest go out; it records requests cut before their end. */
async function steppedUpstream() {
  const state = {
    requests: 0,
    aborted: 0,
    finished: 0,
    /** called with each response; resolves when the test lets it go on */
    answer: async (_res: http.ServerResponse): Promise<void> => {},
  };
  const server = http.createServer((req, res) => {
    req.resume();
    state.requests++;
    res.on('close', () => {
      if (!res.writableFinished) state.aborted++;
    });
    void state.answer(res).then(() => {
      if (!res.destroyed) {
        res.end();
        state.finished++;
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    state,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => {
      server.closeAllConnections();
      return new Promise((r) => server.close(r));
    },
  };
}

const chunk = (delta: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', model: MODEL, choices: [{ index: 0, delta, finish_reason: null }], ...extra })}\n\n`;

await describeEachDb('a stream left before its first byte', (kind) => {
  let s: TestServer;
  let up: Awaited<ReturnType<typeof steppedUpstream>>;

  beforeAll(async () => {
    s = await startTestServer({ kind });
    up = await steppedUpstream();
    await setOptions(s, { ModelRatio: { [MODEL]: 1 }, CompletionRatio: { [MODEL]: 1 } });
    await addChannel(s, { baseUrl: up.url, models: [MODEL] });
    await channelsChanged(s);
  });
  afterAll(async () => {
    await s?.close();
    await up?.close();
  });

  const streamRequest = { model: MODEL, max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'hi' }] };

  it('aborts an upstream that has not answered, bills nothing and logs client_left with 0', async () => {
    let release!: () => void;
    const never = new Promise<void>((r) => (release = r));
    up.state.answer = () => never; // no head until the test says so
    try {
      const u = await addUser(s, { quota: 2_000 });
      const t = await addToken(s, u.id, { unlimited: false, remain: 1_500 });
      const sent = up.state.requests;
      const aborted = up.state.aborted;
      const c = rawChat(s.url, t.key, streamRequest);
      await waitFor(() => up.state.requests === sent + 1); // the request is out, unanswered
      c.sock.destroy();
      await waitFor(() => up.state.aborted === aborted + 1);
      await waitFor(async () => (await logsOf(s, u.id)).length === 1);
      const [l] = await logsOf(s, u.id);
      expect(l).toMatchObject({ quota: 0, prompt_tokens: 0, completion_tokens: 0 });
      expect(Boolean(l.is_stream)).toBe(true);
      expect(l.otherJson.client_left).toBe(true);
      expect(c.received()).toBe('');
      expect(await userRow(s, u.id)).toEqual({ quota: 2_000, used_quota: 0, request_count: 0 });
      expect((await tokenRow(s, t.id)).remain_quota).toBe(1_500);
      expect(await openHolds(s, u.id)).toEqual([]);
    } finally {
      release();
      up.state.answer = async () => {};
    }
  });

  // the OpenAI client on the native lane (relay/stream/sse-scan.ts), a Claude client on the translated one (stream/translate.ts)
  for (const [lane, path, auth] of [
    ['an OpenAI client (native lane)', '/v1/chat/completions', undefined],
    ['a Claude client (translated lane)', '/v1/messages', 'x-api-key'],
  ] as const) {
    it(`reads an upstream that has started to its end and bills its usage, logged client_left: ${lane}`, async () => {
      const headersSeen = vi.spyOn(UpstreamCall.prototype, 'onHeaders');
      let release!: () => void;
      const rest = new Promise<void>((r) => (release = r));
      up.state.answer = async (res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.flushHeaders();
        await rest;
        res.write(chunk({ role: 'assistant', content: 'worth' }));
        res.write(chunk({ content: ' paying for' }));
        res.write(chunk({}, { choices: [], usage: USAGE }));
        res.write('data: [DONE]\n\n');
      };
      try {
        const u = await addUser(s, { quota: 2_000 });
        const t = await addToken(s, u.id, { unlimited: false, remain: 1_500 });
        const finished = up.state.finished;
        const aborted = up.state.aborted;
        const heads = headersSeen.mock.calls.length;
        const c = rawChat(s.url, t.key, streamRequest, undefined, path, auth ? `${auth}: sk-${t.key}` : undefined);
        await waitFor(() => headersSeen.mock.calls.length === heads + 1); // the relay has the head, no byte sent on
        c.sock.destroy();
        // the relay keeps the call to read on (a stop would abort it), then the upstream goes on
        await waitFor(() => relayServices(s.ctx).leftBehind.size === 1);
        release();
        await waitFor(async () => (await logsOf(s, u.id)).length === 1);
        const [l] = await logsOf(s, u.id);
        expect(up.state.finished).toBe(finished + 1);
        expect(up.state.aborted).toBe(aborted);
        expect(c.received()).toBe('');
        expect(l).toMatchObject({ quota: 60, prompt_tokens: 10, completion_tokens: 50 });
        expect(Boolean(l.is_stream)).toBe(true);
        expect(l.otherJson.client_left).toBe(true);
        expect(await userRow(s, u.id)).toEqual({ quota: 2_000 - 60, used_quota: 60, request_count: 1 });
        expect((await tokenRow(s, t.id)).remain_quota).toBe(1_500 - 60);
        expect(await openHolds(s, u.id)).toEqual([]);
        expect(relayServices(s.ctx).leftBehind.size).toBe(0);
      } finally {
        release();
        headersSeen.mockRestore();
        up.state.answer = async () => {};
      }
    });
  }
});
