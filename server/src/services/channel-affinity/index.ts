// Channel affinity (new-api's `channel_affinity_setting`, new-api-compat.md, "Channel affinity"): consecutive calls of one coding-agent
// conversation go to the channel that answered the previous one, so the vendor's prompt cache is hit. This module holds
// the compiled setting (rebuilt once per change of its option rows) and the store of sticky choices, and answers the
// admin statistics and clear routes. Which rule matches a relay request, and what the pipeline does with the hit, is
// the relay's (relay/pipeline/affinity.ts).
import type { AppContext } from '../../context.js';
import { AFFINITY_PREFIX, compileSetting, type CompiledAffinity } from './setting.js';
import { MemoryStore, RedisStore, type AffinityStore } from './store.js';

export { NAMESPACE } from './store.js';

export interface AffinityStats {
  enabled: boolean;
  total: number;
  unknown: number;
  by_rule_name: Record<string, number>;
  cache_capacity: number;
  cache_algo: string;
}

export class AffinityClearError extends Error {}

export class ChannelAffinity {
  /** what the relay reads on every request: replaced whole when an option row changes, never mutated */
  setting: CompiledAffinity;
  readonly store: AffinityStore;

  constructor(private readonly ctx: AppContext) {
    this.setting = this.compile();
    this.store = ctx.redis
      ? new RedisStore(ctx.redis, ctx.redisPrefix, ctx.log)
      : new MemoryStore(this.setting.maxEntries);
    ctx.options.on('change', (key: string) => {
      if (!key.startsWith(AFFINITY_PREFIX)) return;
      this.setting = this.compile();
      this.store.resize(this.setting.maxEntries);
    });
  }

  private compile(): CompiledAffinity {
    return compileSetting(
      (k) => this.ctx.options.get(k),
      (err) => this.ctx.log.warn({ err: err.message }, 'channel_affinity_setting.rules ignored: it does not compile'),
    );
  }

  /** new-api's GetChannelAffinityCacheStats: entries counted per rule that puts its name in the key. */
  async stats(): Promise<AffinityStats> {
    const s = this.setting;
    const named = new Map<string, { includeModel: boolean; includeGroup: boolean }>();
    for (const r of s.rules) if (r.name && r.includeName) named.set(r.name, r);
    const byRule: Record<string, number> = {};
    for (const name of named.keys()) byRule[name] = 0;
    const suffixes = await this.store.suffixes();
    let unknown = 0;
    for (const suffix of suffixes) {
      const parts = suffix.split(':');
      const rule = parts.length >= 2 ? named.get(parts[0]) : undefined;
      // a key too short for what its rule puts in it was written under other rules
      const need = 2 + (rule?.includeModel ? 1 : 0) + (rule?.includeGroup ? 1 : 0);
      if (!rule || parts.length < need) unknown++;
      else byRule[parts[0]]++;
    }
    return {
      enabled: s.enabled,
      total: suffixes.length,
      unknown,
      by_rule_name: byRule,
      cache_capacity: s.maxEntries,
      cache_algo: this.store.algorithm,
    };
  }

  /** Every entry, or one rule's (it must put its name in its keys); how many were deleted. */
  async clear(ruleName: string | null): Promise<number> {
    if (ruleName === null) return this.store.clear('');
    const rule = this.setting.rules.find((r) => r.name === ruleName);
    if (!rule) throw new AffinityClearError('未知规则名称');
    if (!rule.includeName) throw new AffinityClearError('该规则未启用 include_rule_name，无法按规则清空缓存');
    return this.store.clear(ruleName + ':');
  }
}

const registry = new WeakMap<AppContext, ChannelAffinity>();

/** The instance's affinity, made on first use. */
export function channelAffinity(ctx: AppContext): ChannelAffinity {
  let a = registry.get(ctx);
  if (!a) registry.set(ctx, (a = new ChannelAffinity(ctx)));
  return a;
}
