// Pages write each string once as [zh, en]; this splits the table into the {zh, en} bundles registerBundle expects.
export type Pairs = Record<string, readonly [zh: string, en: string]>;

export function splitPairs(pairs: Pairs): { zh: Record<string, string>; en: Record<string, string> } {
  const zh: Record<string, string> = {};
  const en: Record<string, string> = {};
  for (const [key, [z, e]] of Object.entries(pairs)) {
    zh[key] = z;
    en[key] = e;
  }
  return { zh, en };
}
