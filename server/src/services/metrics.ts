// Prometheus metrics of one gateway instance (GET /metrics, api/ops.ts). Each AppContext has its own registry, never
// prom-client's global one, so the test servers of one process do not count into each other.
//
// Cost on the relay path: a request moves a handful of counters and histograms once, where the pipeline already
// holds the figures (the end of the request, a failed attempt, the settlement); those are plain-number tallies
// (metrics-tally.ts) that the registry reads at scrape time. Everything that is a state rather
// than an event (streams open, reservations held, the log writer's backlog, cache hit counts, the Node process) is
// read by a collect() callback when /metrics is scraped, from plain numbers the code keeps anyway.
//
// prom-client (with the 48 files of @opentelemetry/api it requires) is imported by the first scrape, and the registry
// made then: a gateway nobody scrapes never holds it (docs/perf/startup-loads.md). Node's default metrics start
// counting at that scrape (the process CPU counters are cumulative from the start all the same; GC durations and
// event-loop lag are measured from then on).
import type { Registry } from 'prom-client';
import { TallyCounter, TallyHistogram } from './metrics-tally.js';
import type { AppContext } from '../context.js';

/** Seconds: JSON answers take ~0.1–30 s, streams up to minutes. */
const DURATION_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
const TTFB_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** What a scrape reads from the relay (relay/services.ts supplies it once its services exist). */
export interface RelayGaugeSource {
  inFlight(): number;
  logBacklog(): { rows: number; lagMs: number };
  cacheLookups(): Array<{ cache: string; hits: number; misses: number }>;
}

export class GatewayMetrics {
  private registry: Promise<Registry> | null = null;
  /** relay streams being answered now (the pipeline counts them in and out) */
  streamsOpen = 0;
  /** reservations taken and not yet settled or refunded in this process */
  reservationsHeld = 0;
  /** realtime websocket sessions open now (relay/realtime/) */
  realtimeSessions = 0;
  private relay: RelayGaugeSource | null = null;

  readonly requests = new TallyCounter({
    name: 'gateway_relay_requests_total',
    help: 'Relay requests answered, by route (relay mode), HTTP status, model, channel id and client format',
    labelNames: ['route', 'status', 'model', 'channel', 'format'] as const,
  });
  readonly duration = new TallyHistogram({
    name: 'gateway_relay_duration_seconds',
    help: 'Relay request duration, from the request read to the answer ended',
    labelNames: ['route', 'format', 'stream'] as const,
    buckets: DURATION_BUCKETS,
  });
  readonly ttfb = new TallyHistogram({
    name: 'gateway_relay_ttfb_seconds',
    help: 'Time from the request read to the upstream answer head (answered requests)',
    labelNames: ['route', 'format', 'stream'] as const,
    buckets: TTFB_BUCKETS,
  });
  readonly upstreamErrors = new TallyCounter({
    name: 'gateway_upstream_errors_total',
    help: 'Failed upstream attempts, by channel id and class (rate_limited, server_error, client_error, connection, bad_response, refused)',
    labelNames: ['channel', 'class'] as const,
  });
  readonly retries = new TallyCounter({
    name: 'gateway_relay_retries_total',
    help: 'Attempts retried on another channel',
    labelNames: ['route'] as const,
  });
  readonly tokens = new TallyCounter({
    name: 'gateway_tokens_total',
    help: 'Tokens of settled requests, by direction (in: prompt, out: completion) and model',
    labelNames: ['direction', 'model'] as const,
  });
  readonly quota = new TallyCounter({
    name: 'gateway_quota_charged_total',
    help: 'Quota units charged by settlements (500000 = 1 USD), by model',
    labelNames: ['model'] as const,
  });

