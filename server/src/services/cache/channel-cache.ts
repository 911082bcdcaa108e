// In-memory channel routing index (new-api-compat.md §1.5, §4.4): group → model → priority tiers (highest first), plus
// id → channel. Rebuilt from the database on every {kind:'channels'} change and every SYNC_FREQUENCY; the relay never
// reads the channels table. Per-channel JSON fields (model_mapping, status_code_mapping, param_override, setting) are
// parsed once here, not per request.
import type { AppContext } from '../../context.js';
import { channelBaseUrl } from '../channel-types.js';
import { hasAdaptor } from '../channel-protocols.js';
import { KEY_ENABLED, keyStatus, parseChannelInfo, splitStoredKeys } from '../multi-key.js';

/** A multi-key channel's keys as routing sees them (services/multi-key.ts); the polling index is not kept here. */
export interface MultiKeyState {
  keys: string[];
  /** indexes of the enabled keys, in order */
  enabled: number[];
  /** one character per key, '1' enabled (the Redis polling script's argument) */
  flags: string;
  mode: string;
}

export interface CachedChannel {
  id: number;
  type: number;
  name: string;
  key: string;
  status: number;
  baseUrl: string;
  other: string;
  organization: string;
  priority: number;
  weight: number;
  autoBan: boolean;
  testModel: string;
  models: string[];
  groups: string[];
  modelMapping: Record<string, string> | null;
  statusCodeMapping: Record<string, string> | null;
  paramOverride: Record<string, unknown> | null;
  setting: Record<string, unknown> | null;
  otherInfo: string;
  /** null for a single-key channel; then `key` is the key. For a multi-key one `key` is its first enabled key (for the
   * paths that take any key: balance, model list), and each attempt takes one through multi-key-pick.ts */
  multiKey: MultiKeyState | null;
  /** set on the copy an attempt uses (multi-key-pick.ts `withKey`): which key of the channel it holds */
  keyIndex?: number;
}

function multiKeyOf(rawKey: string, rawInfo: unknown): MultiKeyState | null {
  const info = parseChannelInfo(rawInfo);
  if (!info.is_multi_key) return null;
  const keys = splitStoredKeys(rawKey);
  const enabled: number[] = [];
  let flags = '';
  keys.forEach((k, i) => {
    const on = keyStatus(info, i) === KEY_ENABLED && k !== '';
    if (on) enabled.push(i);
    flags += on ? '1' : '0';
  });
  return { keys, enabled, flags, mode: info.multi_key_mode };
}

/** Every key a channel holds. */
export function keysOf(ch: CachedChannel): string[] {
  return ch.multiKey ? ch.multiKey.keys : [ch.key];
}

export interface Tier {
  priority: number;
  channels: CachedChannel[];
}

function parseObj<T>(raw: string | null | undefined): T | null {
  if (!raw || !raw.trim()) return null;
  try {
    const v = JSON.parse(raw);
    return v && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length ? (v as T) : null;
  } catch {
    return null;
  }
}

const splitList = (s: string | null | undefined) =>
  (s ?? '')
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);

/** new-api collapses GPTs names so one ability covers all of them (new-api-compat.md §4.4). */
export function normaliseModelForRouting(model: string): string {
  if (model.startsWith('gpt-4-gizmo')) return 'gpt-4-gizmo-*';
  if (model.startsWith('gpt-4o-gizmo')) return 'gpt-4o-gizmo-*';
  return model;
}

export class ChannelCache {
  private byId = new Map<number, CachedChannel>();
  private index = new Map<string, Map<string, Tier[]>>();
  private timer: NodeJS.Timeout | undefined;
  private loading: Promise<void> | null = null;
  private dirty = false;
  private readonly keyRetired: ((key: string) => void)[] = [];

  constructor(private readonly ctx: AppContext) {}

  /**
   * `listener` hears each key that a reload finds no channel holding any more (the channel's key was edited, or the
   * channel deleted): what was derived from it (an exchanged token) can be dropped.
   */
  onKeyRetired(listener: (key: string) => void): void {
    this.keyRetired.push(listener);
  }

