// Usage extraction without parsing whole responses: find the `"usage"` object and parse only that slice.
import type { UpstreamUsage } from './providers/types.js';

const USAGE = Buffer.from('"usage"');
const USAGE_TAIL = USAGE.subarray(1);

/**
 * Where `"usage"` first occurs at/after `from`, or -1. Searched for without its opening quote, then checked: indexOf
 * stops at every occurrence of the needle's first byte, and a quote opens every JSON string, so `usage"` is found
 * several times faster than `"usage"` (docs/perf/where-the-time-goes.md).
 */
export function indexOfUsage(buf: Buffer, from = 0): number {
  for (let i = buf.indexOf(USAGE_TAIL, from + 1); i >= 0; i = buf.indexOf(USAGE_TAIL, i + 1))
    if (buf[i - 1] === 0x22) return i - 1;
  return -1;
}

/** Index of the `{` opening a non-null usage object at/after `from`, or -1. */
function usageObjectStart(buf: Buffer, at: number): number {
  let j = at + USAGE.length;
  while (j < buf.length && (buf[j] === 0x20 || buf[j] === 0x09)) j++;
  if (buf[j] !== 0x3a /* : */) return -1;
  j++;
  while (j < buf.length && (buf[j] === 0x20 || buf[j] === 0x09 || buf[j] === 0x0a || buf[j] === 0x0d)) j++;
  return buf[j] === 0x7b /* { */ ? j : -1;
}

/** Whether the buffer holds a `"usage": {…}` (not `"usage": null`); `first` = where `"usage"` first occurs, if known. */
export function hasUsageObject(buf: Buffer, first: number = indexOfUsage(buf)): boolean {
  let i = first;
  while (i >= 0) {
    if (usageObjectStart(buf, i) >= 0) return true;
    i = indexOfUsage(buf, i + USAGE.length);
  }
  return false;
}

function matchingBrace(buf: Buffer, start: number): number {
  let depth = 0;
  for (let k = start; k < buf.length; k++) {
    const c = buf[k];
    if (c === 0x22) {
      for (k++; k < buf.length && buf[k] !== 0x22; k++) if (buf[k] === 0x5c) k++;
    } else if (c === 0x7b) depth++;
    else if (c === 0x7d && --depth === 0) return k;
  }
  return -1;
}

export function normaliseUsage(u: any): UpstreamUsage | null {
  if (!u || typeof u !== 'object') return null;
  const prompt = Number(u.prompt_tokens ?? u.input_tokens ?? 0) || 0;
  const completion = Number(u.completion_tokens ?? u.output_tokens ?? 0) || 0;
  // input_tokens_details: the Responses API's name for prompt_tokens_details
  const cached =
    Number(
      u.prompt_tokens_details?.cached_tokens ?? u.input_tokens_details?.cached_tokens ?? u.prompt_cache_hit_tokens ?? 0,
    ) || 0;
  const usage: UpstreamUsage = { prompt_tokens: prompt, completion_tokens: completion, cached_tokens: cached };
  const audioIn = Number(u.prompt_tokens_details?.audio_tokens ?? 0) || 0;
  const audioOut = Number(u.completion_tokens_details?.audio_tokens ?? 0) || 0;
  if (audioIn > 0) usage.audio_input = audioIn;
  if (audioOut > 0) usage.audio_output = audioOut;
  return usage;
}

/**
 * The last top-level-looking `"usage": {…}` object of a JSON answer, parsed alone (OpenAI and Anthropic put it last),
 * or null.
 */
export function extractUsageObject(buf: Buffer): Record<string, unknown> | null {
  let i = buf.lastIndexOf(USAGE);
  while (i >= 0) {
    const s = usageObjectStart(buf, i);
    if (s >= 0) {
      const e = matchingBrace(buf, s);
      if (e < 0) return null;
      try {
        return JSON.parse(buf.toString('utf8', s, e + 1));
      } catch {
        return null;
      }
    }
    i = i > 0 ? buf.lastIndexOf(USAGE, i - 1) : -1;
  }
  return null;
}

/** The usage of an OpenAI-style JSON answer, without parsing the answer. */
export function extractUsage(buf: Buffer): UpstreamUsage | null {
  const u = extractUsageObject(buf);
  return u ? normaliseUsage(u) : null;
}
