// Step 6b, limit: the usage limits of the key, its user and the user's group (services/limits/; new-api-compat.md
// §13.3), checked and counted before the reservation, so a refused request never reaches the upstream and is never
// charged. Tokens per minute count the request's bound (its prompt's bound plus max_tokens) until settle corrects it.
import { isUtf8 } from 'node:buffer';
import { LimitRefusal, usageLimits } from '../../services/limits/index.js';
import { RelayError } from '../errors.js';
import type { RelayState } from './state.js';

function num(v: unknown): number {
  const n = typeof v === 'number' ? v : Number(v);
  return Number.isFinite(n) && n > 0 ? n : 0;
}

export async function limit(s: RelayState): Promise<void> {
  const limits = usageLimits(s.ctx);
  if (!limits.loaded) await limits.ready;
  const { caller } = s;
  const rules = limits.rulesFor(caller.token?.id ?? 0, caller.user.id, caller.user.group);
  if (!rules) return;
  try {
    s.limits = await limits.admit(rules, rules.tpm ? tokenBound(s) : 0);
  } catch (e) {
    if (!(e instanceof LimitRefusal)) throw e;
    // new-api's rate-limit answer (new-api-compat.md §10): 429, type new_api_error, no code
    const err = new RelayError(429, e.message);
    err.retryAfter = e.retryAfter;
    throw err;
  }
}

/** The most tokens the request may use: its prompt (a cheap bound when the mode has one, else the count) + output. */
function tokenBound(s: RelayState): number {
  const { mode, body, raw } = s;
  const output = mode.maxTokens
    ? mode.maxTokens(body)
    : Math.max(num(body.max_tokens), num(body.max_completion_tokens), num(body.max_output_tokens));
  const bound = mode.promptBound && isUtf8(raw) ? mode.promptBound(body, raw.length) : -1;
  return Math.max(0, output) + (bound >= 0 ? bound : s.prompt());
}
