// The poller's upstream step (services/tasks/poller.ts runs it under the cluster's lease): the unfinished tasks of
// every task platform, batched per channel (one fetch asks for up to the adaptor's fetchBatch ids, with the channel's
// key), a few calls at a time, each with a time limit; the states read are applied through apply.ts (compare-and-set,
// FAILURE refunded once). A channel that cannot be reached or answers no success leaves its tasks as they are, to be
// asked again at the next tick; the timeout sweep ends them if it lasts.
import type { AppContext } from '../../context.js';
import { applyFetchedStates, upstreamTaskId, type PolledTask } from '../../services/tasks/apply.js';
import { TERMINAL_STATUSES } from '../../services/tasks/status.js';
import { TASK_PLATFORMS, taskAdaptorOf, type ProviderChannel, type TaskAdaptor } from '../providers/index.js';
import { callTaskUpstream } from './upstream.js';
import { proxyOfSetting } from '../channel-setting.js';
import { channelBaseUrl } from '../../services/channel-types.js';
import { relayServices } from '../services.js';

/** unfinished tasks read per platform and tick at most (the oldest first) */
const TASKS_PER_TICK = 1000;
/** fetch calls in flight at once, over all channels */
const CONCURRENCY = 4;
const FETCH_TIMEOUT_MS = 15_000;

export interface PollResult {
  asked: number;
  changed: number;
  failed: number;
  ignored: number;
  errors: number;
}

interface Batch {
  task: TaskAdaptor;
  channel: ProviderChannel & { id: number };
  tasks: PolledTask[];
  ids: string[];
  /** the channel's proxy, as its relay calls use */
  proxy: string | null;
}

export async function pollTaskUpstreams(ctx: AppContext, now: number): Promise<PollResult> {
  const result: PollResult = { asked: 0, changed: 0, failed: 0, ignored: 0, errors: 0 };
  // a platform whose key is exchanged for a token (Vertex's) asks the relay's credential cache, as its submit did
  const settings = settingsOf(ctx);
  const batches: Batch[] = [];
  for (const platform of TASK_PLATFORMS) batches.push(...(await batchesOf(ctx, platform)));
  let next = 0;
  const worker = async () => {
    while (next < batches.length) {
      const b = batches[next++];
      try {
        const answer = await callTaskUpstream(
          await b.task.buildFetch(
            b.channel,
            b.ids,
            b.tasks.map((t) => t.action ?? ''),
            { settings },
          ),
          FETCH_TIMEOUT_MS,
          b.proxy,
        );
        const states = b.task.readFetch(answer.status, answer.body, b.ids);
        if (!states) {
          result.errors++;
          ctx.log.warn({ channelId: b.channel.id, status: answer.status }, 'task fetch: no success answer');
          continue;
        }
        result.asked += b.ids.length;
        const applied = await applyFetchedStates(ctx, b.tasks, states, now);
        result.changed += applied.changed;
        result.failed += applied.failed;
        result.ignored += applied.ignored;
      } catch (err) {
        result.errors++;
        ctx.log.warn({ err, channelId: b.channel.id }, 'task fetch failed');
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, batches.length) }, worker));
  return result;
}

async function batchesOf(ctx: AppContext, platform: string): Promise<Batch[]> {
  const rows = await ctx.db
    .selectFrom('tasks')
    .select(['id', 'channel_id', 'private_data', 'action'])
    .where('platform', '=', platform)
    .where('status', 'not in', TERMINAL_STATUSES)
    .orderBy('id')
    .limit(TASKS_PER_TICK)
    .execute();
  if (!rows.length) return [];
  // the platform's folder is loaded only once it has tasks to ask about
  const task = await taskAdaptorOf(platform);
  const byChannel = new Map<number, PolledTask[]>();
  for (const r of rows) {
    const list = byChannel.get(Number(r.channel_id)) ?? [];
    list.push({ id: Number(r.id), private_data: r.private_data, action: r.action });
    byChannel.set(Number(r.channel_id), list);
  }
  // read from the table, not the relay's cache: a channel disabled since still answers for the tasks it took
  const channels = await ctx.db
    .selectFrom('channels')
    .select(['id', 'type', 'key', 'base_url', 'other', 'open_ai_organization', 'setting'])
    .where('id', 'in', [...byChannel.keys()])
    .execute();
  const batches: Batch[] = [];
  for (const c of channels) {
    // the type's default address when the channel names none (an OpenAI or Sora channel's api.openai.com)
    const baseUrl = channelBaseUrl(Number(c.type), c.base_url);
    if (!baseUrl && !task.baseUrlOptional) continue;
    const channel = {
      id: Number(c.id),
      type: Number(c.type),
      key: keyOf(c.key ?? ''),
      baseUrl,
      other: c.other ?? '',
      organization: c.open_ai_organization ?? '',
    };
    const tasks = (byChannel.get(channel.id) ?? []).filter((t) => upstreamIdOf(t));
    for (let i = 0; i < tasks.length; i += task.fetchBatch) {
      const part = tasks.slice(i, i + task.fetchBatch);
      batches.push({ task, channel, tasks: part, ids: part.map(upstreamIdOf), proxy: proxyOfSetting(c.setting) });
    }
  }
  return batches;
}

const upstreamIdOf = (t: PolledTask) => upstreamTaskId(t.private_data);

/** The key a fetch is sent with: the first line, but a JSON document key (Vertex's service account) whole. */
export function keyOf(key: string): string {
  const trimmed = key.trim();
  return trimmed.startsWith('{') ? trimmed : trimmed.split('\n')[0].trim();
}

export function settingsOf(ctx: AppContext) {
  try {
    return relayServices(ctx).providers;
  } catch {
    // a poll outside a serving process (no relay services): no platform that needs them can be asked
    return undefined;
  }
}
