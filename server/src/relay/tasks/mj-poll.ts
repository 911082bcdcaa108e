// The poller's Midjourney step (services/tasks/poller.ts runs it under the cluster's lease, beside poll.ts): the
// unfinished drawing tasks, batched per channel into midjourney-proxy's `POST /mj/task/list-by-condition {ids}` (the
// channel's key and proxy, 15 s), a few calls at a time. Each row's change (providers/midjourney/task.ts
// planMjPollBatch: progress, image and video URLs, buttons; FAILURE; unfinished an hour after its submit → FAILURE)
// is applied with services/tasks/mj-apply.ts's compare-and-set, a failure refunded once. An id the upstream adds
// that nobody asked about is ignored; a channel that cannot be reached or answers no list leaves its rows as they are
// but for the timeout; a channel that no longer exists fails its rows (new-api's "获取渠道信息失败").
import type { AppContext } from '../../context.js';
import { applyMjChange, type MjAppliedRow, type MjChange } from '../../services/tasks/mj-apply.js';
import {
  buildMjListRequest,
  MJ_TERMINAL_STATUSES,
  planMjPollBatch,
  readMjTaskList,
  type MjRowSnapshot,
  type MjTaskState,
} from '../providers/midjourney/index.js';
import { MJ_CHANNEL_TYPES } from '../providers/midjourney/provider.js';
import { proxyOfSetting } from '../channel-setting.js';
import { callTaskUpstream } from './upstream.js';

/** unfinished rows read per tick at most (the oldest first) */
const ROWS_PER_TICK = 1000;
/** ids asked for in one list-by-condition call */
const LIST_BATCH = 100;
const CONCURRENCY = 4;
export const MJ_CHANNEL_GONE_REASON = '获取渠道信息失败，请联系管理员';

export interface MjPollResult {
  asked: number;
  changed: number;
  refunded: number;
  errors: number;
}

type Row = MjRowSnapshot & MjAppliedRow;

interface Batch {
  rows: Row[];
  channel: { id: number; baseUrl: string; key: string; proxy: string | null } | null;
}

export async function pollMidjourney(ctx: AppContext, nowSec: number): Promise<MjPollResult> {
  const result: MjPollResult = { asked: 0, changed: 0, refunded: 0, errors: 0 };
  const nowMs = nowSec * 1000;
  const batches = await batchesOf(ctx);
  const write = async (row: Row, update: MjChange) => {
    const outcome = await applyMjChange(ctx, row, update, nowSec);
    if (outcome !== 'lost') result.changed++;
    if (outcome === 'refunded') result.refunded++;
  };
  const apply = async (rows: Row[], states: readonly MjTaskState[]) => {
    for (const { row, update } of planMjPollBatch(rows, states, nowMs)) await write(row, update);
  };
  let next = 0;
  const worker = async () => {
    while (next < batches.length) {
      const b = batches[next++];
      try {
        if (!b.channel) {
          // no channel to ask: every row fails (refunded when it was charged)
          for (const row of b.rows) {
            const set = {
              status: 'FAILURE',
              progress: '100%',
              fail_reason: MJ_CHANNEL_GONE_REASON,
              finish_time: nowMs,
            };
            await write(row, { set, expectStatus: row.status, refund: row.quota > 0 });
          }
          continue;
        }
        let states: MjTaskState[] = [];
        try {
          const request = buildMjListRequest(b.channel, b.rows.map((r) => r.mj_id).filter(Boolean));
          const answer = await callTaskUpstream(request, request.timeoutMs, b.channel.proxy);
          const list = answer.status === 200 ? readMjTaskList(answer.body) : null;
          if (list) {
            states = list;
            result.asked += b.rows.length;
          } else {
            result.errors++;
            ctx.log.warn({ channelId: b.channel.id, status: answer.status }, 'midjourney list: no list answered');
          }
        } catch (err) {
          result.errors++;
          ctx.log.warn({ err, channelId: b.channel.id }, 'midjourney list failed');
        }
        // with or without an answer: the timeout still applies
        await apply(b.rows, states);
      } catch (err) {
        result.errors++;
        ctx.log.warn({ err }, 'midjourney poll batch failed');
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, batches.length) }, worker));
  return result;
}

async function batchesOf(ctx: AppContext): Promise<Batch[]> {
  const rows = await ctx.db
    .selectFrom('midjourneys')
    .select(['id', 'mj_id', 'user_id', 'channel_id', 'quota', 'status', 'progress', 'submit_time'])
    .where('status', 'not in', MJ_TERMINAL_STATUSES)
    .orderBy('id')
    .limit(ROWS_PER_TICK)
    .execute();
  if (!rows.length) return [];
  const byChannel = new Map<number, Row[]>();
  for (const r of rows) {
    const row: Row = {
      id: Number(r.id),
      mj_id: r.mj_id,
      user_id: Number(r.user_id),
      channel_id: Number(r.channel_id),
      quota: Number(r.quota),
      status: r.status,
      progress: r.progress,
      submit_time: Number(r.submit_time),
    };
    const list = byChannel.get(row.channel_id) ?? [];
    list.push(row);
    byChannel.set(row.channel_id, list);
  }
  // read from the table, not the relay's cache: a channel disabled since still answers for the tasks it took
  const channels = await ctx.db
    .selectFrom('channels')
    .select(['id', 'type', 'key', 'base_url', 'setting'])
    .where('id', 'in', [...byChannel.keys()])
    .execute();
  const found = new Map(channels.map((c) => [Number(c.id), c]));
  const batches: Batch[] = [];
  for (const [channelId, list] of byChannel) {
    const c = found.get(channelId);
    const baseUrl = (c?.base_url ?? '').replace(/\/+$/, '');
    const channel =
      c && baseUrl && MJ_CHANNEL_TYPES.includes(Number(c.type))
        ? { id: channelId, baseUrl, key: (c.key ?? '').split('\n')[0].trim(), proxy: proxyOfSetting(c.setting) }
        : null;
    for (let i = 0; i < list.length; i += LIST_BATCH) batches.push({ rows: list.slice(i, i + LIST_BATCH), channel });
  }
  return batches;
}
