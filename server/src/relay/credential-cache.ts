// The tokens of providers whose channel key is exchanged for one (providers/types.ts ExchangedCredential: Vertex
// AI's OAuth token, Baidu's access token, Zhipu v3's JWT). One cache per process (relay/services.ts): a token is kept
// per provider, key and channel base URL (the host that issued it, or is to accept it: a channel moved to another host
// gets a token of that host, never the old one), reused until shortly before it lapses, and asked for once however
// many requests wait; a failed exchange is not kept. Entries are named by hashes of the key and the base URL, so the
// map (and anything that lists it) never holds the secret itself.
import { createHash } from 'node:crypto';
import { CappedMap } from '../lib/bounded.js';
import type { ExchangedCredential, ProviderChannel, ProviderSettings } from './providers/types.js';

/** A token is replaced this long before it lapses, so a request never leaves with one about to expire... */
const REFRESH_MARGIN_MS = 5 * 60_000;
/** ...but a short-lived token is still used for half its life rather than exchanged on every request. */
const MAX_MARGIN_SHARE = 0.5;
/** Bounds the cache when keys churn (a channel's key edited many times, keys tried by the channel test). */
const MAX_ENTRIES = 1000;

export interface CredentialCacheOptions {
  /** the clock, in ms (tests) */
  now?: () => number;
  /** most keys whose token is kept (the least recently refreshed forgotten first); default 1000 */
  maxEntries?: number;
}

interface CachedToken {
  token: string;
  /** when the token is replaced: its expiry less the refresh margin */
  refreshAt: number;
}

const hash = (text: string) => createHash('sha256').update(text).digest('base64url');

export class CredentialCache {
  private readonly tokens: CappedMap<string, CachedToken>;
  private readonly inFlight = new Map<string, Promise<CachedToken>>();
  /** the providers that asked, so a retired key is forgotten under each of them (at every base URL) */
  private readonly providerIds = new Set<string>();
  private readonly now: () => number;

  constructor(options: CredentialCacheOptions = {}) {
    this.now = options.now ?? Date.now;
    this.tokens = new CappedMap(options.maxEntries ?? MAX_ENTRIES);
  }

  /** keys with a token kept */
  get size(): number {
    return this.tokens.size;
  }

  /** The token for `key`: see CredentialSource.get (providers/types.ts). */
  async get(
    credential: ExchangedCredential,
    key: string,
    settings: ProviderSettings,
    channel?: ProviderChannel,
  ): Promise<string> {
    const entry = entryName(credential.id, key, channel);
    const cached = this.tokens.get(entry);
    if (cached && cached.refreshAt > this.now()) return cached.token;
    let pending = this.inFlight.get(entry);
    if (!pending) {
      this.providerIds.add(credential.id);
      pending = this.exchange(credential, key, settings, channel);
      this.inFlight.set(entry, pending);
      const settle = () => {
        if (this.inFlight.get(entry) === pending) this.inFlight.delete(entry);
      };
      pending.then((fresh) => {
        // an invalidate() or forget() while the exchange was out means its answer is not wanted in the cache either
        if (this.inFlight.get(entry) === pending) {
          // re-inserted, so a key in use is the newest and the last one the bound forgets
          this.tokens.delete(entry);
          this.tokens.set(entry, fresh);
        }
        settle();
      }, settle);
    }
    return (await pending).token;
  }

  /** Drops the token of `key` at the channel's base URL (the upstream refused it): the next get() exchanges again. */
  invalidate(credential: ExchangedCredential, key: string, channel?: ProviderChannel): void {
    this.drop(entryName(credential.id, key, channel));
  }

  /** Forgets `key` for every provider and base URL: no channel holds it any more (edited or deleted). */
  forget(key: string): void {
    const prefixes = [...this.providerIds].map((id) => `${id}\n${hash(key)}\n`);
    const held = (entry: string) => prefixes.some((p) => entry.startsWith(p));
    for (const entry of [...this.tokens.keys(), ...this.inFlight.keys()]) if (held(entry)) this.drop(entry);
  }

  private drop(entry: string): void {
    this.tokens.delete(entry);
    this.inFlight.delete(entry);
  }

  private async exchange(
    credential: ExchangedCredential,
    key: string,
    settings: ProviderSettings,
    channel?: ProviderChannel,
  ) {
    const startedAt = this.now();
    const { token, lifetimeMs } = await credential.exchange(key, settings, channel);
    const margin = Math.min(REFRESH_MARGIN_MS, lifetimeMs * MAX_MARGIN_SHARE);
    return { token, refreshAt: startedAt + lifetimeMs - margin };
  }
}

/** An entry's name: the provider, then the hashes of the key and of the base URL (none for a caller without a channel). */
const entryName = (providerId: string, key: string, channel?: ProviderChannel) =>
  `${providerId}\n${hash(key)}\n${hash(channel?.baseUrl ?? '')}`;
