// Step 9, settle: exactly once per request. A failed or abandoned request gives its reservation back; an answered
// one is charged from its usage (new-api-compat.md §5.3: text, audio, Claude or a fixed price), its log row written
// with the charge (step 10, log.ts), and the low-balance notice checked (§5.9).
import type { Reservation } from '../../services/billing/index.js';
import { audioQuota, audioUsageOf, claudeQuota, isAudioChatModel, textQuota } from '../../services/pricing/index.js';
import type { AttemptResult } from '../attempt.js';
import type { UpstreamUsage } from '../providers/index.js';
import { modelRateLimit } from '../rate-limit.js';
import { usageLimits } from '../../services/limits/index.js';
import { logRow } from './log.js';
import { releaseLimits } from './limit.js';
import type { RelayState } from './state.js';
import type { RelayError } from '../errors.js';

const SATURATED = '当前分组上游负载已饱和，请稍后再试';

/** Settles an attempt's outcome; returns the error to answer the client with, if it failed. */
export async function settle(s: RelayState, result: AttemptResult): Promise<RelayError | null> {
  // the first attempt waited for an overlapped reservation (or threw its refusal): it stands by now
  const held = s.reservation ?? (await s.reserving!);
  if (!s.trace) return charge(s, held, result);
  const span = s.trace.child('settle', { 'gateway.outcome': result.kind });
  try {
    return await charge(s, held, result);
  } finally {
    span.set({ 'gateway.quota': s.charged?.quota ?? 0 });
    span.end();
  }
}

/** The charge known up front, or, for images of which fewer came than were asked, the same price for those. */
function fixedCharge(s: RelayState, delivered: number | undefined, quotaPerUnit: number): number {
  if (delivered === undefined || !s.mode.fixedQuota) return s.fixed;
  return s.mode.fixedQuota(s.price, { ...s.body, n: delivered }, s.model, quotaPerUnit);
}

async function charge(s: RelayState, held: Reservation, result: AttemptResult): Promise<RelayError | null> {
  const { svc, ctx } = s;
  if (result.kind !== 'done') {
    await refund(s, held);
    void releaseLimits(s);
    if (result.kind === 'gone') return null;
    return result.error.status === 429 ? result.error.withMessage(SATURATED) : result.error;
  }
  // a stream aborted before the upstream answered is no success, and costs nothing
  const unanswered = result.unanswered === true;
  if (s.rateKey && !unanswered) modelRateLimit(ctx).success(s.rateKey, s.req.id);

  const usage = result.usage;
  const total = usage.prompt_tokens + usage.completion_tokens;
  const quotaPerUnit = ctx.options.num('QuotaPerUnit', 500000);
  const audio = s.fixed < 0 && isAudioChatModel(s.model) ? audioUsageOf(usage) : undefined;
  const quota = unanswered
    ? 0
    : s.fixed >= 0
      ? fixedCharge(s, result.imagesDelivered, quotaPerUnit)
      : total === 0
        ? 0
        : audio
          ? audioQuota(s.price, audio, s.model, quotaPerUnit)
          : usage.claude
            ? claudeQuota(s.price, claudeUsageOf(usage), quotaPerUnit)
            : textQuota(s.price, usage, quotaPerUnit);
  const row = logRow(s, result, quota, audio);
  s.charged = {
    prompt: usage.prompt_tokens,
    completion: usage.completion_tokens,
    quota,
    frt: result.frt,
    stream: result.isStream,
    clientLeft: result.clientLeft,
  };
  if (held.state === 'open') svc.metrics.reservationsHeld--;
  // the charge and its log row are written together (services/billing/)
  svc.billing.settle(
    held,
    { quota, channelId: s.channel.id, countRequest: total > 0 || (s.fixed > 0 && !unanswered) },
    row,
  );
  if (s.limits || s.channel.setting) settleLimits(s, total, quota);
  const after = s.quotaBefore - quota;
  // a request billed on a plan leaves the balance as it was
  if (quota > 0 && !held.plan && svc.notifier.below(s.caller.user, after))
    void svc.notifier.check(s.caller.user, after, s.req.id);
  // a whole answer refused for its sensitive words is charged, as new-api did, and the client gets the error
  return result.sensitive?.refused ?? null;
}

/** The limits and the channel's cap corrected from what the request counted at admission to its charge. */
export function settleLimits(s: RelayState, tokens: number, quota: number): void {
  const limits = usageLimits(s.ctx);
  if (s.limits) void limits.settled(s.limits, tokens, quota, s.req.id);
  if (s.channelHold) void limits.channelSettled(s.channelHold, tokens, quota, s.req.id);
  else if (s.channel.setting) void limits.channelUsed(s.channel, tokens, quota, s.req.id);
}

/** Gives a reservation back (the request failed, was refused or its client left). */
export function refund(s: RelayState, held: Reservation): Promise<void> {
  if (held.state === 'open') s.svc.metrics.reservationsHeld--;
  return s.svc.billing.refund(held).catch((e) => s.ctx.log.error({ err: e, reqId: s.req.id }, 'refund failed'));
}

/** The relay's usage of a Claude answer back in Claude's terms: input_tokens exclude the cache reads. */
function claudeUsageOf(u: UpstreamUsage) {
  return {
    input_tokens: Math.max(0, u.prompt_tokens - u.cached_tokens),
    output_tokens: u.completion_tokens,
    cache_read_input_tokens: u.cached_tokens,
    cache_creation_input_tokens: u.cache_creation_tokens ?? 0,
  };
}
