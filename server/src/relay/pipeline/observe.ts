// The end of a relay request, seen from outside: its Prometheus counters (services/metrics.ts), its span's end
// (services/tracing.ts) and its access-log line (RELAY_ACCESS_LOG). Runs once per request, after the answer, with the
// figures the earlier steps left in the state; a few counter and histogram updates, nothing awaited.
import type { RelayState } from './state.js';
import { normaliseModelForRouting } from '../../services/cache/channel-cache.js';

/**
 * The model label of a request's series. The model is caller input, so only names the abilities bound are used: none
 * before routing, the name routing looked up (a GPTs `gpt-4-gizmo-<id>` is its family's `gpt-4-gizmo-*`), and on a
 * pinned channel (`sk-<key>-<id>`, which takes any model name) only a model the channel lists.
 */
function modelLabel(s: RelayState): string {
  if (!s.channel) return '';
  const routed = normaliseModelForRouting(s.model);
  if (s.caller.channelId === null) return routed;
  return s.channel.models.includes(routed) ? routed : '';
}

export function observe(s: RelayState, status: number): void {
  const m = s.svc.metrics;
  const route = s.mode.name;
  const format = s.mode.format ?? 'openai';
  // model and channel only once routed: before that the model is whatever the caller wrote (unbounded label values)
  const model = s.channel ? s.model : '';
  const label = modelLabel(s);
  const channel = s.channel ? String(s.channel.id) : '';
  const c = s.charged;
  const stream = c ? c.stream : s.streaming;
  const ms = Date.now() - s.start;
  m.requests.inc({ route, status: String(status), model: label, channel, format });
  m.duration.observe({ route, format, stream: stream ? 'true' : 'false' }, ms / 1000);
  if (c) {
    m.ttfb.observe({ route, format, stream: stream ? 'true' : 'false' }, c.frt / 1000);
    if (c.prompt > 0) m.tokens.inc({ direction: 'in', model: label }, c.prompt);
    if (c.completion > 0) m.tokens.inc({ direction: 'out', model: label }, c.completion);
    if (c.quota > 0) m.quota.inc({ model: label }, c.quota);
  }
  if (s.streaming) m.streamsOpen--;
  const trace = s.trace;
  if (trace) {
    trace.set({ 'http.response.status_code': status, 'gateway.model': model, 'gateway.channel_id': channel });
    if (c) trace.set({ 'gateway.tokens_in': c.prompt, 'gateway.tokens_out': c.completion, 'gateway.quota': c.quota });
    if (status >= 500) trace.fail(`status ${status}`);
    trace.end();
  }
  if (s.ctx.config.observability.relayAccessLog && s.ctx.log.isLevelEnabled('info'))
    s.ctx.log.info(
      {
        reqId: s.req.id,
        route,
        status,
        model,
        channel,
        userId: s.caller?.user.id,
        ms,
        stream,
        tokensIn: c?.prompt,
        tokensOut: c?.completion,
        quota: c?.quota,
      },
      'relay request',
    );
}
