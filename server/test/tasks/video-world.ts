// The set-up the video platforms' relay tests share (vidu, doubao-video, hailuo, wan, veo): a gateway on a fresh
// database of the kind asked, the platform's mocks and channels (the test's `start`, which answers how to close its
// mocks), a caller with quota and a limited token, raw HTTP calls with its key, the balances of a user and a token
// after the log writer has flushed, and a task's row with its upstream id.
import { afterAll, beforeAll } from 'vitest';
import { createTestDatabase, type TestDatabase, type TestDbKind } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { addToken, addUser, channelsChanged, flushLogs } from '../relay/fixtures.js';

export interface VideoWorld {
  caller(): Promise<{
    user: Awaited<ReturnType<typeof addUser>>;
    token: Awaited<ReturnType<typeof addToken>>;
    key: string;
  }>;
  call(key: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
  balances(userId: number, tokenId: number): Promise<{ user: number; token: number }>;
  taskRow(publicId: string): Promise<Record<string, any> & { upstreamId: string }>;
}

/**
 * Starts the world before the suite's tests and stops it after them. `start` gets the started gateway, adds the
 * platform's mocks, channels and prices, and answers a function that closes its mocks; the channels are reloaded
 * after it.
 */
export function videoWorld(
  kind: TestDbKind,
  tokenName: string,
  start: (s: TestServer) => Promise<() => Promise<void>>,
  /** run before the gateway starts: the environment it is started with (a mock's address it must know at start) */
  env?: () => Promise<Record<string, string>>,
): VideoWorld {
  let tdb: TestDatabase;
  let s: TestServer;
  let closeMocks: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    tdb = await createTestDatabase(kind);
    s = await startTestServer({ database: tdb, env: await env?.() });
    closeMocks = await start(s);
    await channelsChanged(s);
  });
  afterAll(async () => {
    await s?.close();
    await closeMocks?.();
    await tdb?.drop();
  });

  return {
    async caller() {
      const user = await addUser(s, { quota: 2_000_000 });
      const token = await addToken(s, user.id, { remain: 1_500_000, unlimited: false, name: tokenName });
      return { user, token, key: `sk-${token.key}` };
    },
    async call(key, method, path, body) {
      const res = await fetch(`${s.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      return { status: res.status, body: (await res.json()) as any };
    },
    async balances(userId, tokenId) {
      await flushLogs(s);
      const u = await s.ctx.db.selectFrom('users').select('quota').where('id', '=', userId).executeTakeFirstOrThrow();
      const t = await s.ctx.db
        .selectFrom('tokens')
        .select('remain_quota')
        .where('id', '=', tokenId)
        .executeTakeFirstOrThrow();
      return { user: Number(u.quota), token: Number(t.remain_quota) };
    },
    async taskRow(publicId) {
      const row = await s.ctx.db
        .selectFrom('tasks')
        .selectAll()
        .where('task_id', '=', publicId)
        .executeTakeFirstOrThrow();
      return { ...row, upstreamId: (JSON.parse(row.private_data) as { upstream_task_id: string }).upstream_task_id };
    },
  };
}
