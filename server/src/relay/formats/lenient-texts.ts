// The texts of a request the hub cannot hold (a Claude `document` block, a Gemini part of a kind the codec does not
// convert): such a request still goes to a provider of its own format, and is still checked for sensitive words and
// counted for its reservation. Every string under a text-bearing key is taken; base64 payloads are not text.
const TEXT_KEYS = new Set(['text', 'thinking', 'content', 'input', 'args', 'response', 'partial_json']);

export function* lenientTexts(value: unknown, key = ''): Iterable<string> {
  if (typeof value === 'string') {
    if (TEXT_KEYS.has(key)) yield value;
    return;
  }
  if (Array.isArray(value)) {
    for (const v of value) yield* lenientTexts(v, key);
    return;
  }
  if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k === 'data' || k === 'source' || k === 'inlineData') continue;
      // a tool's input or a function's args are objects: their JSON is what the model reads
      if ((k === 'input' || k === 'args' || k === 'response') && v && typeof v === 'object') yield JSON.stringify(v);
      else yield* lenientTexts(v, k);
    }
  }
}
