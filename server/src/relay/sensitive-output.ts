// The completion's sensitive-word check (CheckSensitiveEnabled + CheckSensitiveOnCompletionEnabled, off by default;
// new-api-compat.md §4.7 "Sensitive words in completions"). As new-api did while it had the check: a word found in a
// whole answer refuses it with 400 sensitive_words_detected when StopOnSensitiveEnabled is on (the answer is still
// charged), else masks it with `**###**`; in a stream the word is masked in the event that completes it, and with
// StopOnSensitiveEnabled the stream ends there (billed for what was delivered). Unlike new-api, a word split across
// two events is caught: each event's text is searched together with the end of the text before it.
import type { OptionStore } from '../services/options.js';
import { sensitiveMatcher, type SensitiveMatcher } from '../services/sensitive-words.js';
import type { HubChunk } from './hub/types.js';
import { RelayError } from './errors.js';

export const SENSITIVE_MASK = '**###**';

/** One request's completion check: the words to find, whether a hit stops the answer, and the words found so far. */
export interface OutputCheck {
  readonly matcher: SensitiveMatcher;
  readonly stop: boolean;
  /** the words found (as written in the answer), for the log row */
  readonly found: string[];
}

/**
 * The check for one request, or null when it is off. Read once at the start of the attempts: with the option off (the
 * default) this one flag test is the only cost on the relay's path.
 */
export function outputCheck(options: OptionStore): OutputCheck | null {
  if (!options.bool('CheckSensitiveOnCompletionEnabled') || !options.bool('CheckSensitiveEnabled')) return null;
  const matcher = sensitiveMatcher(options.get('SensitiveWords'));
  return matcher ? { matcher, stop: options.bool('StopOnSensitiveEnabled'), found: [] } : null;
}

/** The client's error for a whole answer refused for its words (new-api's text and code). */
export function refusedAnswer(words: string[]): RelayError {
  const unique = [...new Set(words.map((w) => w.toLowerCase()))];
  return new RelayError(
    400,
    `sensitive words detected on response: ${unique.join(', ')}`,
    'new_api_error',
    'sensitive_words_detected',
  );
}

/** Masks every word in `text`, recording them; the same string when there is none. */
function maskAll(text: string, check: OutputCheck): string {
  const re = check.matcher.all;
  re.lastIndex = 0;
  if (!re.test(text)) return text;
  re.lastIndex = 0;
  return text.replace(re, (w) => {
    check.found.push(w);
    return SENSITIVE_MASK;
  });
}

// the fields of an answer that name, type or identify it rather than say something: never searched
const STRUCTURAL = new Set([
  'id',
  'object',
  'model',
  'role',
  'type',
  'finish_reason',
  'stop_reason',
  'finishReason',
  'modelVersion',
  'responseId',
  'system_fingerprint',
  'service_tier',
  'tool_call_id',
]);

/** Masks the words in every text field of a JSON answer in place (any client format); true when there was one. */
function maskTree(node: unknown, check: OutputCheck): boolean {
  let hit = false;
  if (Array.isArray(node)) {
    for (let i = 0; i < node.length; i++) {
      const v = node[i];
      if (typeof v === 'string') {
        const m = maskAll(v, check);
        if (m !== v) {
          node[i] = m;
          hit = true;
        }
      } else if (v && typeof v === 'object' && maskTree(v, check)) hit = true;
    }
  } else if (node && typeof node === 'object') {
    const o = node as Record<string, unknown>;
    for (const k of Object.keys(o)) {
      if (STRUCTURAL.has(k)) continue;
      const v = o[k];
      if (typeof v === 'string') {
        const m = maskAll(v, check);
        if (m !== v) {
          o[k] = m;
          hit = true;
        }
      } else if (v && typeof v === 'object' && maskTree(v, check)) hit = true;
    }
  }
  return hit;
}

/**
 * A whole answer (already in the client's shape) checked in place: null when clean; else the words found and, unless
 * the answer is refused (StopOnSensitiveEnabled), the answer masked in place.
 */
export function checkAnswer(answer: unknown, check: OutputCheck): { refused: RelayError | null } | null {
  const before = check.found.length;
  if (!maskTree(answer, check)) return null;
  return { refused: check.stop ? refusedAnswer(check.found.slice(before)) : null };
}

/** The same for an answer's bytes: the bytes to send (masked), or the refusal; null when clean or not JSON. */
export function checkAnswerBytes(buf: Buffer, check: OutputCheck): { body: Buffer; refused: RelayError | null } | null {
  let json: unknown;
  try {
    json = JSON.parse(buf.toString('utf8'));
  } catch {
    return null;
  }
  const r = checkAnswer(json, check);
  return r && { body: r.refused ? buf : Buffer.from(JSON.stringify(json)), refused: r.refused };
}

/**
 * One streamed text (a choice's content): each new piece is searched together with the end of the text before it (the
 * longest word's length minus one), so a word split across events is found in the event that completes it, and only
 * that part of the word is masked (the part already sent cannot be taken back).
 */
