// The public price list (GET /api/pricing, new-api-compat.md §3.4): one row per model offered by an enabled ability,
// with its billing type, ratios or price and the groups that may use it.
// The ability scan is cached for a minute (as new-api) and dropped at once when a channel changes; the prices
// themselves are recomputed on every call from the in-memory options, so a ratio edit shows immediately
// (new-api caches the finished list, prices included, for the minute).
import type { AppContext } from '../../context.js';
import { getCompletionRatio, getGroupRatio, getModelPrice, getModelRatio } from './index.js';
import { usableGroups } from '../groups.js';

export interface PricingRow {
  model_name: string;
  /** 0 = per token (ratios), 1 = per call (model_price) */
  quota_type: 0 | 1;
  model_ratio: number;
  model_price: number;
  /** always empty in new-api; kept for the shape */
  owner_by: string;
  completion_ratio: number;
  enable_groups: string[];
  /**
   * Ours (new-api has no such field): whether the model has a price or ratio of its own. new-api shows an unset
   * model with its fallback ratio 37.5 and then refuses its requests (unless self-use mode), so a client could not
   * tell; the dashboard's example call picks a model that can be called.
   */
  priced: boolean;
}

export interface PricingPayload {
  data: PricingRow[];
  group_ratio: Record<string, number>;
  usable_group: Record<string, string>;
}

const ABILITY_TTL_MS = 60_000;

export class PricingCatalog {
  private models: Array<{ model: string; groups: string[] }> | null = null;
  private loadedAt = 0;
  private loading: Promise<Array<{ model: string; groups: string[] }>> | null = null;
  private readonly unsubscribe: () => void;

  constructor(private readonly ctx: AppContext) {
    this.unsubscribe = ctx.changes.subscribe((ev) => {
      if (ev.kind === 'channels') this.invalidate();
    });
  }

  invalidate(): void {
    this.models = null;
  }

  close(): void {
    this.unsubscribe();
  }

  private async enabledModels(): Promise<Array<{ model: string; groups: string[] }>> {
    if (this.models && Date.now() - this.loadedAt < ABILITY_TTL_MS) return this.models;
    // One scan at a time: concurrent callers share it.
    this.loading ??= this.scan().finally(() => {
      this.loading = null;
    });
    return this.loading;
  }

  private async scan(): Promise<Array<{ model: string; groups: string[] }>> {
    const rows = await this.ctx.db
      .selectFrom('abilities')
      .select(['model', 'group'])
      .where('enabled', '=', true)
      .orderBy('model')
      .orderBy('group')
      .execute();
    const byModel = new Map<string, string[]>();
    for (const r of rows) {
      const groups = byModel.get(r.model) ?? [];
      if (!groups.includes(r.group)) groups.push(r.group);
      byModel.set(r.model, groups);
    }
    const models = [...byModel].map(([model, groups]) => ({ model, groups }));
    this.models = models;
    this.loadedAt = Date.now();
    return models;
  }

  /** The price list for a caller in `userGroup` ('' when anonymous). */
  async pricing(userGroup: string): Promise<PricingPayload> {
    const options = this.ctx.options;
    const data: PricingRow[] = (await this.enabledModels()).map(({ model, groups }) => {
      const row: PricingRow = {
        model_name: model,
        quota_type: 0,
        model_ratio: 0,
        model_price: 0,
        owner_by: '',
        completion_ratio: 0,
        enable_groups: [...groups],
        priced: true,
      };
      const price = getModelPrice(options, model);
      if (price.found) {
        row.quota_type = 1;
        row.model_price = price.price;
      } else {
        const ratio = getModelRatio(options, model);
        row.model_ratio = ratio.ratio;
        row.priced = ratio.found;
        row.completion_ratio = getCompletionRatio(options, model);
      }
      return row;
    });
    const usable = usableGroups(this.ctx, userGroup);
    const allRatios = options.json<Record<string, number> | null>('GroupRatio', {}) ?? {};
    const group_ratio: Record<string, number> = {};
    for (const g of Object.keys(allRatios)) if (g in usable) group_ratio[g] = getGroupRatio(options, g);
    return { data, group_ratio, usable_group: usable };
  }
}
