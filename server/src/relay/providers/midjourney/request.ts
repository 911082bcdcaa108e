// One call for the relay: a client's method, path and parsed JSON body read into the route and, for a submit, its
// checked plan; or the answer to give instead (a local Midjourney error, or "no such route" for the relay's 404).
import { mjErrorAnswer, type MjErrorAnswer } from './errors.js';
import { parseMjRoute, type MjRoute } from './routes.js';
import { validateMjSubmit, type MjSubmitPlan } from './validate.js';

export type MjRequest =
  | { ok: true; route: Extract<MjRoute, { kind: 'submit' }>; plan: MjSubmitPlan }
  | { ok: true; route: Exclude<MjRoute, { kind: 'submit' }>; plan: null }
  | { ok: false; reason: 'not_found' | 'method_not_allowed' }
  | { ok: false; reason: 'invalid'; answer: MjErrorAnswer };

/** `body` is the parsed JSON (undefined for a GET); only a submit's is checked here. */
export function readMjRequest(method: string, path: string, body: unknown): MjRequest {
  const parsed = parseMjRoute(method, path);
  if (!parsed.ok) return parsed;
  const route = parsed.route;
  if (route.kind !== 'submit') return { ok: true, route, plan: null };
  const v = validateMjSubmit(route.submit, body);
  if (!v.ok) return { ok: false, reason: 'invalid', answer: mjErrorAnswer(v.error) };
  return { ok: true, route, plan: v.plan };
}

/**
 * The ids of a client's `POST task/list-by-condition {ids:[…]}` (answered from the user's own rows, `[]` when none);
 * a body that is not that shape is new-api's bind failure, `do_request_failed`. At most `limit` ids are read, so
 * one request cannot ask for the whole table.
 */
export function readMjListIds(body: unknown, limit = 1000): string[] | MjErrorAnswer {
  const ids = body && typeof body === 'object' && !Array.isArray(body) ? (body as { ids?: unknown }).ids : undefined;
  const fail = mjErrorAnswer({ code: 4, description: 'do_request_failed' });
  if (ids === undefined || ids === null) return body && typeof body === 'object' && !Array.isArray(body) ? [] : fail;
  if (!Array.isArray(ids) || ids.some((id) => typeof id !== 'string')) return fail;
  return [...new Set(ids as string[])].filter((id) => id !== '').slice(0, limit);
}
