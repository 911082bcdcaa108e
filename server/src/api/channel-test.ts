// Channel probes (new-api-compat.md §3.4, §4.9), admin only: GET /api/channel/test/:id?model=, GET /api/channel/test
// (test all, asynchronous), GET /api/channel/update_balance[/:id], GET /api/channel/fetch_models/:id, POST
// /api/channel/fetch_models. CHANNEL_TEST_FREQUENCY / CHANNEL_UPDATE_FREQUENCY (minutes) also run test-all / update-all
// on a timer.
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.js';
import { authGuards } from './auth.js';
import { fail, ok } from '../lib/http.js';
import { initRelayServices } from '../relay/services.js';
import type { CachedChannel } from '../services/cache/channel-cache.js';
import { firstEnabledKey, withKey } from '../services/multi-key-pick.js';
import {
  fetchUpstreamModels,
  recordTest,
  testAllChannels,
  testChannel,
  updateBalance,
} from '../relay/channel-probe.js';

/** The answer of updating every enabled channel's balance: how many were updated, and each failure with its reason. */
export interface BalanceReport {
  updated: number;
  failed: { id: number; name: string; message: string }[];
}

/** The channel as a test uses it, or the message that refuses the test. */
function testedKey(ch: CachedChannel, rawIndex: string | undefined): CachedChannel | string {
  if (rawIndex === undefined || rawIndex === '') {
    if (!ch.multiKey) return ch;
    return firstEnabledKey(ch) ?? withKey(ch, 0, ch.multiKey.keys[0] ?? '');
  }
  if (!ch.multiKey) return '该渠道不是多密钥模式';
  const i = /^\d+$/.test(rawIndex) ? Number(rawIndex) : -1;
  if (i < 0 || i >= ch.multiKey.keys.length) return '密钥索引超出范围';
  return withKey(ch, i, ch.multiKey.keys[i]);
}

export async function registerChannelTestRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const svc = await initRelayServices(ctx);
  const auth = authGuards(ctx);
  const channelOf = async (rawId: string) => {
    const id = Number(rawId);
    if (!Number.isInteger(id)) return null;
    let ch = svc.channels.get(id);
    if (!ch) {
      await svc.channels.reload();
      ch = svc.channels.get(id);
    }
    return ch ?? null;
  };

  app.get('/api/channel/test/:id', { preHandler: auth.admin }, async (req) => {
    const ch = await channelOf((req.params as { id: string }).id);
    if (!ch) return fail('渠道不存在');
    const query = req.query as { model?: string; key_index?: string };
    // a multi-key channel is tested with one key: `key_index` (the key manager's test), else its first enabled key
    const keyed = testedKey(ch, query.key_index);
    if (typeof keyed === 'string') return fail(keyed);
    const r = await testChannel(ctx, svc, keyed, query.model);
    await recordTest(ctx, ch.id, r.time);
    return { success: r.ok, message: r.message, time: r.time };
  });

  app.get('/api/channel/test', { preHandler: auth.admin }, async (req) => {
    const started = testAllChannels(ctx, svc, true);
    void started.catch((err) => req.log.error({ err }, 'channel test-all failed'));
    // a run already in progress answers false synchronously enough: check the flag after one tick
    const accepted = await Promise.race([started, new Promise<boolean>((r) => setTimeout(() => r(true), 0))]);
    return accepted ? ok() : fail('测试已在运行中');
  });

  app.get('/api/channel/update_balance/:id', { preHandler: auth.admin }, async (req) => {
    const ch = await channelOf((req.params as { id: string }).id);
    if (!ch) return fail('渠道不存在');
    try {
      const balance = await updateBalance(ctx, svc, ch);
      return { success: true, message: '', balance };
    } catch (e) {
      return fail((e as Error).message);
    }
  });

  // new-api answers a bare success whatever happened; we keep that envelope and add in `data` which channels could not
  // be updated and why, so the console can say so instead of a blanket success (new-api-compat.md §3.4).
  app.get('/api/channel/update_balance', { preHandler: auth.admin }, async () => ok(await updateAll()));

  // new-api's updateAllChannelsBalance: an enabled channel found with no balance left is disabled (余额不足),
  // unless the channel opted out of automatic disabling (auto_ban 0)
  const updateAll = async (): Promise<BalanceReport> => {
    const report: BalanceReport = { updated: 0, failed: [] };
    for (const ch of svc.channels.all()) {
      if (ch.status !== 1) continue;
      let balance: number;
      try {
        balance = await updateBalance(ctx, svc, ch);
      } catch (e) {
        report.failed.push({ id: ch.id, name: ch.name, message: (e as Error).message });
        continue;
      }
      report.updated++;
      if (balance <= 0 && ch.autoBan) await svc.channelStatus.disable(ch.id, '余额不足');
    }
    return report;
  };

  app.get('/api/channel/fetch_models/:id', { preHandler: auth.admin }, async (req) => {
    const ch = await channelOf((req.params as { id: string }).id);
    if (!ch) return fail('渠道不存在');
    try {
      return ok(await fetchUpstreamModels(svc, ch.type, ch.baseUrl, ch.key, ch.setting));
    } catch (e) {
      return fail(`获取模型列表失败: ${(e as Error).message}`);
    }
  });

  // new-api answers this one with 400 for a bad body and 500 for an upstream failure (new-api-compat.md §3.1), still
  // enveloped
  app.post('/api/channel/fetch_models', { preHandler: auth.admin }, async (req, reply) => {
    const b = (req.body ?? {}) as { base_url?: string; type?: number; key?: string };
    if (!b.key) return reply.code(400).send(fail('key 不能为空'));
    try {
      return ok(await fetchUpstreamModels(svc, Number(b.type ?? 1), b.base_url, b.key));
    } catch (e) {
      return reply.code(500).send(fail(`获取模型列表失败: ${(e as Error).message}`));
    }
  });

  // background jobs run on the master only (new-api-compat.md §1.3); the log lines let operators (and the
  // multi-instance test) see which node runs them
  if (ctx.config.nodeType === 'master') {
    if (ctx.config.channelTestFrequencyMin > 0) {
      ctx.log.info({ minutes: ctx.config.channelTestFrequencyMin }, 'automatic channel tests scheduled');
      const t = setInterval(
        () => void testAllChannels(ctx, svc).catch(() => undefined),
        ctx.config.channelTestFrequencyMin * 60_000,
      );
      t.unref();
      ctx.onClose(() => clearInterval(t));
    }
    if (ctx.config.channelUpdateFrequencyMin > 0) {
      ctx.log.info({ minutes: ctx.config.channelUpdateFrequencyMin }, 'automatic channel balance updates scheduled');
      const t = setInterval(() => void updateAll(), ctx.config.channelUpdateFrequencyMin * 60_000);
      t.unref();
      ctx.onClose(() => clearInterval(t));
    }
  }
}
