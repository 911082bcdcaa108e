// Shared setup for the channel, token and log suites: one server, root created through POST /api/setup and
// logged in through POST /api/user/login, plus helpers for extra users and change-event recording.
import { expect } from 'vitest';
import bcrypt from 'bcryptjs';
import { ConsoleClient } from '../helpers/console-client.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import type { TestDbKind } from '../helpers/databases.js';
import type { ChangeEvent } from '../../src/services/events.js';

export const ROOT_PASSWORD = 'rootpass123';

export async function startConsole(
  kind: TestDbKind,
  env: Record<string, string> = {},
): Promise<{ server: TestServer; root: ConsoleClient }> {
  const server = await startTestServer({ kind, env: { CRITICAL_RATE_LIMIT_ENABLE: 'false', ...env } });
  const root = new ConsoleClient(server.url);
  const setup = await root.post('/api/setup', {
    username: 'root',
    password: ROOT_PASSWORD,
    confirmPassword: ROOT_PASSWORD,
    SelfUseModeEnabled: false,
    DemoSiteEnabled: false,
  });
  expect(setup.body?.success, JSON.stringify(setup.body)).toBe(true);
  const login = await root.login('root', ROOT_PASSWORD);
  expect(login.body?.success, JSON.stringify(login.body)).toBe(true);
  return { server, root };
}

let seq = 0;
export const uname = (prefix: string) => `${prefix}${process.pid % 1000}${++seq}`.slice(0, 12);

/** Inserts a user row directly and logs in as that user. */
export async function addUser(
  server: TestServer,
  opts: { username?: string; group?: string; role?: number } = {},
): Promise<{ client: ConsoleClient; id: number; username: string }> {
  const username = opts.username ?? uname('u');
  const password = 'userpass123';
  await server.ctx.db
    .insertInto('users')
    .values({
      username,
      password: await bcrypt.hash(password, 4),
      display_name: username,
      group: opts.group ?? 'default',
      role: opts.role ?? 1,
      setting: '',
    })
    .execute();
  const client = new ConsoleClient(server.url);
  const res = await client.login(username, password);
  expect(res.body?.success, JSON.stringify(res.body)).toBe(true);
  return { client, id: client.userId!, username };
}

/** Collects change events published while it is attached. */
export function recordChanges(server: TestServer) {
  const events: ChangeEvent[] = [];
  const stop = server.ctx.changes.subscribe((ev) => events.push(ev));
  return {
    events,
    stop,
    take(): ChangeEvent[] {
      return events.splice(0, events.length);
    },
  };
}
