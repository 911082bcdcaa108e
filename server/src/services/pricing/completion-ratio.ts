// Output-token price relative to input (new-api-compat.md §5.6). new-api keeps most of this as code, not data: a rule
// that "matches" wins over the CompletionRatio option, so an admin cannot lower gpt-4o below 4 through the option.
// Names containing "/" (vendor-prefixed, e.g. OpenRouter) are the exception: their option entry always wins.

/** GPTs ("gizmo") models share one price entry per family. */
export function normalizeGizmo(name: string): string {
  if (name.startsWith('gpt-4-gizmo')) return 'gpt-4-gizmo-*';
  if (name.startsWith('gpt-4o-gizmo')) return 'gpt-4o-gizmo-*';
  return name;
}

type Rule = { kind: 'forced'; ratio: number } | { kind: 'fallback'; ratio: number };
const forced = (ratio: number): Rule => ({ kind: 'forced', ratio });
/** Used only when the option map has no entry for the name. */
const fallback = (ratio: number): Rule => ({ kind: 'fallback', ratio });

/** The hard-coded rule for a (gizmo-normalised) name, or undefined when no rule applies. */
export function completionRule(name: string): Rule | undefined {
  const lower = name.toLowerCase();
  if (name.startsWith('gpt-4') && !name.endsWith('-all') && !name.endsWith('-gizmo-*')) {
    if (name.startsWith('gpt-4o')) return forced(name === 'gpt-4o-2024-05-13' ? 3 : 4);
    if (name.startsWith('gpt-4.5')) return forced(2);
    // later upstream: gpt-4.1 lists $2 in / $8 out. new-api's snapshot has no rule and charges it 2 (half price).
    if (name.startsWith('gpt-4.1')) return forced(4);
    if (
      name.startsWith('gpt-4-turbo') ||
      (name.startsWith('gpt-4-') && name.endsWith('preview')) ||
      name.endsWith('gpt-4-1106') ||
      name.endsWith('gpt-4-1105')
    ) {
      return forced(3);
    }
    return fallback(2);
  }
  if (name.startsWith('o1') || name.startsWith('o3') || name.startsWith('o4')) return forced(4);
  // later upstream: gpt-5 family lists 8× output.
  if (name.startsWith('gpt-5')) return forced(8);
  if (name === 'chatgpt-4o-latest') return forced(3);
  if (name.includes('claude-instant-1') || name.includes('claude-2')) return forced(3);
  if (name.includes('claude-3')) return forced(5);
  // later upstream: Claude 4 family (claude-sonnet-4*, claude-opus-4*, claude-haiku-4*) lists 5× output.
  if (/claude-(sonnet|opus|haiku)-4/.test(name)) return forced(5);
  if (name.startsWith('gpt-3.5')) {
    if (name === 'gpt-3.5-turbo' || name.endsWith('0125')) return forced(3);
    if (name.endsWith('1106')) return forced(2);
    return forced(4 / 3);
  }
  if (name.startsWith('mistral-')) return forced(3);
  if (name.startsWith('gemini-')) {
    if (name.startsWith('gemini-1.5') || name.startsWith('gemini-2.0')) return forced(4);
    if (name.startsWith('gemini-2.5-pro-preview')) return forced(8);
    // later upstream: the 2.5 GA list prices (pro $1.25 / $10, flash $0.30 / $2.50; flash-lite 4x, the fallback)
    if (name.startsWith('gemini-2.5-pro')) return forced(8);
    if (name.startsWith('gemini-2.5-flash') && !name.startsWith('gemini-2.5-flash-lite')) return forced(2.5 / 0.3);
    return fallback(4);
  }
  if (name.startsWith('command')) {
    if (name === 'command-r') return forced(3);
    if (name === 'command-r-plus') return forced(5);
    return forced(4);
  }
  if (lower === 'deepseek-chat' || lower === 'deepseek-reasoner') return forced(4);
  if (
    name.startsWith('ERNIE-Speed-') ||
    name.startsWith('ERNIE-Lite-') ||
    name.startsWith('ERNIE-Character') ||
    name.startsWith('ERNIE-Functions')
  ) {
    return forced(2);
  }
  if (name === 'llama2-70b-4096') return forced(0.8 / 0.64);
  if (name === 'llama3-8b-8192') return forced(2);
  if (name === 'llama3-70b-8192') return forced(0.79 / 0.59);
  return undefined;
}

/** GetCompletionRatio over a given option map (the parsed `CompletionRatio` option). */
export function resolveCompletionRatio(map: Record<string, number>, model: string): number {
  if (model.includes('/')) {
    const v = map[model];
    if (isRatio(v)) return v;
  }
  const name = normalizeGizmo(model);
  const rule = completionRule(name);
  if (rule?.kind === 'forced') return rule.ratio;
  const v = map[name];
  if (isRatio(v)) return v;
  return rule ? rule.ratio : 1;
}

export function isRatio(v: unknown): v is number {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0;
}
