// The token and user caches without Redis: entries older than SYNC_FREQUENCY keep answering from memory while they
// are re-read in the background, many stale entries in one query; a published change still applies at once.
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { describeEachDb } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { initRelayServices, type RelayServices } from '../../src/relay/services.js';
import { addToken, addUser, waitFor } from './fixtures.js';

await describeEachDb('cache refresh', (kind) => {
  let s: TestServer;
  let svc: RelayServices;

  beforeAll(async () => {
    s = await startTestServer({ kind, env: { SYNC_FREQUENCY: '1' } });
    svc = await initRelayServices(s.ctx);
  });
  afterAll(async () => {
    await s?.close();
  });

  it('re-reads stale tokens and users in one query each, answering from memory meanwhile', async () => {
    const users: Array<{ id: number; username: string; token: { id: number; key: string } }> = [];
    for (let i = 0; i < 20; i++) {
      const u = await addUser(s, { group: 'default' });
      users.push({ ...u, token: await addToken(s, u.id, { name: 'before' }) });
    }
    for (const u of users) {
      expect((await svc.tokens.get(u.token.key))?.name).toBe('before');
      expect((await svc.users.get(u.id))?.group).toBe('default');
    }
    // changed behind the caches' back (another tool, another node without Redis)
    await s.ctx.db
      .updateTable('tokens')
      .set({ name: 'after' })
      .where(
        'user_id',
        'in',
        users.map((u) => u.id),
      )
      .execute();
    await s.ctx.db
      .updateTable('users')
      .set({ group: 'vip' })
      .where(
        'id',
        'in',
        users.map((u) => u.id),
      )
      .execute();
    await new Promise((r) => setTimeout(r, 1100));
    const selects = vi.spyOn(s.ctx.db, 'selectFrom');
    try {
      for (const u of users) {
        expect(svc.tokens.cached(u.token.key)?.name).toBe('before');
        expect(svc.users.cached(u.id)?.group).toBe('default');
      }
      await waitFor(() =>
        users.every((u) => svc.tokens.cached(u.token.key)?.name === 'after' && svc.users.cached(u.id)?.group === 'vip'),
      );
      expect(selects.mock.calls.map((c) => String(c[0])).sort()).toEqual(['tokens', 'users']);
    } finally {
      selects.mockRestore();
    }
  });

  it('lets a change published while an entry is stale win over its queued refresh', async () => {
    const u = await addUser(s);
    const t = await addToken(s, u.id, { name: 'one' });
    expect((await svc.tokens.get(t.key))?.name).toBe('one');
    await new Promise((r) => setTimeout(r, 1100));
    expect(svc.tokens.cached(t.key)?.name).toBe('one'); // stale: a refresh is queued
    // the token is disabled and the change published before the queued refresh runs
    await s.ctx.db.updateTable('tokens').set({ status: 2, name: 'two' }).where('id', '=', t.id).execute();
    s.ctx.changes.publish({ kind: 'token', id: t.id, key: t.key, userId: u.id });
    await waitFor(() => svc.tokens.cached(t.key) === undefined);
    const fresh = await svc.tokens.get(t.key);
    expect(fresh).toMatchObject({ status: 2, name: 'two' });
    await new Promise((r) => setTimeout(r, 50));
    expect(svc.tokens.cached(t.key)).toMatchObject({ status: 2, name: 'two' });
  });
});
