// The token cache under a flood of unknown keys (without Redis): misses are remembered for a few seconds, at most
// maxNegatives of them, and a key longer than the column's 48 characters is refused without a read or an entry; real
// tokens keep answering from memory throughout.
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { describeEachDb } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { initRelayServices, type RelayServices } from '../../src/relay/services.js';
import { TOKEN_KEY_MAX } from '../../src/services/cache/token-cache.js';
import { addToken, addUser, relayPost } from './fixtures.js';

await describeEachDb('token cache bounds', (kind) => {
  let s: TestServer;
  let svc: RelayServices;

  beforeAll(async () => {
    s = await startTestServer({ kind });
    svc = await initRelayServices(s.ctx);
  });
  afterAll(async () => {
    await s?.close();
  });

  it('remembers at most maxNegatives unknown keys; a remembered miss and the real tokens need no read', async () => {
    const tokens = svc.tokens;
    const saved = tokens.maxNegatives;
    tokens.maxNegatives = 50;
    try {
      const u = await addUser(s);
      const t = await addToken(s, u.id);
      expect((await tokens.get(t.key))?.id).toBe(t.id);
      for (let i = 0; i < 300; i++) expect(await tokens.get(`unknown${String(i).padStart(41, '0')}`)).toBeNull();
      const counts = tokens.entryCounts;
      expect(counts.negative).toBeGreaterThan(0);
      expect(counts.negative).toBeLessThanOrEqual(50);
      expect(counts.all - counts.negative).toBeGreaterThanOrEqual(1);
      const reads = vi.spyOn(s.ctx.db, 'selectFrom');
      try {
        expect(await tokens.get(`unknown${String(299).padStart(41, '0')}`)).toBeNull();
        expect((await tokens.get(t.key))?.id).toBe(t.id);
        expect(reads).not.toHaveBeenCalled();
      } finally {
        reads.mockRestore();
      }
    } finally {
      tokens.maxNegatives = saved;
    }
  });

  it('refuses a key longer than the column without reading or remembering it', async () => {
    const long = 'k'.repeat(16_000);
    const before = svc.tokens.entryCounts;
    const reads = vi.spyOn(s.ctx.db, 'selectFrom');
    try {
      expect(await svc.tokens.get(long)).toBeNull();
      expect(await svc.tokens.get('k'.repeat(TOKEN_KEY_MAX + 1))).toBeNull();
      expect(reads).not.toHaveBeenCalled();
    } finally {
      reads.mockRestore();
    }
    expect(svc.tokens.entryCounts).toEqual(before);
    // the caller is told its token is not valid, in the relay's error shape
    const res = await relayPost(s, '/v1/chat/completions', long, { model: 'm', messages: [] });
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: { message: string } }).error.message).toContain('无效的令牌');
  });
});
