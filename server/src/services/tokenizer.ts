// Local token counts (new-api-compat.md §5.4), used when the upstream reports no usage and for prompt-size
// reservations. CONTRACT: names and signatures are stable; the bodies are owned by the pricing/tokenizer module.
//
// Encoders: o200k_base for gpt-4o*, chatgpt-4o*, o-series, gpt-4.1*, gpt-4.5*, gpt-5*; cl100k_base for every other
// model (Claude, Gemini and Chinese models included, as new-api does). Each BPE table is loaded on first use
// (o200k takes ~0.2 s and ~70 MB of memory), synchronously through the CommonJS build, and kept for the life of the
// process. They are deliberately not loaded at start: the relay needs them only for reservations of requests that
// set max_tokens and when an upstream reports no usage, so a gateway whose upstreams report usage never pays for
// them. Special-token text such as "<|endoftext|>" in user input is counted as ordinary text, never rejected.
import { createRequire } from 'node:module';
import { imageSizeFromDataUrl } from './pricing/image-size.js';

interface Encoder {
  encode(text: string, opts?: { disallowedSpecial?: Set<string> }): number[];
  countTokens(text: string, opts?: { disallowedSpecial?: Set<string> }): number;
}

const requireCjs = createRequire(import.meta.url);
const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };
let o200k: Encoder | undefined;
let cl100k: Encoder | undefined;

function usesO200k(model: string): boolean {
  return /^(gpt-4o|chatgpt-4o|o1|o3|o4|gpt-4\.1|gpt-4\.5|gpt-5)/.test(model);
}

export function encodingForModel(model: string): 'o200k_base' | 'cl100k_base' {
  return usesO200k(model) ? 'o200k_base' : 'cl100k_base';
}

function encoderFor(model: string): Encoder {
  if (usesO200k(model)) return (o200k ??= requireCjs('gpt-tokenizer/cjs/encoding/o200k_base') as Encoder);
  return (cl100k ??= requireCjs('gpt-tokenizer/cjs/encoding/cl100k_base') as Encoder);
}

/** Encodings whose tables this process has loaded (each costs tens of MB for the life of the process). */
export function loadedEncodings(): string[] {
  return [...(o200k ? ['o200k_base'] : []), ...(cl100k ? ['cl100k_base'] : [])];
}

export function countTextTokens(text: string, model: string): number {
  if (!text) return 0;
  return encoderFor(model).countTokens(text, PLAIN_TEXT);
}

/** Token ids, for callers that need them (e.g. tests); counting should use countTextTokens. */
export function encodeText(text: string, model: string): number[] {
  if (!text) return [];
  return encoderFor(model).encode(text, PLAIN_TEXT);
}

export interface ChatMessageLike {
  role?: string;
  name?: string;
  content?: unknown;
  tool_calls?: unknown;
}

/** new-api's flat per-image count when the size is unknown (remote URL, unreadable data): 3 × 85. */
export const UNKNOWN_IMAGE_TOKENS = 3 * 85;
export const GLM_4V_IMAGE_TOKENS = 1047;
export const INPUT_AUDIO_TOKENS = 100;
export const FILE_TOKENS = 5000;
/** Completion tokens added per tool call when counting a response locally (new-api's constant). */
export const TOOL_CALL_TOKENS = 7;

/**
 * Vision tokens of one image (OpenAI's published rule). detail=low ⇒ the base cost. Otherwise fit the image in
 * 2048×2048, scale the short side down to 768, count 512-px tiles: tiles × tile + base, where base/tile are
 * 85/170 (gpt-4o-mini: 2833/5667). Sizes come from inline data URLs only; an image whose size is unknown
 * counts UNKNOWN_IMAGE_TOKENS.
 */