  async start(): Promise<void> {
    await this.reload();
    this.ctx.changes.subscribe((ev) => {
      if (ev.kind === 'channels')
        void this.reload().catch((err) => this.ctx.log.warn({ err }, 'channel cache reload failed'));
    });
    this.timer = setInterval(() => void this.reload().catch(() => undefined), this.ctx.config.syncFrequencySec * 1000);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /** Coalesces concurrent reloads; a change during a load triggers one more load so no event is lost. */
  reload(): Promise<void> {
    if (this.loading) {
      this.dirty = true;
      return this.loading;
    }
    this.loading = (async () => {
      try {
        do {
          this.dirty = false;
          await this.load();
        } while (this.dirty);
      } finally {
        this.loading = null;
      }
    })();
    return this.loading;
  }

  private async load(): Promise<void> {
    const db = this.ctx.db;
    const [channels, abilities] = await Promise.all([
      db.selectFrom('channels').selectAll().execute(),
      db.selectFrom('abilities').select(['group', 'model', 'channel_id', 'enabled']).execute(),
    ]);
    const byId = new Map<number, CachedChannel>();
    for (const c of channels) {
      const multiKey = multiKeyOf(c.key, c.channel_info);
      byId.set(c.id, {
        id: c.id,
        type: c.type,
        name: c.name,
        key: multiKey ? (multiKey.keys[multiKey.enabled[0] ?? 0] ?? '') : c.key,
        status: c.status,
        baseUrl: channelBaseUrl(c.type, c.base_url),
        other: c.other ?? '',
        organization: c.open_ai_organization ?? '',
        priority: Number(c.priority ?? 0),
        weight: Number(c.weight ?? 0),
        autoBan: Number(c.auto_ban ?? 1) === 1,
        testModel: c.test_model ?? '',
        models: splitList(c.models),
        groups: splitList(c.group),
        modelMapping: parseObj(c.model_mapping),
        statusCodeMapping: parseObj(c.status_code_mapping),
        paramOverride: parseObj(c.param_override),
        setting: parseObj(c.setting),
        otherInfo: c.other_info ?? '',
        multiKey,
      });
    }
    // group → model → channels (only enabled abilities of enabled channels of a type the relay has an adaptor for:
    // a database written by new-api may hold others, which must never be sent a request)
    const flat = new Map<string, Map<string, CachedChannel[]>>();
    for (const a of abilities) {
      if (!a.enabled) continue;
      const ch = byId.get(Number(a.channel_id));
      if (!ch || ch.status !== 1 || !hasAdaptor(ch.type)) continue;
      // a multi-key channel without an enabled key is not routed to (its status follows once the write lands)
      if (ch.multiKey && !ch.multiKey.enabled.length) continue;
      let models = flat.get(a.group);
      if (!models) flat.set(a.group, (models = new Map()));
      let list = models.get(a.model);
      if (!list) models.set(a.model, (list = []));
      list.push(ch);
    }
    const index = new Map<string, Map<string, Tier[]>>();
    for (const [group, models] of flat) {
      const m = new Map<string, Tier[]>();
      for (const [model, list] of models) {
        const tiers = new Map<number, CachedChannel[]>();
        for (const ch of list) {
          const t = tiers.get(ch.priority);
          if (t) t.push(ch);
          else tiers.set(ch.priority, [ch]);
        }
        m.set(
          model,
          [...tiers.entries()].sort((a, b) => b[0] - a[0]).map(([priority, channels]) => ({ priority, channels })),
        );
      }
      index.set(group, m);
    }
    const previous = this.byId;
    this.byId = byId;
    this.index = index;
    if (this.keyRetired.length) this.announceRetiredKeys(previous, byId);
  }

  private announceRetiredKeys(previous: Map<number, CachedChannel>, current: Map<number, CachedChannel>): void {
    let held: Set<string> | undefined;
    const retired = new Set<string>();
    for (const [id, old] of previous) {
      const now = current.get(id);
      if (!now?.multiKey && !old.multiKey && now?.key === old.key) continue;
      // the same key may still be another channel's (or still this one's)
      held ??= new Set([...current.values()].flatMap(keysOf));
      for (const key of keysOf(old)) if (!held.has(key)) retired.add(key);
    }
    for (const key of retired) for (const listener of this.keyRetired) listener(key);
  }

  get(id: number): CachedChannel | undefined {
    return this.byId.get(id);
  }

  all(): CachedChannel[] {
    return [...this.byId.values()];
  }

  tiers(group: string, model: string): Tier[] | undefined {
    return this.index.get(group)?.get(normaliseModelForRouting(model));
  }

  /** Distinct models routable in a group (GET /v1/models). */
  modelsOfGroup(group: string): string[] {
    return [...(this.index.get(group)?.keys() ?? [])];
  }

  /**
   * new-api's choice (new-api-compat.md §4.4): tier = priorities[min(retry, n-1)], weighted random with weight+10.
   * Fix of new-api (new-api-compat.md §13.2): channels in `exclude` (already failed in this request) are skipped while
   * any other channel is left — first in lower tiers from the target one, then in higher ones; only when every channel
   * failed may one be picked again.
   */
  pick(group: string, model: string, retry: number, exclude?: ReadonlySet<number>): CachedChannel | null {
    const tiers = this.tiers(group, model);
    if (!tiers || tiers.length === 0) return null;
    const start = Math.min(retry, tiers.length - 1);
    if (exclude && exclude.size) {
      for (let i = start; i < tiers.length; i++) {
        const c = weighted(tiers[i].channels, exclude);
        if (c) return c;
      }
      for (let i = start - 1; i >= 0; i--) {
        const c = weighted(tiers[i].channels, exclude);
        if (c) return c;
      }
    }
    return weighted(tiers[start].channels, undefined);
  }
}

function weighted(list: CachedChannel[], exclude: ReadonlySet<number> | undefined): CachedChannel | null {
  if (list.length === 1) return exclude?.has(list[0].id) ? null : list[0];
  let total = 0;
  for (const c of list) if (!exclude?.has(c.id)) total += c.weight + 10;
  if (total <= 0) return null;
  let r = Math.random() * total;
  for (const c of list) {
    if (exclude?.has(c.id)) continue;
    r -= c.weight + 10;
    if (r < 0) return c;
  }
  for (let i = list.length - 1; i >= 0; i--) if (!exclude?.has(list[i].id)) return list[i];
  return null;
}
