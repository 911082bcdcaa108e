// The console's drawing log (`midjourneys`) and task log (`tasks`): new-api's GET /api/mj/{,self} and
// /api/task/{,self} (new-api-compat.md, vendors-and-tasks.md §2.5, §3.5). A user's list is always narrowed to their
// own rows by the route, never by a query parameter; tasks.private_data never leaves this module (only the result URL
// it holds is shown, as new-api's TaskDto result_url).
import type { SelectQueryBuilder } from 'kysely';
import type { AppContext } from '../context.js';
import type { Database } from '../db/schema.js';

export interface TaskLogFilter {
  userId?: number;
  channelId?: number;
  /** mj_id for the drawing log, task_id for the task log (exact match, as new-api's) */
  id?: string;
  status?: string;
  action?: string;
  platform?: string;
  /** compared with submit_time: milliseconds for the drawing log, seconds for the task log (as each table stores it) */
  startTimestamp?: number;
  endTimestamp?: number;
}

export interface TaskLogPage<T> {
  items: T[];
  total: number;
  page: number;
  page_size: number;
}

/** Thrown for a query parameter the caller got wrong; the route answers it as `{success:false,message}`. */
export class TaskLogInputError extends Error {}

const DIGITS = /^\d{1,15}$/;

/** An optional non-negative integer parameter: absent or empty is undefined, anything else but digits is refused. */
export function optionalInt(v: string | undefined): number | undefined {
  if (v === undefined || v === '') return undefined;
  if (!DIGITS.test(v)) throw new TaskLogInputError('参数错误');
  return Number(v);
}

/** An optional short text parameter (ids, statuses, actions): longer than any column holding it is refused. */
export function optionalText(v: string | undefined, max: number): string | undefined {
  if (v === undefined || v === '') return undefined;
  if (v.length > max) throw new TaskLogInputError('参数错误');
  return v;
}

export function checkRange(f: TaskLogFilter): TaskLogFilter {
  if (f.startTimestamp && f.endTimestamp && f.startTimestamp > f.endTimestamp) {
    throw new TaskLogInputError('开始时间不能晚于结束时间');
  }
  return f;
}

function narrow<T extends 'midjourneys' | 'tasks', Q extends SelectQueryBuilder<Database, T, any>>(
  q: Q,
  f: TaskLogFilter,
  idColumn: 'mj_id' | 'task_id',
): Q {
  let r: any = q;
  if (f.userId !== undefined) r = r.where('user_id', '=', f.userId);
  if (f.channelId) r = r.where('channel_id', '=', f.channelId);
  if (f.id) r = r.where(idColumn, '=', f.id);
  if (f.status) r = r.where('status', '=', f.status);
  if (f.action) r = r.where('action', '=', f.action);
  if (f.platform && idColumn === 'task_id') r = r.where('platform', '=', f.platform);
  if (f.startTimestamp) r = r.where('submit_time', '>=', f.startTimestamp);
  if (f.endTimestamp) r = r.where('submit_time', '<=', f.endTimestamp);
  return r as Q;
}

/** For an admin's page, the user and channel names of its rows (two lookups); none for a user's own page. */
async function ownerNames(
  ctx: AppContext,
  rows: Array<{ user_id: unknown; channel_id: unknown }>,
  admin: boolean,
): Promise<{ users: Map<number, string> | null; channels: Map<number, string> | null }> {
  if (!admin) return { users: null, channels: null };
  return {
    users: await names(
      ctx,
      'users',
      'username',
      rows.map((r) => Number(r.user_id)),
    ),
    channels: await names(
      ctx,
      'channels',
      'name',
      rows.map((r) => Number(r.channel_id)),
    ),
  };
}

async function names(
  ctx: AppContext,
  table: 'users' | 'channels',
  column: 'username' | 'name',
  ids: number[],
): Promise<Map<number, string>> {
  const wanted = [...new Set(ids.filter((id) => id > 0))];
  const out = new Map<number, string>();
  for (let i = 0; i < wanted.length; i += 500) {
    const rows = (await ctx.db
      .selectFrom(table)
      .select(['id', column] as any)
      .where('id', 'in', wanted.slice(i, i + 500))
      .execute()) as Array<Record<string, unknown>>;
    for (const r of rows) out.set(Number(r.id), String(r[column] ?? ''));
  }
  return out;
}

