// Step 6b, limit: the usage limits of the key, its user and the user's group (services/limits/; new-api-compat.md
// §13.3), checked and counted before the reservation, so a refused request never reaches the upstream and is never
// charged. Tokens per minute count the request's bound (its prompt's bound plus max_tokens), a budget the quota the
// request is about to reserve (quote, reserve.ts), until settle corrects them or a failure releases them: requests in
// flight together cannot spend a budget twice.
import { isUtf8 } from 'node:buffer';
import { LimitRefusal, usageLimits, type Rules, type UsageLimits } from '../../services/limits/index.js';
import { RelayError } from '../errors.js';
import type { RelayState } from './state.js';

function num(v: unknown): number {
  const n = typeof v === 'number' ? v : Number(v);
  return Number.isFinite(n) && n > 0 ? n : 0;
}

/** Nothing to wait for in the common case (no limit applies): one map lookup, and no promise. */
export function limit(s: RelayState): Promise<void> | undefined {
  const limits = usageLimits(s.ctx);
  if (!limits.loaded) return limits.ready.then(() => limit(s));
  const { caller } = s;
  const rules = limits.rulesFor(caller.token?.id ?? 0, caller.user.id, caller.user.group);
  if (!rules) return;
  return admit(s, limits, rules);
}

async function admit(s: RelayState, limits: UsageLimits, rules: Rules): Promise<void> {
  try {
    s.limits = await limits.admit(rules, rules.tpm ? tokenBound(s) : 0, rules.budget ? s.reserveAmount : 0);
  } catch (e) {
    if (!(e instanceof LimitRefusal)) throw e;
    // new-api's rate-limit answer (new-api-compat.md §10): 429, type new_api_error, no code
    const err = new RelayError(429, e.message);
    err.retryAfter = e.retryAfter;
    throw err;
  }
}

/** A request that failed or was refused after its admission: what it counted on its limits and its channel goes back. */
export function releaseLimits(s: RelayState): Promise<void> | undefined {
  const { limits: admitted, channelHold } = s;
  if (!admitted && !channelHold) return;
  s.limits = null;
  s.channelHold = null;
  const limits = usageLimits(s.ctx);
  return Promise.all([admitted && limits.released(admitted), channelHold && limits.channelReleased(channelHold)]).then(
    () => undefined,
  );
}

/** The most tokens the request may use: its prompt (a cheap bound when the mode has one, else the count) + output. */
export function tokenBound(s: RelayState): number {
  const { mode, body, raw } = s;
  const output = mode.maxTokens
    ? mode.maxTokens(body)
    : Math.max(num(body.max_tokens), num(body.max_completion_tokens), num(body.max_output_tokens));
  const bound = mode.promptBound && isUtf8(raw) ? mode.promptBound(body, raw.length) : -1;
  return Math.max(0, output) + (bound >= 0 ? bound : s.prompt());
}
