// The comparison behind locales.test.ts: a language's file against the built-in zh/en bundles and the server
// messages' English table. Kept apart from the test so the test can show it fails on a doctored file.

type Bundles = Record<string, Record<string, string>>;

const PLURAL = /_(zero|one|two|few|many|other)$/;
const PLACEHOLDERS = /\{\{\s*[\w.]+\s*\}\}|\{\d+\}|<\/?\d+>|%[sd]/g;

/** The placeholders of a text ({{x}}, {0}, <0>…</0>, %s), normalised and sorted, `{{count}}` left out if asked. */
function placeholders(text: string, withoutCount = false): string {
  const found = (text.match(PLACEHOLDERS) ?? []).map((p) => p.replace(/\s/g, ''));
  return found
    .filter((p) => !(withoutCount && p === '{{count}}'))
    .sort()
    .join(',');
}

/**
 * What is wrong with a language's file (an empty list when nothing): a key of the English bundles or a server message
 * missing or empty, a placeholder lost or added, a key or namespace the bundles do not have. A plural key (`x_one`,
 * `x_other` in English) needs `x_<category>` for each of the language's Intl plural categories, `other` being the
 * plain `x`; its forms may leave out `{{count}}` (French "le canal", Russian "один канал").
 */
export function localeProblems(
  lng: string,
  file: Bundles,
  english: Bundles,
  serverEnglish: Record<string, string>,
): string[] {
  const problems: string[] = [];
  const categories = new Intl.PluralRules(lng).resolvedOptions().pluralCategories as string[];
  const reference: Bundles = { ...english, _server: serverEnglish };
  for (const [ns, keys] of Object.entries(reference)) {
    const own = file[ns] ?? {};
    const expected = new Map<string, string>(); // key → the English it must match (placeholders)
    const allowed = new Set<string>();
    for (const [key, en] of Object.entries(keys)) {
      const plural = ns !== '_server' && PLURAL.exec(key);
      if (!plural) {
        expected.set(key, en);
        continue;
      }
      const base = key.slice(0, plural.index);
      for (const c of categories) {
        allowed.add(`${base}_${c}`);
        if (c !== 'other' || plural[1] === 'other') expected.set(`${base}_${c}`, keys[base] ?? en);
      }
    }
    for (const [key, en] of expected) {
      const text = own[key];
      if (typeof text !== 'string' || text.trim() === '') {
        problems.push(`${lng} ${ns}:${key} missing`);
        continue;
      }
      const plural = ns !== '_server' && PLURAL.test(key);
      if (placeholders(text, plural) !== placeholders(en, plural)) {
        problems.push(`${lng} ${ns}:${key} placeholders ${placeholders(text)} instead of ${placeholders(en)}`);
      }
    }
    for (const key of Object.keys(own)) {
      if (!expected.has(key) && !allowed.has(key)) problems.push(`${lng} ${ns}:${key} unknown`);
    }
  }
  for (const ns of Object.keys(file)) if (!(ns in reference)) problems.push(`${lng} ${ns} unknown namespace`);
  return problems;
}
