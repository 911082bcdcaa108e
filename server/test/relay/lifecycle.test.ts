// Work that happens off the request path: settlements, consume logs and dashboard buckets are written on shutdown,
// after the requests in flight have finished (or been cut at SHUTDOWN_TIMEOUT and billed for what was delivered);
// quota_data buckets add up per (user, model, hour); ModelRequestRateLimit counts per user.
import http from 'node:http';
import net from 'node:net';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/connect.js';
import { createTestDatabase } from '../helpers/databases.js';
import { startTestServer } from '../helpers/server.js';
import { spawnGateway } from '../helpers/process.js';
import { MockUpstream } from '../helpers/mock-upstream.js';
import { relayServices } from '../../src/relay/services.js';
import { addChannel, addToken, addUser, channelsChanged, client, setOptions, relayPost, waitFor } from './fixtures.js';
import { countTextTokens } from '../../src/services/tokenizer.js';

/** Starts a streamed chat request; `onFirstChunk` runs once the first bytes of the answer arrive. */
function streamChat(
  url: string,
  key: string,
  model: string,
  onFirstChunk: () => void,
): Promise<{ text: string; complete: boolean }> {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify({ model, stream: true, messages: [{ role: 'user', content: 'count' }] });
    const req = http.request(
      `${url}/v1/chat/completions`,
      { method: 'POST', headers: { authorization: `Bearer sk-${key}`, 'content-type': 'application/json' } },
      (res) => {
        let text = '';
        res.on('data', (c) => {
          if (!text) onFirstChunk();
          text += c.toString();
        });
        res.on('end', () => resolve({ text, complete: res.complete }));
        // cut mid-answer: what arrived so far
        res.on('error', () => resolve({ text, complete: false }));
        res.on('aborted', () => resolve({ text, complete: false }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const START = 1000_000;

/** A gateway over its own SQLite file whose one channel streams `n` pieces (` w0`, ` w1`…) `intervalMs` apart. */
async function streamingGateway(n: number, intervalMs: number) {
  const database = await createTestDatabase('sqlite');
  const up = await MockUpstream.start();
  const s = await startTestServer({ database });
  await setOptions(s, { ModelRatio: { 'lc-model': 1 }, CompletionRatio: { 'lc-model': 1 } });
  await addChannel(s, { baseUrl: up.url, models: ['lc-model'] });
  await channelsChanged(s);
  const u = await addUser(s, { quota: START });
  const t = await addToken(s, u.id);
  const pieces = Array.from({ length: n }, (_, i) => ` w${i}`);
  up.behave = () => ({ kind: 'stream', spec: { pieces, intervalMs } });
  return {
    database,
    up,
    s,
    userId: u.id,
    key: t.key,
    pieces,
    async dispose() {
      await s.close();
      await up.close();
      await database.drop();
    },
  };
}

/** What a stopped gateway left in its database for a user: consume logs, balance, and every open hold. */
async function rowsLeft(database: { sqlitePath: string }, userId: number) {
  const { db, close } = await openDatabase({ dsn: '', sqlitePath: database.sqlitePath });
  try {
    return {
      logs: await db.selectFrom('logs').selectAll().where('user_id', '=', userId).where('type', '=', 2).execute(),
      user: await db
        .selectFrom('users')
        .select(['quota', 'used_quota', 'request_count'])
        .where('id', '=', userId)
        .executeTakeFirstOrThrow(),
      holds: [
        ...(await db.selectFrom('quota_holds').selectAll().execute()),
        ...(await db.selectFrom('quota_hold_journal').selectAll().execute()),
      ],
    };
  } finally {
    await close();
  }
}

describe('relay background work', () => {
  it('flushes settlements, logs and quota_data on shutdown', async () => {
    const database = await createTestDatabase('sqlite');
    const up = await MockUpstream.start();
    const s = await startTestServer({ database });
    let userId = 0;
    try {
      await setOptions(s, { ModelRatio: { 'lc-model': 1 }, CompletionRatio: { 'lc-model': 1 } });
      await addChannel(s, { baseUrl: up.url, models: ['lc-model'] });
      await channelsChanged(s);
      const u = await addUser(s, { quota: 1000_000, username: 'lifecycle' });
      userId = u.id;
      const t = await addToken(s, u.id);
      const c = client(s, t.key);
      for (let i = 0; i < 3; i++)
        await c.chat.completions.create({ model: 'lc-model', messages: [{ role: 'user', content: 'x' }] });
    } finally {
      await s.close();
      await up.close();
    }
    const { db, close } = await openDatabase({ dsn: '', sqlitePath: database.sqlitePath });
    try {
      const logs = await db.selectFrom('logs').selectAll().where('user_id', '=', userId).execute();
      expect(logs).toHaveLength(3);
      expect(logs.every((l) => l.quota === 18)).toBe(true);
      const user = await db
        .selectFrom('users')
        .select(['quota', 'used_quota', 'request_count'])
        .where('id', '=', userId)
        .executeTakeFirstOrThrow();
      expect(user).toEqual({ quota: 1000_000 - 54, used_quota: 54, request_count: 3 });
      const qd = await db.selectFrom('quota_data').selectAll().where('user_id', '=', userId).execute();
      expect(qd).toHaveLength(1);
      expect(qd[0]).toMatchObject({
        username: 'lifecycle',
        model_name: 'lc-model',
        count: 3,
        quota: 54,
        token_used: 54,
      });
      expect(qd[0].created_at % 3600).toBe(0);
    } finally {
      await close();
      await database.drop();
    }
  });

  it('a stop lets a stream in flight finish, takes no new connection, then writes its charge and log', async () => {
    const g = await streamingGateway(12, 40);
    try {
      let stopping: Promise<void> | undefined;
      let refused: Promise<unknown> | undefined;
      const t0 = Date.now();
      const answer = await streamChat(g.s.url, g.key, 'lc-model', () => {
        stopping = g.s.close(5000);
        // the listener is closed at once: a new connection is refused while the stream goes on
        refused = new Promise((r) => setTimeout(r, 50)).then(() =>
          fetch(`${g.s.url}/v1/models`).then(
            () => 'served',
            (e) => e.cause?.code,
          ),
        );
      });
      expect(answer.complete).toBe(true);
      expect(answer.text).toContain(' w11');
      expect(answer.text.trimEnd().endsWith('data: [DONE]')).toBe(true);
      expect(await refused).toBe('ECONNREFUSED');
      await stopping;
      // the drain ended with the stream, not at its 5 s deadline
      expect(Date.now() - t0).toBeLessThan(3000);
      const after = await rowsLeft(g.database, g.userId);
      // the mock's usage chunk (include_usage is forced upstream): 11 + 7 tokens at ratio 1
      expect(after.logs.map((l) => l.quota)).toEqual([18]);
      expect(after.user).toEqual({ quota: START - 18, used_quota: 18, request_count: 1 });
      expect(after.holds).toEqual([]);
      expect(g.up.closedEarly).toBe(0);
    } finally {
      await g.dispose();
    }
  });

  it('a stop refuses a request sent on an open connection afterwards with a 503 and Connection: close', async () => {
    const g = await streamingGateway(6, 100);
    try {
      // one connection: a stream, then (once the stop has begun) a second request behind it (HTTP/1.1 pipelining)
      const url = new URL(g.s.url);
      const sock = net.connect(Number(url.port), url.hostname);
      const request = (stream: boolean) => {
        const body = JSON.stringify({ model: 'lc-model', stream, messages: [{ role: 'user', content: 'x' }] });
        return `POST /v1/chat/completions HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer sk-${g.key}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
      };
      let text = '';
      sock.on('data', (d) => (text += d.toString()));
      const closed = once(sock, 'close');
      sock.write(request(true));
      await waitFor(() => text.includes('data: '));
      const stopping = g.s.close(5000);
      await new Promise((r) => setTimeout(r, 50));
      sock.write(request(false));
      await closed;
      await stopping;
      const [first, second] = text.split(/(?=HTTP\/1\.1 )/);
      expect(first).toMatch(/^HTTP\/1\.1 200 /);
      expect(first).toContain('data: [DONE]');
      expect(second).toMatch(/^HTTP\/1\.1 503 /);
      expect(second).toMatch(/\r\nConnection: close\r\n/i);
      expect(JSON.parse(second.slice(second.indexOf('\r\n\r\n') + 4)).error).toMatchObject({
        type: 'new_api_error',
        code: 'shutting_down',
      });
      // only the stream was served and charged
      expect(g.up.requests).toHaveLength(1);
      expect((await rowsLeft(g.database, g.userId)).logs).toHaveLength(1);
    } finally {
      await g.dispose();
    }
  });

  it('a stop cuts a stream still running at SHUTDOWN_TIMEOUT and bills what was delivered', async () => {
    const g = await streamingGateway(100, 50);
    try {
      let stopping: Promise<void> | undefined;
      const answer = await streamChat(g.s.url, g.key, 'lc-model', () => {
        stopping = g.s.close(400);
      });
      expect(answer.complete).toBe(false);
      expect(answer.text).toContain(' w2');
      expect(answer.text).not.toContain(' w50');
      await stopping;
      expect(g.up.closedEarly).toBe(1);
      const after = await rowsLeft(g.database, g.userId);
      expect(after.logs).toHaveLength(1);
      const [l] = after.logs;
      // counted from the text sent (the upstream's usage chunk never came)
      expect(l.completion_tokens).toBeGreaterThan(0);
      expect(l.completion_tokens).toBeLessThanOrEqual(countTextTokens(g.pieces.slice(0, 20).join(''), 'lc-model'));
      expect(l.quota).toBe(l.prompt_tokens + l.completion_tokens);
      expect(after.user).toEqual({ quota: START - l.quota, used_quota: l.quota, request_count: 1 });
      expect(after.holds).toEqual([]);
    } finally {
      await g.dispose();
    }
  });

  it('SIGTERM: the process finishes a stream in flight, writes it and exits 0', async () => {
    const g = await streamingGateway(10, 50);
    let gw: Awaited<ReturnType<typeof spawnGateway>> | undefined;
    try {
      // the same database, served by a real process instead
      await g.s.close();
      gw = await spawnGateway(g.database, { SHUTDOWN_TIMEOUT: '10' });
      const child = gw.child;
      const exited = once(child, 'exit');
      const answer = await streamChat(gw.url, g.key, 'lc-model', () => child.kill('SIGTERM'));
      expect(answer.complete).toBe(true);
      expect(answer.text.trimEnd().endsWith('data: [DONE]')).toBe(true);
      expect((await exited)[0]).toBe(0);
      const after = await rowsLeft(g.database, g.userId);
      expect(after.logs.map((l) => l.quota)).toEqual([18]);
      expect(after.user).toEqual({ quota: START - 18, used_quota: 18, request_count: 1 });
      expect(after.holds).toEqual([]);
      expect(gw.output()).not.toMatch(/reservations not settled/);
    } finally {
      if (gw && gw.child.exitCode === null && gw.child.signalCode === null) gw.child.kill('SIGKILL');
      await g.dispose();
    }
  }, 30_000);

  it('adds quota_data buckets into existing rows', async () => {
    const s = await startTestServer();
    try {
      const qd = relayServices(s.ctx).quotaData;
      const hour = Date.UTC(2026, 0, 1, 10, 30);
      qd.record(7, 'u7', 'm', 10, 5, hour);
      await qd.flush();
      qd.record(7, 'u7', 'm', 3, 2, hour + 60_000);
      qd.record(7, 'u7', 'other', 1, 1, hour);
      await qd.flush();
      const rows = await s.ctx.db
        .selectFrom('quota_data')
        .selectAll()
        .where('user_id', '=', 7)
        .orderBy('model_name')
        .execute();
      expect(rows.map((r) => [r.model_name, r.count, r.quota, r.token_used, r.created_at])).toEqual([
        ['m', 2, 13, 7, Math.floor(hour / 3_600_000) * 3600],
        ['other', 1, 1, 1, Math.floor(hour / 3_600_000) * 3600],
      ]);
    } finally {
      await s.close();
    }
  });

  it('enforces ModelRequestRateLimit per user', async () => {
    const up = await MockUpstream.start();
    const s = await startTestServer();
    try {
      await setOptions(s, {
        ModelRatio: { 'rl-model': 1 },
        ModelRequestRateLimitEnabled: 'true',
        ModelRequestRateLimitCount: '3',
        ModelRequestRateLimitDurationMinutes: '1',
      });
      await addChannel(s, { baseUrl: up.url, models: ['rl-model'] });
      await channelsChanged(s);
      const u = await addUser(s);
      const t = await addToken(s, u.id);
      const call = () =>
        relayPost(s, '/v1/chat/completions', t.key, { model: 'rl-model', messages: [{ role: 'user', content: 'x' }] });
      const statuses = [];
      for (let i = 0; i < 4; i++) statuses.push((await call()).status);
      expect(statuses).toEqual([200, 200, 200, 429]);
      const other = await addUser(s);
      const t2 = await addToken(s, other.id);
      const r = await relayPost(s, '/v1/chat/completions', t2.key, {
        model: 'rl-model',
        messages: [{ role: 'user', content: 'x' }],
      });
      expect(r.status).toBe(200);
    } finally {
      await s.close();
      await up.close();
    }
  });
});
