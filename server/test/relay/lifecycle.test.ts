// Work that happens off the request path: settlements, consume logs and dashboard buckets are written on shutdown;
// quota_data buckets add up per (user, model, hour); ModelRequestRateLimit counts per user.
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/connect.js';
import { createTestDatabase } from '../helpers/databases.js';
import { startTestServer } from '../helpers/server.js';
import { MockUpstream } from '../helpers/mock-upstream.js';
import { relayServices } from '../../src/services/cache/index.js';
import { addChannel, addToken, addUser, channelsChanged, client, setOptions, relayPost } from './fixtures.js';

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
      for (let i = 0; i < 3; i++) await c.chat.completions.create({ model: 'lc-model', messages: [{ role: 'user', content: 'x' }] });
    } finally {
      await s.close();
      await up.close();
    }
    const { db, close } = await openDatabase({ dsn: '', sqlitePath: database.sqlitePath });
    try {
      const logs = await db.selectFrom('logs').selectAll().where('user_id', '=', userId).execute();
      expect(logs).toHaveLength(3);
      expect(logs.every((l) => l.quota === 18)).toBe(true);
      const user = await db.selectFrom('users').select(['quota', 'used_quota', 'request_count']).where('id', '=', userId).executeTakeFirstOrThrow();
      expect(user).toEqual({ quota: 1000_000 - 54, used_quota: 54, request_count: 3 });
      const qd = await db.selectFrom('quota_data').selectAll().where('user_id', '=', userId).execute();
      expect(qd).toHaveLength(1);
      expect(qd[0]).toMatchObject({ username: 'lifecycle', model_name: 'lc-model', count: 3, quota: 54, token_used: 54 });
      expect(qd[0].created_at % 3600).toBe(0);
    } finally {
      await close();
      await database.drop();
    }
  });

  it('adds quota_data buckets into existing rows', async () => {
    const s = await startTestServer();
    try {
      const qd = relayServices(s.ctx).quotaData;
      const hour = Date.UTC(2026, 0, 1, 10, 30) ;
      qd.record(7, 'u7', 'm', 10, 5, hour);
      await qd.flush();
      qd.record(7, 'u7', 'm', 3, 2, hour + 60_000);
      qd.record(7, 'u7', 'other', 1, 1, hour);
      await qd.flush();
      const rows = await s.ctx.db.selectFrom('quota_data').selectAll().where('user_id', '=', 7).orderBy('model_name').execute();
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
      await setOptions(s, { ModelRatio: { 'rl-model': 1 }, ModelRequestRateLimitEnabled: 'true', ModelRequestRateLimitCount: '3', ModelRequestRateLimitDurationMinutes: '1' });
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
      const r = await relayPost(s, '/v1/chat/completions', t2.key, { model: 'rl-model', messages: [{ role: 'user', content: 'x' }] });
      expect(r.status).toBe(200);
    } finally {
      await s.close();
      await up.close();
    }
  });
});
