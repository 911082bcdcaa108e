// Shows the server's Chinese messages in the console's language (issue 34: one language at a time; issue 47: seven).
// The server keeps new-api's texts on the wire. English comes from SERVER_MESSAGES_EN, the other languages from the
// `_server` table of their locale file (./locales/<lng>.json, loaded with the language); a text a language's table
// lacks is shown in English, and a text no table knows (an upstream's own error, a name the admin typed) as it came.
import i18n, { currentLanguage } from './index.js';
import { SERVER_MESSAGES_EN } from './server-messages.js';

/** Server message (Chinese, `{0}`… for the values it carries) → its text in one language. */
type Table = Record<string, string>;

interface Pattern {
  regex: RegExp;
  /** the placeholder numbers in the order they appear in the key */
  slots: number[];
  translation: string;
  /** literal characters of the key: the more, the more specific */
  weight: number;
}

const PLACEHOLDER = /\{(\d+)\}/g;
const CHINESE = /[\u3400-\u9fff\uff00-\uffef\u3000-\u303f]/;

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

const compiled = new WeakMap<Table, Pattern[]>();

function patternsOf(table: Table): Pattern[] {
  const known = compiled.get(table);
  if (known) return known;
  const patterns: Pattern[] = [];
  for (const [key, translation] of Object.entries(table)) {
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
    patterns.push({ regex: new RegExp(`^${source}$`), slots, translation, weight });
  }
  patterns.sort((a, b) => b.weight - a.weight);
  compiled.set(table, patterns);
  return patterns;
}

/** A server text through one table (exact, or a pattern whose values are translated in turn); undefined if unknown. */
function through(tables: Table[], text: string, depth: number): string | undefined {
  for (const table of tables) {
    const exact = table[text];
    if (exact !== undefined) return exact;
  }
  if (depth > 3 || !CHINESE.test(text)) return undefined;
  for (const table of tables) {
    for (const p of patternsOf(table)) {
      const m = p.regex.exec(text);
      if (!m) continue;
      const values: Record<number, string> = {};
      p.slots.forEach((slot, i) => {
        const value = m[i + 1];
        values[slot] = through(tables, value, depth + 1) ?? value;
      });
      return p.translation.replace(PLACEHOLDER, (whole, n: string) => values[Number(n)] ?? whole);
    }
  }
  return undefined;
}

/** The English of a server text; undefined if unknown. */
export function englishOf(text: string): string | undefined {
  return through([SERVER_MESSAGES_EN], text, 0);
}

/** The tables a language reads server messages through: its own, then English. */
function tablesOf(lng: string): Table[] {
  if (lng === 'en') return [SERVER_MESSAGES_EN];
  const own = i18n.getResourceBundle(lng, '_server') as Table | undefined;
  return own ? [own, SERVER_MESSAGES_EN] : [SERVER_MESSAGES_EN];
}

/** A server text in a language (not Simplified Chinese); undefined if no table knows it. */
export function serverMessageIn(lng: string, text: string): string | undefined {
  return through(tablesOf(lng), text, 0);
}

/** A server message as the console shows it: in the console's language when the text is known. */
export function translateServerMessage(text: string): string;
export function translateServerMessage(text: string | null | undefined): string | null | undefined;
export function translateServerMessage(text: string | null | undefined): string | null | undefined {
  const lng = currentLanguage();
  if (!text || lng === 'zh') return text;
  return serverMessageIn(lng, text) ?? text;
}
