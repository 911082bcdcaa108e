// Sensitive-word check of prompts (new-api-compat.md §4.6 step 3; options CheckSensitiveEnabled,
// CheckSensitiveOnPromptEnabled, SensitiveWords one per line); the completions' check (relay/sensitive-output.ts)
// shares the matcher. new-api lower-cases the text and searches it for every
// word; here one case-insensitive RegExp of the escaped words, compiled once per SensitiveWords value, tests each text
// without copying it.

/** What `SensitiveWords` compiles to: a test, a global search (for finding every word and masking) and the longest word. */
export interface SensitiveMatcher {
  re: RegExp;
  /** the same pattern with the `g` flag: callers set `lastIndex` before each use */
  all: RegExp;
  /** length of the longest word, in UTF-16 units: a streamed check keeps that much text minus one as overlap */
  longest: number;
}

let cached: { words: string; m: SensitiveMatcher | null } = { words: '', m: null };

/** The matcher of a `SensitiveWords` value (one word a line), compiled once per value; null when it lists none. */
export function sensitiveMatcher(words: string): SensitiveMatcher | null {
  if (cached.words !== words) {
    const list = words
      .split('\n')
      .map((w) => w.trim())
      .filter(Boolean);
    // longest first: of two words where one begins the other, the longer is found (and masked) whole
    const source = [...list]
      .sort((a, b) => b.length - a.length)
      .map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('|');
    cached = {
      words,
      m: list.length
        ? {
            re: new RegExp(source, 'i'),
            all: new RegExp(source, 'gi'),
            longest: Math.max(...list.map((w) => w.length)),
          }
        : null,
    };
  }
  return cached.m;
}

function matcherFor(words: string): RegExp | null {
  return sensitiveMatcher(words)?.re ?? null;
}

/** Texts of a prompt field that is a string or an array of strings (completions' prompt, embeddings' input). */
export function* inputTexts(input: unknown): Iterable<string> {
  if (typeof input === 'string') yield input;
  else if (Array.isArray(input)) for (const x of input) if (typeof x === 'string') yield x;
}

/** Texts of chat messages: string contents and the text parts of array contents. */
export function* messageTexts(messages: unknown): Iterable<string> {
  if (!Array.isArray(messages)) return;
  for (const m of messages) {
    const content = (m as { content?: unknown } | null)?.content;
    if (typeof content === 'string') yield content;
    else if (Array.isArray(content)) {
      for (const part of content) {
        const text = (part as { type?: unknown; text?: unknown } | null)?.text;
        if ((part as { type?: unknown } | null)?.type === 'text' && typeof text === 'string') yield text;
      }
    }
  }
}

/** The text of the first word found in `texts` (as written there), or null when none is. */
export function findSensitiveWord(words: string, texts: Iterable<string>): string | null {
  const re = matcherFor(words);
  if (!re) return null;
  for (const text of texts) {
    const m = re.exec(text);
    if (m) return m[0];
  }
  return null;
}