export function countImageTokens(url: string, detail: string | undefined, model: string): number {
  if (model.startsWith('glm-4v')) return GLM_4V_IMAGE_TOKENS;
  const mini = model.startsWith('gpt-4o-mini');
  const base = mini ? 2833 : 85;
  const tile = mini ? 5667 : 170;
  if (detail === 'low') return base;
  const size = url ? imageSizeFromDataUrl(url) : null;
  if (!size) return UNKNOWN_IMAGE_TOKENS;
  let { width, height } = size;
  if (width > 2048 || height > 2048) {
    const r = 2048 / Math.max(width, height);
    width = Math.trunc(width * r);
    height = Math.trunc(height * r);
  }
  if (width > 768 && height > 768) {
    const r = 768 / Math.min(width, height);
    width = Math.trunc(width * r);
    height = Math.trunc(height * r);
  }
  return Math.ceil(width / 512) * Math.ceil(height / 512) * tile + base;
}

function countContentParts(parts: unknown[], model: string): number {
  let n = 0;
  for (const raw of parts) {
    if (!raw || typeof raw !== 'object') continue;
    const part = raw as Record<string, unknown>;
    switch (part.type) {
      case 'text':
        if (typeof part.text === 'string') n += countTextTokens(part.text, model);
        break;
      case 'image_url': {
        const img = part.image_url;
        if (typeof img === 'string') n += countImageTokens(img, undefined, model);
        else if (img && typeof img === 'object') {
          const o = img as { url?: unknown; detail?: unknown };
          n += countImageTokens(
            typeof o.url === 'string' ? o.url : '',
            typeof o.detail === 'string' ? o.detail : undefined,
            model,
          );
        }
        break;
      }
      case 'input_audio':
        n += INPUT_AUDIO_TOKENS;
        break;
      case 'file':
        n += FILE_TOKENS;
        break;
    }
  }
  return n;
}

/** Text of assistant tool calls (function name + arguments). new-api ignores them; they are real prompt input. */
function toolCallText(toolCalls: unknown): string {
  if (!Array.isArray(toolCalls)) return '';
  let s = '';
  for (const c of toolCalls) {
    const fn = (c as { function?: { name?: unknown; arguments?: unknown } } | null)?.function;
    if (!fn) continue;
    if (typeof fn.name === 'string') s += fn.name;
    if (typeof fn.arguments === 'string') s += fn.arguments;
  }
  return s;
}

/**
 * Prompt tokens of the `tools` array: every tool's name + description + parameters, then +8.
 * new-api overwrites its buffer on each iteration and so counts only the LAST tool (bug, fixed here).
 * Parameters are serialised as JSON (new-api prints Go's %v of the map, which has no JS equivalent).
 */
export function countToolsTokens(tools: unknown[], model: string): number {
  return countTextTokens(toolsText(tools), model) + 8;
}

function toolsText(tools: unknown[]): string {
  let text = '';
  for (const t of tools) {
    const fn = (t as { function?: { name?: unknown; description?: unknown; parameters?: unknown } } | null)?.function;
    if (!fn) continue;
    if (typeof fn.name === 'string') text += fn.name;
    if (typeof fn.description === 'string') text += fn.description;
    if (fn.parameters !== undefined && fn.parameters !== null) text += JSON.stringify(fn.parameters);
  }
  return text;
}

/**
 * Prompt tokens of a chat request: per message +3 (gpt-3.5-turbo-0301: +4), the role, the content (text parts
 * encoded; images per countImageTokens; input_audio +100; file +5000), the name (+1; 0301: −1) and assistant
 * tool calls; then the tools (all of them) and +3 priming tokens.
 */
export function countChatPromptTokens(messages: ChatMessageLike[], model: string, tools?: unknown[]): number {
  const legacy = model === 'gpt-3.5-turbo-0301';
  const perMessage = legacy ? 4 : 3;
  const perName = legacy ? -1 : 1;
  let n = 0;
  for (const m of messages ?? []) {
    if (!m || typeof m !== 'object') continue;
    n += perMessage;
    if (typeof m.role === 'string') n += countTextTokens(m.role, model);
    if (typeof m.content === 'string') n += countTextTokens(m.content, model);
    else if (Array.isArray(m.content)) n += countContentParts(m.content, model);
    if (typeof m.name === 'string' && m.name) n += countTextTokens(m.name, model) + perName;
    const calls = toolCallText(m.tool_calls);
    if (calls) n += countTextTokens(calls, model);
  }
  if (Array.isArray(tools) && tools.length > 0) n += countToolsTokens(tools, model);
  return n + 3;
}

