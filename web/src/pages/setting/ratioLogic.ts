// Rules of the visual model-pricing editor (spec §4 Model pricing mode, §5 Pricing tables): rows built from the
// ModelPrice / ModelRatio / CompletionRatio maps, per-token vs per-request mode, batch set, duplicate names and
// the maps written back on save. Values are kept as the text typed so a half-typed "0." survives re-renders.

export interface ModelRow {
  name: string;
  /** Fixed price per request (USD); '' when unset. */
  price: string;
  ratio: string;
  completionRatio: string;
}

export type PricingMode = 'per-token' | 'per-request';

export type RatioMaps = {
  ModelPrice: Record<string, number>;
  ModelRatio: Record<string, number>;
  CompletionRatio: Record<string, number>;
};

function parseMap(text: string | undefined): Record<string, number> {
  try {
    const v = JSON.parse(text ?? '{}') as unknown;
    if (!v || typeof v !== 'object' || Array.isArray(v)) return {};
    const out: Record<string, number> = {};
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
      const n = typeof x === 'number' ? x : Number(x);
      if (Number.isFinite(n)) out[k] = n;
    }
    return out;
  } catch {
    return {};
  }
}

export function parseMaps(options: Record<string, string>): RatioMaps {
  return {
    ModelPrice: parseMap(options.ModelPrice),
    ModelRatio: parseMap(options.ModelRatio),
    CompletionRatio: parseMap(options.CompletionRatio),
  };
}

const str = (n: number | undefined) => (n === undefined ? '' : String(n));

/** One row per model named in any of the three maps, sorted by name. */
export function buildRows(maps: RatioMaps): ModelRow[] {
  const names = new Set([
    ...Object.keys(maps.ModelPrice),
    ...Object.keys(maps.ModelRatio),
    ...Object.keys(maps.CompletionRatio),
  ]);
  return [...names].sort().map((name) => ({
    name,
    price: str(maps.ModelPrice[name]),
    ratio: str(maps.ModelRatio[name]),
    completionRatio: str(maps.CompletionRatio[name]),
  }));
}

/** Enabled models that have neither a fixed price nor a ratio ("models with no ratio set"). */
export function unsetModelRows(enabled: string[], maps: RatioMaps): ModelRow[] {
  return [...new Set(enabled)]
    .filter((m) => maps.ModelPrice[m] === undefined && maps.ModelRatio[m] === undefined)
    .sort()
    .map((name) => ({ name, price: '', ratio: '', completionRatio: '' }));
}

/** A fixed price takes priority: such a row is billed per request and its ratio fields are disabled. */
export function modeOf(row: ModelRow): PricingMode {
  return row.price.trim() !== '' ? 'per-request' : 'per-token';
}

/** Choosing per-request clears the ratios; per-token clears the fixed price. */
export function switchMode(row: ModelRow, mode: PricingMode): ModelRow {
  return mode === 'per-request' ? { ...row, ratio: '', completionRatio: '' } : { ...row, price: '' };
}

/** Accepts '' and anything that is or becomes a non-negative decimal while typing ("1", "0.", ".5"). */
export function isNumericInput(text: string): boolean {
  return /^\d*\.?\d*$/.test(text.trim());
}

export function isNumber(text: string): boolean {
  const s = text.trim();
  return s !== '' && /^\d*\.?\d*$/.test(s) && s !== '.' && Number.isFinite(Number(s));
}

export type RowField = 'price' | 'ratio' | 'completionRatio';

/** An inline edit; 'notNumber' (请输入数字) leaves the row unchanged. Setting a price clears the ratios. */
export function editRow(row: ModelRow, field: RowField, text: string): { row: ModelRow; error?: 'notNumber' } {
  if (!isNumericInput(text)) return { row, error: 'notNumber' };
  const next = { ...row, [field]: text.trim() };
  return { row: field === 'price' && next.price !== '' ? switchMode(next, 'per-request') : next };
}

// ---- add / edit dialog ----

export interface DialogInput {
  /** Name of the row being edited; '' when adding. */
  original: string;
  name: string;
  mode: PricingMode;
  /** per-token sub-mode: by ratio, or by price per 1M tokens (input/output USD). */
  tokenInput: 'ratio' | 'price';
  price: string;
  ratio: string;
  completionRatio: string;
  inputPrice: string;
  outputPrice: string;
}

export type DialogError = 'nameRequired' | 'duplicate' | 'notNumber' | 'priceZero' | 'priceRequired' | 'ratioRequired';

/** The dialog is in add mode when the name is new (spec §4). */
export function isAddMode(rows: ModelRow[], name: string): boolean {
  return !rows.some((r) => r.name === name.trim());
}

/** USD per 1M tokens → ratio (ratio 1 = $2 / 1M input tokens) and completion ratio (output / input). */
export function pricesToRatios(
  inputPrice: number,
  outputPrice: number | null,
): { ratio: string; completionRatio: string } {
  const ratio = round(inputPrice / 2);
  const completion = outputPrice === null || inputPrice === 0 ? '' : String(round(outputPrice / inputPrice));
  return { ratio: String(ratio), completionRatio: completion };
}

function round(n: number): number {
  return Number.parseFloat(n.toFixed(6));
}

