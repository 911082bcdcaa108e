// The undici classes the gateway uses, from the package's public entry point (its lib/ file layout is not an API).
import { Agent, ProxyAgent, Socks5ProxyAgent, buildConnector } from 'undici';
import type * as undici from 'undici';

export { Agent, ProxyAgent, Socks5ProxyAgent, buildConnector };
/** The upstream pool's settings (relay/services.ts); bench/floor-relay.mjs measures the stack with the same. */
export const UPSTREAM_POOL: undici.Agent.Options = {
  keepAliveTimeout: 30_000,
  keepAliveMaxTimeout: 600_000,
  connections: 1024,
  pipelining: 1,
};
