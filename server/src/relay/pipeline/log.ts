// Step 10, log: the consume log row of a charged request (new-api-compat.md §5.7), written by settlement together with
// the charge (services/billing/). A row that cannot be made is reported, and the charge still goes through.
import type { NewLog } from '../../db/schema.js';
import type { AudioUsage } from '../../services/pricing/index.js';
import type { AttemptResult } from '../attempt.js';
import { consumeLogRow } from '../consume-log.js';
import type { RelayState } from './state.js';

function reasoningEffortOf(body: Record<string, any>, model: string): string | undefined {
  if (typeof body.reasoning_effort === 'string' && body.reasoning_effort) return body.reasoning_effort;
  const m = /^o\d.*-(high|low|medium)$/.exec(model);
  return m ? m[1] : undefined;
}

export function logRow(
  s: RelayState,
  result: Extract<AttemptResult, { kind: 'done' }>,
  quota: number,
  audio: AudioUsage | undefined,
): NewLog | undefined {
  try {
    return consumeLogRow(s.svc, s.ctx, {
      caller: s.caller,
      group: s.group,
      model: s.model,
      channel: s.channel,
      price: s.price,
      usage: result.usage,
      quota,
      start: s.start,
      frt: result.frt,
      isStream: result.isStream,
      upstreamModel: result.upstreamModel,
      reasoningEffort: reasoningEffortOf(s.body, s.model),
      used: s.used,
      content: s.mode.logContent?.(s.body, s.price),
      audio,
      clientLeft: result.clientLeft,
      sensitive: result.sensitive,
    });
  } catch (e) {
    s.ctx.log.error({ err: e, reqId: s.req.id }, 'consume log failed');
    return undefined;
  }
}
