// One set of relay services per AppContext (caches, billing, log writer, dashboard buckets, channel health, the
// upstream HTTP pool), created once at start-up by initRelayServices and shut down through ctx.onClose.
import { UPSTREAM_POOL } from '../lib/undici.js';
import { LeanHttpClient } from '../lib/lean-http/client.js';
import { directTransport, UndiciTransport, type Transport } from './transport/index.js';
import { providerSettings } from './provider-settings.js';
import { transportFor } from './channel-setting.js';
import { sendWhole } from './lanes/upstream-request.js';
import { CredentialCache } from './credential-cache.js';
import { WebSocketTransport } from './transport/websocket.js';
import { remoteImageFetcher } from './providers/media.js';
import { userUrlFetch } from '../lib/safe-fetch.js';
import type { ProviderSettings } from './providers/types.js';
import type { AppContext } from '../context.js';
import { Billing } from '../services/billing/index.js';
import { ChannelStatus } from '../services/channel-status.js';
import { LogWriter } from '../services/log-writer.js';
import { QuotaData } from '../services/quota-data.js';
import { QuotaNotifier } from '../services/quota-notify.js';
import { ChannelCache } from '../services/cache/channel-cache.js';
import { TokenCache } from '../services/cache/token-cache.js';
import { UserCache } from '../services/cache/user-cache.js';
import { startSqliteWorker } from '../services/sqlite-worker.js';
import { clearAfterOutage } from '../services/cache/redis-outage.js';
import { metricsOf, type GatewayMetrics } from '../services/metrics.js';
import { startTracing, type RelayTracer } from '../services/tracing.js';
import { channelAffinity, type ChannelAffinity } from '../services/channel-affinity/index.js';

export interface RelayServices {
  tokens: TokenCache;
  users: UserCache;
  channels: ChannelCache;
  billing: Billing;
  logs: LogWriter;
  quotaData: QuotaData;
  /** low-balance notices after a charge (new-api-compat.md §5.9) */
  notifier: QuotaNotifier;
  channelStatus: ChannelStatus;
  /**
   * keep-alive connection pools, one per upstream origin (undici's Agent): made, undici imported, with the first
   * request the lean client does not take; at start when LEAN_HTTP is off (undici is then the relay's client)
   */
  http: UndiciTransport;
  /** the relay's upstream calls through `http` that lib/lean-http/client.ts takes (LEAN_HTTP; null when off) */
  lean: LeanHttpClient | null;
  /** upstream calls without a proxy: `lean` when it takes them, else `http` (relay/transport/) */
  upstream: Transport;
  /**
   * upstream websockets (relay/transport/websocket.ts), proxied or not, under the HTTP pool's per-origin connection
   * limit; `ws` is imported with the first socket
   */
  websockets: WebSocketTransport;
  /** what providers read: vendor options, credentials caches (provider-settings.ts) */
  providers: ProviderSettings;
  /** relay requests in flight: a stop waits for them (they settle and log) before the final flushes */
  inFlight: Set<Promise<void>>;
  /** upstream calls still being read for clients that went away (relay/attempt.ts); a stop aborts them */
  leftBehind: Set<{ destroy(): void }>;
  /** Prometheus counters the pipeline moves (services/metrics.ts) */
  metrics: GatewayMetrics;
  /** OpenTelemetry spans of relay requests; null unless OTEL_EXPORTER_OTLP_ENDPOINT is set (services/tracing.ts) */
  tracer: RelayTracer | null;
  /** sticky channels of coding-agent conversations (services/channel-affinity/, relay/pipeline/affinity.ts) */
  affinity: ChannelAffinity;
}

const registry = new WeakMap<AppContext, RelayServices>();
const starting = new WeakMap<AppContext, Promise<RelayServices>>();