export class StreamTextScanner {
  private tail = '';
  constructor(private readonly check: OutputCheck) {}

  /** The piece to send, with the words it ends masked; `hit` says whether it ended one. */
  scan(piece: string): { text: string; hit: boolean } {
    if (!piece) return { text: piece, hit: false };
    const re = this.check.matcher.all;
    const hay = this.tail + piece;
    const off = this.tail.length;
    let out = '';
    let copied = 0;
    re.lastIndex = 0;
    for (let m = re.exec(hay); m; m = re.exec(hay)) {
      const end = m.index + m[0].length;
      // wholly in the text before: found (or not a word) with that piece; look again from the next character
      if (end <= off) {
        re.lastIndex = m.index + 1;
        continue;
      }
      const from = Math.max(m.index - off, 0);
      out += piece.slice(copied, from) + SENSITIVE_MASK;
      copied = end - off;
      this.check.found.push(m[0]);
    }
    const overlap = this.check.matcher.longest - 1;
    this.tail = overlap > 0 ? hay.slice(-overlap) : '';
    return copied ? { text: out + piece.slice(copied), hit: true } : { text: piece, hit: false };
  }
}

/** Scanners per (choice, field) of one stream. */
export class StreamScanners {
  private readonly byKey = new Map<string, StreamTextScanner>();
  constructor(readonly check: OutputCheck) {}

  /** The text to send for a piece of field `field` of choice `index`. */
  scan(index: number, field: string, piece: string): { text: string; hit: boolean } {
    const key = `${index}:${field}`;
    let s = this.byKey.get(key);
    if (!s) this.byKey.set(key, (s = new StreamTextScanner(this.check)));
    return s.scan(piece);
  }

  /**
   * Masks the text deltas of hub chunks in place (the translated and decoded lanes); true when the stream must stop
   * after them (a word was found and StopOnSensitiveEnabled is on).
   */
  maskChunks(chunks: HubChunk[]): boolean {
    let hit = false;
    for (const c of chunks) {
      for (const ch of c.choices) {
        const d = ch.delta;
        if (d.content) {
          const r = this.scan(ch.index, 'content', d.content);
          if (r.hit) {
            d.content = r.text;
            hit = true;
          }
        }
        if (d.reasoning_content) {
          const r = this.scan(ch.index, 'reasoning', d.reasoning_content);
          if (r.hit) {
            d.reasoning_content = r.text;
            hit = true;
          }
        }
      }
    }
    return hit && this.check.stop;
  }

  /**
   * Masks one OpenAI chat or completions stream payload (the native lane); returns the payloads to send instead:
   * the event (masked when needed), and when the stream stops, a `content_filter` finish and `[DONE]`.
   */
  maskOpenAiEvent(data: string): { out: string[]; stop: boolean } {
    let j: any;
    try {
      j = JSON.parse(data);
    } catch {
      return { out: [data], stop: false };
    }
    if (!Array.isArray(j?.choices)) return { out: [data], stop: false };
    let hit = false;
    for (const c of j.choices) {
      const index = Number(c?.index) || 0;
      if (typeof c?.text === 'string' && c.text) {
        const r = this.scan(index, 'text', c.text);
        if (r.hit) {
          c.text = r.text;
          hit = true;
        }
      }
      const d = c?.delta;
      if (typeof d?.content === 'string' && d.content) {
        const r = this.scan(index, 'content', d.content);
        if (r.hit) {
          d.content = r.text;
          hit = true;
        }
      }
      if (typeof d?.reasoning_content === 'string' && d.reasoning_content) {
        const r = this.scan(index, 'reasoning', d.reasoning_content);
        if (r.hit) {
          d.reasoning_content = r.text;
          hit = true;
        }
      }
    }
    if (!hit) return { out: [data], stop: false };
    const event = JSON.stringify(j);
    if (!this.check.stop) return { out: [event], stop: false };
    const finish = {
      id: j.id,
      object: j.object,
      created: j.created,
      model: j.model,
      choices: j.choices.map((c: any) =>
        j.object === 'text_completion'
          ? { index: c.index ?? 0, text: '', finish_reason: 'content_filter' }
          : { index: c.index ?? 0, delta: {}, finish_reason: 'content_filter' },
      ),
    };
    return { out: [event, JSON.stringify(finish), '[DONE]'], stop: true };
  }
}

/** The chunk that ends a stream stopped for a word: each choice finishes with `content_filter`. */
export function stopChunk(last: HubChunk): HubChunk {
  return {
    id: last.id,
    object: 'chat.completion.chunk',
    created: last.created,
    model: last.model,
    choices: (last.choices.length ? last.choices : [{ index: 0 }]).map((c) => ({
      index: c.index,
      delta: {},
      finish_reason: 'content_filter' as const,
    })),
  };
}
