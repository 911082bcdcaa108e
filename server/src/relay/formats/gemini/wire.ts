// The Gemini generateContent wire shapes this codec reads and writes, and a field reader that accepts both JSON
// spellings: Google's REST front end parses request JSON with proto3 rules, so `system_instruction` and
// `systemInstruction` (and `inline_data`, `mime_type`, …) mean the same and clients send either.

export interface GeminiFunctionCall {
  id?: string;
  name: string;
  args?: Record<string, unknown>;
}

export interface GeminiFunctionResponse {
  id?: string;
  name: string;
  response?: Record<string, unknown>;
}

export interface GeminiPart {
  text?: string;
  thought?: boolean;
  thoughtSignature?: string;
  inlineData?: { mimeType: string; data: string };
  fileData?: { mimeType?: string; fileUri: string };
  functionCall?: GeminiFunctionCall;
  functionResponse?: GeminiFunctionResponse;
}

export interface GeminiContent {
  role?: string;
  parts: GeminiPart[];
}

const snakeNames = new Map<string, string>();

function snakeCase(name: string): string {
  let s = snakeNames.get(name);
  if (s === undefined) {
    s = name.replace(/[A-Z]/g, (c) => '_' + c.toLowerCase());
    snakeNames.set(name, s);
  }
  return s;
}

/** `o[name]`, or its snake_case alias; undefined when `o` is not an object. */
export function field<T = any>(o: unknown, name: string): T | undefined {
  if (!o || typeof o !== 'object') return undefined;
  const rec = o as Record<string, unknown>;
  if (rec[name] !== undefined) return rec[name] as T;
  return rec[snakeCase(name)] as T | undefined;
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Drops the keys whose value is undefined, so written bodies carry only what was set. */
export function compact<T extends Record<string, unknown>>(o: T): T {
  for (const k of Object.keys(o)) if (o[k] === undefined) delete o[k];
  return o;
}

/**
 * A hub image part that remembers the MIME type Gemini gave a fileData part. The hub's image_url has no such field
 * and a Files API URI has no extension to guess it from, so without it a Gemini → hub → Gemini trip would lose it.
 * Other codecs ignore the extra field (a contract question for hub/types.ts: an optional `mime_type` there).
 */
export interface HubImagePartWithMime {
  type: 'image_url';
  image_url: { url: string; detail?: 'auto' | 'low' | 'high'; mime_type?: string };
}

/**
 * An image a Gemini image model answered with (an `inlineData` part) as the text an OpenAI or Claude client is given:
 * a Markdown image with a data URL, as new-api writes it (docs/new-api-compat.md). Null for a part that is no image.
 */
export function imageMarkdown(part: GeminiPart): string | null {
  const inline = part.inlineData;
  if (!isPlainObject(inline) || typeof inline.data !== 'string' || !inline.data) return null;
  const mime = typeof inline.mimeType === 'string' && inline.mimeType ? inline.mimeType : 'image/png';
  if (!mime.startsWith('image/')) return null;
  return `![image](data:${mime};base64,${inline.data})`;
}