export function initRelayServices(ctx: AppContext): Promise<RelayServices> {
  const existing = starting.get(ctx);
  if (existing) return existing;
  const p = (async () => {
    const tokens = new TokenCache(ctx);
    const users = new UserCache(ctx);
    const channels = new ChannelCache(ctx);
    // exchanged tokens (Vertex AI's), one cache for the process; a key no channel holds any more loses its token
    const credentials = new CredentialCache();
    channels.onKeyRetired((key) => credentials.forget(key));
    const logs = new LogWriter(ctx);
    const quotaData = new QuotaData(ctx);
    const http = new UndiciTransport((undici) => new undici.Agent(UPSTREAM_POOL));
    const lean = ctx.config.leanHttp
      ? new LeanHttpClient({
          keepAliveTimeout: UPSTREAM_POOL.keepAliveTimeout!,
          connections: UPSTREAM_POOL.connections!,
        })
      : null;
    if (!lean) await http.ready();
    const upstream = directTransport(http, lean);
    const notifier = new QuotaNotifier(ctx);
    const tracer = await startTracing(ctx);
    // registered before the hook below, so it runs after it: the spans of the requests that drain are exported too
    if (tracer) ctx.onClose(() => tracer.shutdown());
    const svc: RelayServices = {
      tokens,
      users,
      channels,
      billing: new Billing(ctx, tokens, users),
      logs,
      quotaData,
      notifier,
      channelStatus: new ChannelStatus(
        ctx,
        (key, title, content) => void notifier.notifyRoot('channel_update', key, title, content),
      ),
      http,
      lean,
      upstream,
      websockets: new WebSocketTransport({ connections: UPSTREAM_POOL.connections! }),
      // remote images are user-chosen URLs: fetched with the instance's SSRF-safe client (tests set its policy)
      // a provider's own upstream calls (Baidu's token exchange) go as the relay's: the channel's proxy, else direct
      providers: providerSettings(ctx, credentials, remoteImageFetcher(userUrlFetch(ctx)), (channel, req) =>
        sendWhole(transportFor({ setting: channel.setting ?? null }, upstream), req),
      ),
      inFlight: new Set(),
      leftBehind: new Set(),
      metrics: metricsOf(ctx),
      tracer,
      affinity: channelAffinity(ctx),
    };
    svc.metrics.attachRelay({
      inFlight: () => svc.inFlight.size,
      logBacklog: () => logs.backlog(),
      cacheLookups: () => [
        { cache: 'token', hits: tokens.hits, misses: tokens.misses },
        { cache: 'user', hits: users.hits, misses: users.misses },
      ],
    });
    // consume-log rows are written together with their charges (services/billing/)
    svc.billing.attachLogs(logs);
    if (ctx.redis) clearAfterOutage(ctx.redis, [tokens.redisKeys, users.redisKeys], ctx.log);
    // before serving: gives back what a process that died held in reservations (services/quota-holds.ts)
    await svc.billing.start();
    tokens.start();
    users.start();
    await channels.start();
    // before the shutdown hook below: the SQLite workers must stop after the final flushes (onClose runs in reverse)
    await startSqliteWorker(ctx);
    await logs.start();
    quotaData.start();
    // ctx.onClose runs last-registered first: flush logs and buckets before the databases close.
    ctx.onClose(async () => {
      // the connections are closed by now: a whole answer still read for a client that left is given up (a chat
      // answer is then refunded) so that the stop stays within SHUTDOWN_TIMEOUT
      for (const call of svc.leftBehind) call.destroy();
      await Promise.allSettled([...svc.inFlight]);
      await svc.billing.stop().catch((err) => ctx.log.error({ err }, 'final settlement flush failed'));
      channels.stop();
      tokens.stop();
      users.stop();
      await logs.stop();
      await quotaData.stop();
      await http.close().catch(() => undefined);
      await svc.websockets.close();
      lean?.close();
    });
    registry.set(ctx, svc);
    return svc;
  })();
  starting.set(ctx, p);
  return p;
}

export function relayServices(ctx: AppContext): RelayServices {
  const svc = registry.get(ctx);
  if (!svc) throw new Error('relay services are not initialised');
  return svc;
}
