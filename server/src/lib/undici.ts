// undici, from the package's public entry point (its lib/ file layout is not an API), loaded on first use: the entry
// point loads the whole package (~110 files), and a gateway whose upstream calls all go through the lean client
// (lib/lean-http/client.ts, LEAN_HTTP on) needs it only for what that client does not take (a proxy, a request it
// declines), the SSRF-safe client of user-chosen URLs (lib/safe-fetch.ts) and the channel probes. With LEAN_HTTP off
// the relay loads it at start (relay/services.ts). Types come from `import type` and cost nothing at run time.
import type * as undici from 'undici';

export type UndiciModule = typeof undici;

let undiciModule: Promise<UndiciModule> | null = null;

/** undici's entry point, imported once, on the first call. */
export const loadUndici = (): Promise<UndiciModule> => (undiciModule ??= import('undici'));

/** The upstream pool's settings (relay/services.ts); bench/floor-relay.mjs measures the stack with the same. */
export const UPSTREAM_POOL: undici.Agent.Options = {
  keepAliveTimeout: 30_000,
  keepAliveMaxTimeout: 600_000,
  connections: 1024,
  pipelining: 1,
};
