// Channel affinity's parts on their own: patterns compiled to string compares answer as their RegExp would, RE2's
// leading flags, the stored option rows read as new-api writes them, and the memory store bounded by max_entries (least
// recently used out first) with each entry's TTL.
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  affinityDefaults,
  compileRules,
  compileSetting,
  DEFAULT_RULES,
  RULES_KEY,
} from '../../src/services/channel-affinity/setting.js';
import { MemoryStore } from '../../src/services/channel-affinity/store.js';

const rule = (model_regex: string[], path_regex: string[] = []) =>
  JSON.stringify([{ ...DEFAULT_RULES[1], model_regex, path_regex }]);

describe('channel affinity rules', () => {
  it('a pattern without regex syntax is compared as a string, answering as its RegExp does', () => {
    const patterns = [
      '/v1/messages',
      '^/v1/messages$',
      '^claude-.*$',
      '^claude-',
      'sonnet$',
      'gpt-.*',
      '^gpt-4o(-mini)?$',
    ];
    const texts = [
      '/v1/messages',
      '/v1/messages/count_tokens',
      'claude-sonnet-4-6',
      'x-claude-',
      'gpt-4o-mini',
      'gpt-4o',
      '',
    ];
    for (const p of patterns) {
      const [compiled] = compileRules(rule([p], [p]));
      for (const text of texts) {
        const expected = text !== '' && new RegExp(p).test(text);
        expect(compiled.models.some((t) => t(text)) && text !== '', `${p} on ${text}`).toBe(expected);
      }
    }
  });

  it("reads RE2's leading (?i) as a flag and refuses what JavaScript cannot compile", () => {
    const [r] = compileRules(rule(['(?i)^CLAUDE-']));
    expect(r.models[0]('claude-opus-4-6')).toBe(true);
    expect(() => compileRules(rule(['^a(?i)b']))).toThrow('含有无效的正则表达式');
  });

  it("reads the rows new-api writes, defaults where a row is missing, and no rule when the rules don't compile", () => {
    const rows: Record<string, string> = {
      ...affinityDefaults(),
      'channel_affinity_setting.max_entries': '0',
      'channel_affinity_setting.default_ttl_seconds': '120',
      [RULES_KEY]: '[{"name":"r","model_regex":["^m$"],"key_sources":[{"type":"gjson","path":"a.b"}],"ttl_seconds":5}]',
    };
    const bad: Error[] = [];
    const s = compileSetting(
      (k) => rows[k] ?? '',
      (e) => bad.push(e),
    );
    expect(s).toMatchObject({ enabled: true, switchOnSuccess: true, keepOnDisabled: false, maxEntries: 100000 });
    expect(s.defaultTtlSeconds).toBe(120);
    expect(s.rules[0]).toMatchObject({ name: 'r', ttlSeconds: 5, paths: [], includeName: false });
    expect(s.rules[0].sources[0]).toMatchObject({ type: 'gjson', path: ['a', 'b'] });
    expect(bad).toEqual([]);
    rows[RULES_KEY] = '[{"name":"r","model_regex":["(unclosed"]}]';
    expect(
      compileSetting(
        (k) => rows[k] ?? '',
        (e) => bad.push(e),
      ).rules,
    ).toEqual([]);
    expect(bad).toHaveLength(1);
  });
});

describe('the memory store', () => {
  afterEach(() => vi.useRealTimers());

  it('keeps at most max_entries, dropping the least recently used, and forgets an entry past its TTL', async () => {
    vi.useFakeTimers({ now: 1_000_000 });
    const store = new MemoryStore(2);
    store.set('a', 1, 60);
    store.set('b', 2, 60);
    expect(store.get('a')).toBe(1); // a is now the most recently used
    store.set('c', 3, 60);
    expect([store.get('a'), store.get('b'), store.get('c')]).toEqual([1, 0, 3]);
    store.set('short', 4, 1);
    expect(await store.suffixes()).toEqual(['c', 'short']);
    vi.setSystemTime(1_000_000 + 1_001);
    expect(store.get('short')).toBe(0);
    expect(store.get('c')).toBe(3);
    store.resize(1);
    expect(await store.suffixes()).toEqual(['c']);
    expect(await store.clear('')).toBe(1);
  });
});
