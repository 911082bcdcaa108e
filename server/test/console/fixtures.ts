// Shared steps for the console suites: finish setup, log in as root, create users with a given role.
import { expect } from 'vitest';
import { ConsoleClient } from '../helpers/console-client.js';
import type { TestServer } from '../helpers/server.js';

export const ROOT = { username: 'root', password: 'rootpass123' };

export async function setupAndLoginRoot(server: TestServer): Promise<ConsoleClient> {
  const anon = new ConsoleClient(server.url);
  const status = await anon.get('/api/setup');
  if (!status.body.data.status) {
    const res = await anon.post('/api/setup', {
      ...ROOT,
      confirmPassword: ROOT.password,
      SelfUseModeEnabled: false,
      DemoSiteEnabled: false,
    });
    expect(res.body).toEqual({ success: true, message: '系统初始化成功' });
  }
  const root = new ConsoleClient(server.url);
  const login = await root.login(ROOT.username, ROOT.password);
  expect(login.body.success).toBe(true);
  return root;
}

let seq = 0;
/** A unique username of at most 12 chars. */
export function uname(prefix = 'u'): string {
  seq += 1;
  return `${prefix}${process.pid % 1000}${seq}`.slice(0, 12);
}

/** Registers a user through the public route and logs them in. */
export async function registerAndLogin(
  server: TestServer,
  username = uname(),
  password = 'password123',
  extra: Record<string, unknown> = {},
) {
  const c = new ConsoleClient(server.url);
  const reg = await c.post('/api/user/register', { username, password, password2: password, ...extra });
  expect(reg.body, JSON.stringify(reg.body)).toMatchObject({ success: true });
  const login = await c.login(username, password);
  expect(login.body.success).toBe(true);
  return { client: c, id: login.body.data.id as number, username, password };
}

/** A user with the given role (root creates it and promotes it when needed). */
export async function userWithRole(server: TestServer, root: ConsoleClient, role: 1 | 10) {
  const u = await registerAndLogin(server);
  if (role === 10) {
    const res = await root.post('/api/user/manage', { id: u.id, action: 'promote' });
    expect(res.body).toMatchObject({ success: true, data: { role: 10, status: 1 } });
    // a role change ends the user's sessions
    expect((await u.client.login(u.username, u.password)).body.success).toBe(true);
  }
  return u;
}

export async function setOption(root: ConsoleClient, key: string, value: unknown) {
  const res = await root.put('/api/option/', { key, value });
  expect(res.body, `${key}: ${JSON.stringify(res.body)}`).toMatchObject({ success: true });
}
