// Conversions of the quota field (issue 34): with currency display on, the admin types dollars and the server still
// receives whole quota units (quota_per_unit of them per dollar, new-api-compat.md §11.3).

/** Dollars typed → whole quota units (rounded: $0.1 × 500000 must be 50000, not 49999.99…). */
export function dollarsToQuota(dollars: number, perUnit: number): number {
  return Math.round(dollars * perUnit);
}

/** Quota units → the dollar amount shown in the field, without binary noise (0.1 rather than 0.1000000000001). */
export function quotaToDollarValue(quota: number, perUnit: number): number {
  return Number((quota / perUnit).toPrecision(12));
}

/** The value the form holds (a number, a numeric string or empty) as a quota number, or null when it is not one. */
export function asQuota(value: number | string | null | undefined): number | null {
  if (value === null || value === undefined || String(value).trim() === '') return null;
  const n = Number(value);
  return Number.isFinite(n) ? n : null;
}