/** Validates the dialog and applies it to the rows (adding, editing or renaming one row). */
export function applyDialog(rows: ModelRow[], d: DialogInput): { rows: ModelRow[]; error?: DialogError } {
  const name = d.name.trim();
  if (!name) return { rows, error: 'nameRequired' };
  if (name !== d.original && rows.some((r) => r.name === name)) return { rows, error: 'duplicate' };
  let row: ModelRow;
  if (d.mode === 'per-request') {
    if (d.price.trim() === '') return { rows, error: 'priceRequired' };
    if (!isNumber(d.price)) return { rows, error: 'notNumber' };
    if (Number(d.price) === 0) return { rows, error: 'priceZero' };
    row = { name, price: d.price.trim(), ratio: '', completionRatio: '' };
  } else if (d.tokenInput === 'price') {
    if (d.inputPrice.trim() === '') return { rows, error: 'ratioRequired' };
    if (!isNumber(d.inputPrice) || (d.outputPrice.trim() !== '' && !isNumber(d.outputPrice)))
      return { rows, error: 'notNumber' };
    const r = pricesToRatios(Number(d.inputPrice), d.outputPrice.trim() === '' ? null : Number(d.outputPrice));
    row = { name, price: '', ...r };
  } else {
    if (d.ratio.trim() === '') return { rows, error: 'ratioRequired' };
    if (!isNumber(d.ratio) || (d.completionRatio.trim() !== '' && !isNumber(d.completionRatio)))
      return { rows, error: 'notNumber' };
    row = { name, price: '', ratio: d.ratio.trim(), completionRatio: d.completionRatio.trim() };
  }
  const idx = rows.findIndex((r) => r.name === (d.original || name));
  if (idx < 0) return { rows: [row, ...rows] };
  const next = [...rows];
  next[idx] = row;
  return { rows: next };
}

// ---- batch set ----

export type BatchField = 'price' | 'ratio' | 'completionRatio' | 'both';

export type BatchError = 'noSelection' | 'noValue' | 'needBoth' | 'notNumber' | 'priceZero';

export function applyBatch(
  rows: ModelRow[],
  selected: string[],
  field: BatchField,
  value: string,
  completionValue = '',
): { rows: ModelRow[]; error?: BatchError } {
  if (selected.length === 0) return { rows, error: 'noSelection' };
  if (field === 'both') {
    if (value.trim() === '' || completionValue.trim() === '') return { rows, error: 'needBoth' };
    if (!isNumber(value) || !isNumber(completionValue)) return { rows, error: 'notNumber' };
  } else {
    if (value.trim() === '') return { rows, error: 'noValue' };
    if (!isNumber(value)) return { rows, error: 'notNumber' };
    if (field === 'price' && Number(value) === 0) return { rows, error: 'priceZero' };
  }
  const v = value.trim();
  const chosen = new Set(selected);
  return {
    rows: rows.map((r) => {
      if (!chosen.has(r.name)) return r;
      switch (field) {
        case 'price':
          return { ...r, price: v, ratio: '', completionRatio: '' };
        case 'ratio':
          return { ...r, price: '', ratio: v };
        case 'completionRatio':
          return { ...r, price: '', completionRatio: v };
        case 'both':
          return { ...r, price: '', ratio: v, completionRatio: completionValue.trim() };
      }
    }),
  };
}

// ---- save ----

/**
 * Rows whose values cannot be saved: a non-number, or a fixed price of 0 that was typed here. The default table
 * itself prices a few Midjourney actions at 0 (mj_inpaint, mj_custom_zoom), so untouched prices are not refused.
 */
export function rowProblems(
  rows: ModelRow[],
  initial: ModelRow[] = [],
): Array<{ name: string; error: 'notNumber' | 'priceZero' }> {
  const out: Array<{ name: string; error: 'notNumber' | 'priceZero' }> = [];
  const before = new Map(initial.map((r) => [r.name, r.price]));
  for (const r of rows) {
    for (const v of [r.price, r.ratio, r.completionRatio]) {
      if (v !== '' && !isNumber(v)) {
        out.push({ name: r.name, error: 'notNumber' });
        break;
      }
    }
    if (r.price !== '' && isNumber(r.price) && Number(r.price) === 0 && before.get(r.name) !== r.price)
      out.push({ name: r.name, error: 'priceZero' });
  }
  return out;
}

/** The three maps exactly as the rows say (the full visual editor replaces the maps). */
export function rowsToMaps(rows: ModelRow[]): RatioMaps {
  const maps: RatioMaps = { ModelPrice: {}, ModelRatio: {}, CompletionRatio: {} };
  for (const r of rows) {
    if (r.price !== '') maps.ModelPrice[r.name] = Number(r.price);
    if (r.ratio !== '') maps.ModelRatio[r.name] = Number(r.ratio);
    if (r.completionRatio !== '') maps.CompletionRatio[r.name] = Number(r.completionRatio);
  }
  return maps;
}

/** The unset-model editor only adds what was filled in to the existing maps. */
export function mergeRowsIntoMaps(base: RatioMaps, rows: ModelRow[]): RatioMaps {
  const add = rowsToMaps(rows);
  return {
    ModelPrice: { ...base.ModelPrice, ...add.ModelPrice },
    ModelRatio: { ...base.ModelRatio, ...add.ModelRatio },
    CompletionRatio: { ...base.CompletionRatio, ...add.CompletionRatio },
  };
}

/** The option changes a save sends: only the maps that differ from the stored ones. */
export function mapChanges(before: RatioMaps, after: RatioMaps): Array<{ key: keyof RatioMaps; value: string }> {
  const keys: Array<keyof RatioMaps> = ['ModelPrice', 'ModelRatio', 'CompletionRatio'];
  return keys
    .filter((k) => !sameMap(before[k], after[k]))
    .map((k) => ({ key: k, value: JSON.stringify(after[k], null, 2) }));
}

function sameMap(a: Record<string, number>, b: Record<string, number>): boolean {
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  return ka.every((k) => b[k] === a[k]);
}