// Upper bounds of the counts above that need no tokenizer, for reservations (relay/pipeline/reserve.ts). Byte-level BPE (cl100k,
// o200k) never makes more tokens than its text has UTF-8 bytes, and a JSON body that is valid UTF-8 spells every
// string these counts read in at least as many bytes as the string's UTF-8 form: the body's size bounds the text, and
// the fixed overheads go on top. -1 means no bound holds: parts counted by rule rather than by text (images, audio,
// files) can be worth hundreds of tokens in a few bytes. The tools' parameters are counted re-serialised, which can
// be longer than the body spelled them (1e20 becomes 21 digits), so their text is measured as counted.

/** Bound of countChatPromptTokens for a body of `bodyBytes` valid UTF-8 bytes. */
export function chatPromptBound(messages: unknown, tools: unknown, bodyBytes: number): number {
  if (!Array.isArray(messages)) return -1;
  for (const m of messages) {
    const content = (m as ChatMessageLike | null)?.content;
    if (!Array.isArray(content)) continue;
    for (const part of content) if ((part as { type?: unknown } | null)?.type !== 'text') return -1;
  }
  // per message: +4 at most, and +1 for a name
  let bound = bodyBytes + 5 * messages.length + 3;
  if (Array.isArray(tools) && tools.length > 0) bound += Buffer.byteLength(toolsText(tools)) + 8;
  return bound;
}

/** Bound of countInputTokens (token arrays count one per number, which the body spells in two bytes or more). */
export function inputBound(input: unknown, bodyBytes: number): number {
  if (Array.isArray(input))
    for (const x of input) if ((x as { type?: unknown } | null)?.type === 'image_url') return -1;
  return bodyBytes;
}

/** Tokens of a completions prompt / embeddings or moderation input (arrays are concatenated). */
export function countInputTokens(input: unknown, model: string): number {
  if (typeof input === 'string') return countTextTokens(input, model);
  if (!Array.isArray(input)) return 0;
  // Pre-tokenised input: one token array, or an array of token arrays.
  if (input.length > 0 && input.every((x) => typeof x === 'number')) return input.length;
  let n = 0;
  for (const x of input) {
    if (typeof x === 'string') n += countTextTokens(x, model);
    else if (Array.isArray(x)) n += x.length;
    else if (x && typeof x === 'object' && (x as { type?: unknown }).type === 'text') {
      const text = (x as { text?: unknown }).text;
      if (typeof text === 'string') n += countTextTokens(text, model);
    } else if (x && typeof x === 'object' && (x as { type?: unknown }).type === 'image_url') {
      n += UNKNOWN_IMAGE_TOKENS;
    }
  }
  return n;
}

export interface ToolCallLike {
  function?: { name?: string; arguments?: string };
}

/**
 * Completion tokens of a locally assembled response: the text (content + reasoning) plus, per tool call, its
 * name and arguments and 7 more tokens. Pass a number instead of the calls when their text is already in `text`.
 */
export function countCompletionTokens(text: string, model: string, toolCalls?: ToolCallLike[] | number): number {
  let n = countTextTokens(text, model);
  if (typeof toolCalls === 'number') return n + Math.max(0, toolCalls) * TOOL_CALL_TOKENS;
  if (Array.isArray(toolCalls)) {
    const calls = toolCallText(toolCalls);
    if (calls) n += countTextTokens(calls, model);
    n += toolCalls.length * TOOL_CALL_TOKENS;
  }
  return n;
}

/** TTS requests are billed per input character (new-api-compat.md §4.8). */
export function countTtsInputTokens(input: string): number {
  return [...input].length;
}
