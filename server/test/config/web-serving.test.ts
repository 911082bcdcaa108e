// Console serving: SPA fallback, the per-IP page-load limit (GlobalWebRateLimit) and the slave-node redirect.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const dist = mkdtempSync(join(tmpdir(), 'gw-web-'));
writeFileSync(join(dist, 'index.html'), '<!doctype html><title>console</title>');
writeFileSync(join(dist, 'app.js'), 'console.log(1)');

describe('serving the console', () => {
  let database: TestDatabase;
  let master: TestServer;
  beforeAll(async () => {
    database = await createTestDatabase('sqlite');
    master = await startTestServer({
      database,
      env: {
        WEB_DIST_DIR: dist,
        GLOBAL_WEB_RATE_LIMIT_ENABLE: 'true',
        GLOBAL_WEB_RATE_LIMIT: '3',
        GLOBAL_WEB_RATE_LIMIT_DURATION: '180',
      },
    });
  });
  afterAll(async () => {
    await master.close();
    await database.drop();
  });

  it('serves index.html for console routes, assets with a long cache, and limits page loads per IP', async () => {
    const asset = await fetch(`${master.url}/app.js`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('cache-control')).toBe('max-age=604800');
    const pages = [];
    for (const path of ['/', '/channel', '/token']) {
      const res = await fetch(master.url + path);
      pages.push(res.status);
      expect(await res.text()).toContain('<title>console</title>');
      expect(res.headers.get('cache-control')).toBe('no-cache');
    }
    expect(pages).toEqual([200, 200, 200]);
    const limited = await fetch(`${master.url}/log`);
    expect(limited.status).toBe(429);
    expect(await limited.text()).toBe('');
    // assets and the API are not counted by the page-load limit
    expect((await fetch(`${master.url}/app.js`)).status).toBe(200);
    expect((await fetch(`${master.url}/api/status`)).status).toBe(200);
  });

  it('redirects console pages to FRONTEND_BASE_URL on a slave node, which runs no migrations', async () => {
    const slave = await startTestServer({
      database,
      env: { NODE_TYPE: 'slave', FRONTEND_BASE_URL: 'https://console.example.com/', WEB_DIST_DIR: dist },
    });
    try {
      const res = await fetch(`${slave.url}/channel?x=1`, { redirect: 'manual' });
      expect(res.status).toBe(301);
      expect(res.headers.get('location')).toBe('https://console.example.com/channel?x=1');
      const api = await fetch(`${slave.url}/api/status`);
      expect(((await api.json()) as { success: boolean }).success).toBe(true);
      expect((await fetch(`${slave.url}/api/nope`)).status).toBe(404);
    } finally {
      await slave.close();
    }
  });
});