  /** The registry, made by the first scrape: the tallies above, Node's default metrics and the scrape-time gauges. */
  private async makeRegistry(): Promise<Registry> {
    const { collectDefaultMetrics, Counter, Gauge, Registry } = await import('prom-client');
    const registry = new Registry();
    // the tallies are this object's fields: all of them, without a list to keep in step
    for (const field of Object.values(this))
      if (field instanceof TallyCounter || field instanceof TallyHistogram) registry.registerMetric(field as never);
    collectDefaultMetrics({ register: registry });
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    const self = this;
    new Gauge({
      name: 'gateway_active_streams',
      help: 'Relay streams being answered now',
      registers: [registry],
      collect() {
        this.set(self.streamsOpen);
      },
    });
    new Gauge({
      name: 'gateway_reservations_held',
      help: 'Quota reservations taken and not yet settled or refunded',
      registers: [registry],
      collect() {
        this.set(self.reservationsHeld);
      },
    });
    new Gauge({
      name: 'gateway_realtime_sessions',
      help: 'Realtime websocket sessions open now (/v1/realtime)',
      registers: [registry],
      collect() {
        this.set(self.realtimeSessions);
      },
    });
    new Gauge({
      name: 'gateway_relay_in_flight',
      help: 'Relay requests running (until settled and logged)',
      registers: [registry],
      collect() {
        this.set(self.relay?.inFlight() ?? 0);
      },
    });
    new Gauge({
      name: 'gateway_log_queue_rows',
      help: 'Consume-log rows queued in this process, not yet handed to the database or its writer thread',
      registers: [registry],
      collect() {
        this.set(self.relay?.logBacklog().rows ?? 0);
      },
    });
    new Gauge({
      name: 'gateway_log_queue_lag_seconds',
      help: 'Age of the oldest consume-log row still queued in this process (0 when none)',
      registers: [registry],
      collect() {
        this.set((self.relay?.logBacklog().lagMs ?? 0) / 1000);
      },
    });
    new Counter({
      name: 'gateway_cache_lookups_total',
      help: 'Token and user cache lookups answered from memory (hit) or from Redis / the database (miss)',
      labelNames: ['cache', 'result'] as const,
      registers: [registry],
      collect() {
        this.reset();
        for (const c of self.relay?.cacheLookups() ?? []) {
          this.inc({ cache: c.cache, result: 'hit' }, c.hits);
          this.inc({ cache: c.cache, result: 'miss' }, c.misses);
        }
      },
    });
    return registry;
  }

  /**
   * A relay request answered without the pipeline (which counts its own, relay/pipeline/observe.ts): `refused` before
   * it (bad token, body too large or malformed, shutting down) or an endpoint answered locally (`models`,
   * `count_tokens`, `billing`, `not_implemented`). No model or channel: none was chosen.
   */
  countLocal(route: string, status: number, format = 'openai'): void {
    this.requests.inc({ route, status: String(status), model: '', channel: '', format });
  }

  /** The relay's gauges: read at each scrape. */
  attachRelay(source: RelayGaugeSource): void {
    this.relay = source;
  }

  async exposition(): Promise<{ contentType: string; body: string }> {
    const registry = await (this.registry ??= this.makeRegistry());
    return { contentType: registry.contentType, body: await registry.metrics() };
  }
}

/** The class of a failed upstream attempt, for gateway_upstream_errors_total. */
export function upstreamErrorClass(status: number, code: string | number | null, local: boolean): string {
  if (local) return 'refused';
  if (code === 'do_request_failed') return 'connection';
  if (code === 'bad_response') return 'bad_response';
  if (status === 429) return 'rate_limited';
  if (status >= 500) return 'server_error';
  if (status >= 400) return 'client_error';
  return 'other';
}

const perContext = new WeakMap<AppContext, GatewayMetrics>();

/** This instance's metrics (created on first use). */
export function metricsOf(ctx: AppContext): GatewayMetrics {
  let m = perContext.get(ctx);
  if (!m) perContext.set(ctx, (m = new GatewayMetrics()));
  return m;
}
