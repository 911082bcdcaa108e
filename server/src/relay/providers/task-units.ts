// The units an upstream reports it deducted for a finished task (Kling's final_unit_deduction, a decimal string;
// Ark's usage.total_tokens), which the engine settles a ratio-priced task on (services/tasks/settle.ts).

/** A positive count of units rounded up (new-api's ceil), from a number or a decimal string; undefined otherwise. */
export function reportedUnits(v: unknown): number | undefined {
  let n: number;
  if (typeof v === 'number') n = v;
  else if (typeof v === 'string' && /^\s*\d+(\.\d+)?\s*$/.test(v)) n = Number(v);
  else return undefined;
  if (!Number.isFinite(n) || n <= 0) return undefined;
  const units = Math.ceil(n);
  return Number.isSafeInteger(units) ? units : undefined;
}
