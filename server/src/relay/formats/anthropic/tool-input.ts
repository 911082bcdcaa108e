/**
 * A hub tool call's JSON-string arguments → Claude's `input` object. Malformed or non-object arguments (a model's
 * mistake) become `{}`: Claude needs an object, and the call itself still has to stay in the history.
 */
export function parseToolInput(args: string): Record<string, unknown> {
  try {
    const v = JSON.parse(args || '{}');
    return v && typeof v === 'object' && !Array.isArray(v) ? v : {};
  } catch {
    return {};
  }
}
