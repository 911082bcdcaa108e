// Data set-up for relay tests: rows go straight into the database (the console routes are written elsewhere), then
// the change events the console would publish.
import OpenAI from 'openai';
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import type { TestServer } from '../helpers/server.js';
import { relayServices } from '../../src/relay/services.js';
import { readHolds } from '../../src/services/quota-holds.js';

export const key48 = () => randomBytes(24).toString('hex');

export async function addUser(
  s: TestServer,
  o: { username?: string; quota?: number; group?: string; role?: number; status?: number; setting?: string } = {},
) {
  const username = o.username ?? `u${randomBytes(4).toString('hex')}`;
  await s.ctx.db
    .insertInto('users')
    .values({
      username,
      password: 'x',
      quota: o.quota ?? 1_000_000,
      group: o.group ?? 'default',
      role: o.role ?? 1,
      status: o.status ?? 1,
      setting: o.setting ?? '',
    })
    .execute();
  const row = await s.ctx.db
    .selectFrom('users')
    .select('id')
    .where('username', '=', username)
    .executeTakeFirstOrThrow();
  return { id: row.id, username };
}

export async function addToken(
  s: TestServer,
  userId: number,
  o: {
    key?: string;
    remain?: number;
    unlimited?: boolean;
    status?: number;
    expired?: number;
    group?: string;
    modelLimits?: string;
    allowIps?: string;
    name?: string;
  } = {},
) {
  const key = o.key ?? key48();
  await s.ctx.db
    .insertInto('tokens')
    .values({
      user_id: userId,
      key,
      name: o.name ?? 'test-token',
      status: o.status ?? 1,
      remain_quota: o.remain ?? 0,
      unlimited_quota: o.unlimited ?? true,
      expired_time: o.expired ?? -1,
      group: o.group ?? '',
      model_limits_enabled: !!o.modelLimits,
      model_limits: o.modelLimits ?? '',
      allow_ips: o.allowIps ?? '',
    })
    .execute();
  const row = await s.ctx.db.selectFrom('tokens').select('id').where('key', '=', key).executeTakeFirstOrThrow();
  s.ctx.changes.publish({ kind: 'token', id: row.id, key, userId });
  return { id: row.id, key };
}

export interface ChannelSpec {
  type?: number;
  name?: string;
  key?: string;
  baseUrl: string;
  models: string[];
  groups?: string[];
  priority?: number;
  weight?: number;
  status?: number;
  modelMapping?: Record<string, string>;
  statusCodeMapping?: Record<string, string>;
  paramOverride?: Record<string, unknown>;
  other?: string;
  autoBan?: number;
  organization?: string;
  setting?: Record<string, unknown>;
}

export async function addChannel(s: TestServer, c: ChannelSpec): Promise<number> {
  const groups = c.groups ?? ['default'];
  const name = c.name ?? `ch-${randomBytes(3).toString('hex')}`;
  await s.ctx.db
    .insertInto('channels')
    .values({
      type: c.type ?? 1,
      key: c.key ?? 'sk-upstream',
      name,
      base_url: c.baseUrl,
      models: c.models.join(','),
      group: groups.join(','),
      priority: c.priority ?? 0,
      weight: c.weight ?? 0,
      status: c.status ?? 1,
      model_mapping: c.modelMapping ? JSON.stringify(c.modelMapping) : '',
      status_code_mapping: c.statusCodeMapping ? JSON.stringify(c.statusCodeMapping) : '',
      param_override: c.paramOverride ? JSON.stringify(c.paramOverride) : null,
      other: c.other ?? '',
      auto_ban: c.autoBan ?? 1,
      open_ai_organization: c.organization ?? null,
      setting: c.setting ? JSON.stringify(c.setting) : null,
      created_time: Math.floor(Date.now() / 1000),
    })
    .execute();
  const row = await s.ctx.db.selectFrom('channels').select('id').where('name', '=', name).executeTakeFirstOrThrow();
  for (const g of groups)
    for (const m of c.models)
      await s.ctx.db
        .insertInto('abilities')
        .values({
          group: g,
          model: m,
          channel_id: row.id,
          enabled: (c.status ?? 1) === 1,
          priority: c.priority ?? 0,
          weight: c.weight ?? 0,
        })
        .execute();
  return row.id;
}

/** Publishes {kind:'channels'} and waits for the routing cache to rebuild. */
export async function channelsChanged(s: TestServer): Promise<void> {
  s.ctx.changes.publish({ kind: 'channels' });
  await relayServices(s.ctx).channels.reload();
}

export async function setOptions(s: TestServer, opts: Record<string, unknown>): Promise<void> {
  for (const [k, v] of Object.entries(opts)) await s.ctx.options.set(k, typeof v === 'string' ? v : JSON.stringify(v));
}

export function client(s: TestServer, key: string): OpenAI {
  return new OpenAI({
    apiKey: key.startsWith('sk-') ? key : `sk-${key}`,
    baseURL: `${s.url}/v1`,
    maxRetries: 0,
    timeout: 20_000,
  });
}

/** A raw POST to a relay path with a token (`sk-` added), for tests that look at statuses and bodies as sent. */
export function relayPost(s: TestServer, path: string, key: string, body: unknown): Promise<Response> {
  return fetch(`${s.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer sk-${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

/** Writes queued settlements and log rows (both are batched off the request path). */
export async function flushLogs(s: TestServer): Promise<void> {
  const svc = relayServices(s.ctx);
  await Promise.allSettled([...svc.inFlight]);
  await svc.billing.flush();
  await svc.logs.flush();
}

export async function userRow(s: TestServer, id: number) {
  return s.ctx.db
    .selectFrom('users')
    .select(['quota', 'used_quota', 'request_count'])
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
}

export async function tokenRow(s: TestServer, id: number) {
  return s.ctx.db
    .selectFrom('tokens')
    .select(['remain_quota', 'used_quota', 'accessed_time', 'status'])
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
}

/** What the server's process still holds for a user in open reservations (services/quota-holds.ts), as [token, user, token amount]. */
export async function openHolds(s: TestServer, userId: number) {
  const rows = await readHolds(s.ctx.db, { node: relayServices(s.ctx).billing.node, userId });
  return rows.map((h) => [h.tokenId, h.user, h.token]);
}

export async function logsOf(s: TestServer, userId: number) {
  await flushLogs(s);
  const rows = await s.ctx.logDb
    .selectFrom('logs')
    .selectAll()
    .where('user_id', '=', userId)
    .orderBy('id', 'asc')
    .execute();
  return rows.map((r) => ({ ...r, otherJson: JSON.parse(r.other || '{}') }));
}

export async function waitFor(cond: () => Promise<boolean> | boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await cond()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('condition not met in time');
}

/** A relay request on a raw socket: what came back so far, and the socket to drop. */
export function rawChat(
  url: string,
  key: string,
  body: unknown,
  onData?: (text: string) => void,
  path = '/v1/chat/completions',
  /** how the key is sent (default `Authorization: Bearer sk-<key>`) */
  auth = `Authorization: Bearer sk-${key}`,
) {
  const u = new URL(url);
  const payload = JSON.stringify(body);
  const sock = net.connect(Number(u.port), u.hostname);
  let received = '';
  sock.on('data', (c) => {
    received += c.toString();
    onData?.(received);
  });
  sock.on('error', () => undefined);
  sock.write(
    `POST ${path} HTTP/1.1\r\nHost: ${u.host}\r\n${auth}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(payload)}\r\n\r\n${payload}`,
  );
  return { sock, received: () => received };
}
