// The Midjourney route table: a client's method and path (under /mj or a /mj-fast|/mj-relax|/mj-turbo prefix) read
// into what the gateway does with it. new-api registers any `/:mode/mj` and forwards a prefix without `mj-`
// unchanged; ours knows the three modes midjourney-proxy serves and answers anything else as an unknown route.

export const MJ_MODES = ['fast', 'relax', 'turbo'] as const;
export type MjMode = (typeof MJ_MODES)[number];

/** The submit routes, by the last segment of `/mj/submit/<name>` (insight-face/swap is `swap`). */
export const MJ_SUBMIT_ROUTES = [
  'imagine',
  'change',
  'simple-change',
  'describe',
  'blend',
  'action',
  'modal',
  'shorten',
  'upload-discord-images',
  'video',
  'edits',
  'swap',
] as const;
export type MjSubmitRoute = (typeof MJ_SUBMIT_ROUTES)[number];

/**
 * What a route is:
 * - submit: sent upstream, priced, writes a midjourneys row (`submit` names which);
 * - fetch / list: answered from the local rows, user-scoped (`task/{id}/fetch`, `task/list-by-condition`);
 * - image-seed: proxied to the origin task's channel;
 * - image: the stored image streamed, unauthenticated (`image/{id}`);
 * - notify: midjourney-proxy's callback (ours, verified: notify.ts).
 */
export type MjRoute =
  | { kind: 'submit'; submit: MjSubmitRoute; mode: MjMode | null; upstreamPath: string }
  | { kind: 'fetch'; taskId: string; mode: MjMode | null }
  | { kind: 'list'; mode: MjMode | null }
  | { kind: 'image-seed'; taskId: string; mode: MjMode | null; upstreamPath: string }
  | { kind: 'image'; taskId: string; mode: MjMode | null }
  | { kind: 'notify'; mode: MjMode | null };

export type MjRouteParse = { ok: true; route: MjRoute } | { ok: false; reason: 'not_found' | 'method_not_allowed' };

// a task id as midjourney-proxy makes them (digits) or any id a proxy fork uses: no slash, no dot segments
const TASK_ID = /^[A-Za-z0-9_-]{1,191}$/;

/**
 * Reads a relay path (query string allowed) and method. `upstreamPath` is what midjourney-proxy is asked for:
 * always `/mj/...`, the mode prefix stripped as new-api does (buildMjUpstreamRequest can keep it for proxies that
 * serve the mode paths).
 */
export function parseMjRoute(method: string, rawPath: string): MjRouteParse {
  const path = rawPath.split('?')[0]!.replace(/\/+$/, '');
  const m = /^\/(?:mj-(fast|relax|turbo)\/)?mj(\/.*)?$/.exec(path);
  if (!m || !m[2]) return { ok: false, reason: 'not_found' };
  const mode = (m[1] as MjMode | undefined) ?? null;
  const rest = m[2];
  const verb = method.toUpperCase();
  const want = (expected: 'GET' | 'POST', route: MjRoute): MjRouteParse =>
    verb === expected ? { ok: true, route } : { ok: false, reason: 'method_not_allowed' };

  const submit = /^\/submit\/([a-z-]+)$/.exec(rest);
  if (submit) {
    const name = submit[1] as MjSubmitRoute;
    if (name === 'swap' || !(MJ_SUBMIT_ROUTES as readonly string[]).includes(name)) {
      return { ok: false, reason: 'not_found' };
    }
    return want('POST', { kind: 'submit', submit: name, mode, upstreamPath: `/mj${rest}` });
  }
  if (rest === '/insight-face/swap') {
    return want('POST', { kind: 'submit', submit: 'swap', mode, upstreamPath: '/mj/insight-face/swap' });
  }
  if (rest === '/task/list-by-condition') return want('POST', { kind: 'list', mode });
  if (rest === '/notify') return want('POST', { kind: 'notify', mode });
  const task = /^\/task\/([^/]+)\/(fetch|image-seed)$/.exec(rest);
  if (task && TASK_ID.test(task[1]!)) {
    const taskId = task[1]!;
    if (task[2] === 'fetch') return want('GET', { kind: 'fetch', taskId, mode });
    return want('GET', { kind: 'image-seed', taskId, mode, upstreamPath: `/mj/task/${taskId}/image-seed` });
  }
  const image = /^\/image\/([^/]+)$/.exec(rest);
  if (image && TASK_ID.test(image[1]!)) return want('GET', { kind: 'image', taskId: image[1]!, mode });
  return { ok: false, reason: 'not_found' };
}
