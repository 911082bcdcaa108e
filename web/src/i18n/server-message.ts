// Shows the server's Chinese messages in English when the console is in English (issue 34: one language at a
// time). The server keeps new-api's texts on the wire; this maps them through SERVER_MESSAGES_EN. A text the table
// does not know (an upstream's own error, a name the admin typed) is shown as it came.
import i18n from './index.js';
import { SERVER_MESSAGES_EN } from './server-messages.js';

interface Pattern {
  regex: RegExp;
  /** the placeholder numbers in the order they appear in the key */
  slots: number[];
  english: string;
  /** literal characters of the key: the more, the more specific */
  weight: number;
}

const PLACEHOLDER = /\{(\d+)\}/g;

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

let patterns: Pattern[] | null = null;

function compiledPatterns(): Pattern[] {
  if (patterns) return patterns;
  patterns = [];
  for (const [key, english] of Object.entries(SERVER_MESSAGES_EN)) {
    const pieces = key.split(PLACEHOLDER);
    if (pieces.length === 1) continue;
    const slots: number[] = [];
    let source = '';
    pieces.forEach((piece, i) => {
      if (i % 2 === 0) source += escapeRegex(piece);
      else {
        slots.push(Number(piece));
        source += '([\\s\\S]*?)';
      }
    });
    const weight = pieces.filter((_, i) => i % 2 === 0).join('').length;
    patterns.push({ regex: new RegExp(`^${source}$`), slots, english, weight });
  }
  patterns.sort((a, b) => b.weight - a.weight);
  return patterns;
}

/** The English of a server text (exact, or a pattern whose values are translated in turn); undefined if unknown. */
export function englishOf(text: string, depth = 0): string | undefined {
  const exact = SERVER_MESSAGES_EN[text];
  if (exact !== undefined) return exact;
  if (depth > 3 || !/[\u3400-\u9fff\uff00-\uffef\u3000-\u303f]/.test(text)) return undefined;
  for (const p of compiledPatterns()) {
    const m = p.regex.exec(text);
    if (!m) continue;
    const values: Record<number, string> = {};
    p.slots.forEach((slot, i) => {
      const value = m[i + 1];
      values[slot] = englishOf(value, depth + 1) ?? value;
    });
    return p.english.replace(PLACEHOLDER, (whole, n: string) => values[Number(n)] ?? whole);
  }
  return undefined;
}

/** A server message as the console shows it: in English when the UI is in English and the text is known. */
export function translateServerMessage(text: string): string;
export function translateServerMessage(text: string | null | undefined): string | null | undefined;
export function translateServerMessage(text: string | null | undefined): string | null | undefined {
  if (!text || !i18n.language?.startsWith('en')) return text;
  return englishOf(text) ?? text;
}
