// undici's dispatchers without the rest of the package. `import { Agent } from 'undici'` evaluates its whole index:
// fetch, WebSocket, EventSource, the cache stores, the mock agents (110 modules; +4.2 MB of heap and about +20 MB of
// RSS in a bare process), where the gateway uses three dispatchers and the request API (about 30 modules; +1.3 MB and
// about +12 MB). Types still come from 'undici': type-only imports are erased.
// The paths are undici's own lib layout (unchanged since v5; package-lock pins the version), and the one set-up step
// of its index that dispatchers need is repeated here: the request/stream/pipeline/connect/upgrade methods are mixed
// into Dispatcher.prototype (the same functions, so loading the index as well changes nothing).
// server/test/lib/undici.test.ts checks the classes against the package's exports, and runs a request through this
// module in a worker thread that never loads the index.
import { createRequire } from 'node:module';
import type * as undici from 'undici';

const load = createRequire(import.meta.url);

const Dispatcher: typeof undici.Dispatcher = load('undici/lib/dispatcher/dispatcher.js');
Object.assign(Dispatcher.prototype, load('undici/lib/api/index.js'));

export type Agent = undici.Agent;
export const Agent: typeof undici.Agent = load('undici/lib/dispatcher/agent.js');
export type ProxyAgent = undici.ProxyAgent;
export const ProxyAgent: typeof undici.ProxyAgent = load('undici/lib/dispatcher/proxy-agent.js');
export type Socks5ProxyAgent = undici.Socks5ProxyAgent;
/** The upstream pool's settings (services/cache/index.ts); bench/floor-relay.mjs measures the stack with the same. */
export const UPSTREAM_POOL: undici.Agent.Options = { keepAliveTimeout: 30_000, keepAliveMaxTimeout: 600_000, connections: 1024, pipelining: 1 };
export const Socks5ProxyAgent: typeof undici.Socks5ProxyAgent = load('undici/lib/dispatcher/socks5-proxy-agent.js');
/** undici's socket opener; lib/safe-fetch.ts wraps it to check the address it connects to */
export const buildConnector: typeof undici.buildConnector = load('undici/lib/core/connect.js');