function parseJson(text: string): unknown {
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

// ---------------------------------------------------------------------------------------------- drawing log

const MJ_COLUMNS = [
  'id',
  'code',
  'user_id',
  'action',
  'mj_id',
  'prompt',
  'prompt_en',
  'description',
  'state',
  'submit_time',
  'start_time',
  'finish_time',
  'image_url',
  'video_url',
  'video_urls',
  'status',
  'progress',
  'fail_reason',
  'channel_id',
  'quota',
  'buttons',
  'properties',
] as const;

export type MidjourneyView = Record<(typeof MJ_COLUMNS)[number], string | number> & {
  username?: string;
  channel_name?: string;
};

export async function queryMidjourneys(
  ctx: AppContext,
  f: TaskLogFilter,
  page: number,
  pageSize: number,
  admin: boolean,
): Promise<TaskLogPage<MidjourneyView>> {
  const base = narrow(ctx.db.selectFrom('midjourneys'), f, 'mj_id');
  const { n } = await base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  const rows = await base
    .select([...MJ_COLUMNS])
    .orderBy('id', 'desc')
    .limit(pageSize)
    .offset((page - 1) * pageSize)
    .execute();
  // new-api's MjForwardUrlEnabled: the console shows the gateway's /mj/image/{id}, which fetches the upstream image
  // through the channel's proxy, instead of the upstream's own URL
  const forward = ctx.options.bool('MjForwardUrlEnabled');
  const server = ctx.options.get('ServerAddress').replace(/\/+$/, '');
  const { users, channels } = await ownerNames(ctx, rows, admin);
  const items = rows.map((r) => {
    const view: MidjourneyView = { ...(r as MidjourneyView) };
    for (const k of ['id', 'code', 'user_id', 'submit_time', 'start_time', 'finish_time', 'channel_id', 'quota'])
      view[k as keyof MidjourneyView] = Number(r[k as keyof typeof r]) as never;
    if (forward && r.image_url && r.mj_id) view.image_url = `${server}/mj/image/${encodeURIComponent(r.mj_id)}`;
    if (users && channels) {
      view.username = users.get(Number(r.user_id)) ?? '';
      view.channel_name = channels.get(Number(r.channel_id)) ?? '';
    }
    return view;
  });
  return { items, total: Number(n), page, page_size: pageSize };
}

// ---------------------------------------------------------------------------------------------- task log

/** new-api's TaskDto: the row without private_data, plus result_url (from private_data) and, for an admin, username. */
export interface TaskView {
  id: number;
  created_at: number;
  updated_at: number;
  task_id: string;
  platform: string;
  user_id: number;
  group: string;
  channel_id: number;
  quota: number;
  action: string;
  status: string;
  fail_reason: string;
  result_url: string;
  /**
   * Ours (new-api has none): where the console plays a finished video whose result needs the gateway's key (Sora's
   * content, streamed from the upstream): the task log's own content route (api/task-log.ts fills it). Empty else.
   */
  content_url: string;
  submit_time: number;
  start_time: number;
  finish_time: number;
  progress: string;
  properties: unknown;
  data: unknown;
  username?: string;
  channel_name?: string;
}

function resultUrl(privateData: string): string {
  const parsed = parseJson(privateData);
  if (parsed && typeof parsed === 'object' && 'result_url' in parsed) {
    const url = (parsed as { result_url: unknown }).result_url;
    if (typeof url === 'string') return url;
  }
  return '';
}

export async function queryTasks(
  ctx: AppContext,
  f: TaskLogFilter,
  page: number,
  pageSize: number,
  admin: boolean,
): Promise<TaskLogPage<TaskView>> {
  const base = narrow(ctx.db.selectFrom('tasks'), f, 'task_id');
  const { n } = await base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  const rows = await base
    .selectAll()
    .orderBy('id', 'desc')
    .limit(pageSize)
    .offset((page - 1) * pageSize)
    .execute();
  const { users, channels } = await ownerNames(ctx, rows, admin);
  const items = rows.map((r): TaskView => {
    const view: TaskView = {
      id: Number(r.id),
      created_at: Number(r.created_at),
      updated_at: Number(r.updated_at),
      task_id: r.task_id,
      platform: r.platform,
      user_id: Number(r.user_id),
      group: r.group,
      channel_id: Number(r.channel_id),
      quota: Number(r.quota),
      action: r.action,
      status: r.status,
      fail_reason: r.fail_reason,
      result_url: resultUrl(r.private_data),
      content_url: '',
      submit_time: Number(r.submit_time),
      start_time: Number(r.start_time),
      finish_time: Number(r.finish_time),
      progress: r.progress,
      properties: parseJson(r.properties),
      data: parseJson(r.data),
    };
    if (users && channels) {
      view.username = users.get(view.user_id) ?? '';
      view.channel_name = channels.get(view.channel_id) ?? '';
    }
    return view;
  });
  return { items, total: Number(n), page, page_size: pageSize };
}
