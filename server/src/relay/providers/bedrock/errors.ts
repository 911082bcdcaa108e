// Bedrock's error answers: a JSON body `{"message": "..."}` (some services capitalise it `Message`) and the
// exception name in the `x-amzn-errortype` header, which may carry a `:<namespace URL>` suffix.
import type { ProviderError } from '../types.js';

export interface BedrockError {
  message: string;
  type: string;
  code: string | null;
}

type HeaderBag = Record<string, string | string[] | undefined> | Headers;

function header(headers: HeaderBag, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const bag = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(bag).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : bag[key];
  return Array.isArray(value) ? value[0] : value;
}

/** The exception name from an `x-amzn-errortype` value: `ValidationException:http://…` → `ValidationException`. */
export function exceptionName(errorType: string | undefined): string | undefined {
  const name = errorType?.split(':', 1)[0].trim();
  return name || undefined;
}

export function parseBedrockError(status: number, headers: HeaderBag, body: Buffer | string): BedrockError {
  const text = Buffer.isBuffer(body) ? body.toString('utf8') : body;
  let json: any = null;
  try {
    json = JSON.parse(text);
  } catch {
    // not JSON (a proxy's HTML page): fall back to the text itself
  }
  const fromBody = json && typeof json === 'object' ? (json.message ?? json.Message) : undefined;
  const message =
    typeof fromBody === 'string' && fromBody
      ? fromBody
      : text.trim().slice(0, 500) || `Bedrock answered HTTP ${status} with an empty body`;
  // without the header, the body's `__type` (older AWS JSON protocol) still names the exception
  const type =
    exceptionName(header(headers, 'x-amzn-errortype')) ??
    exceptionName(typeof json?.__type === 'string' ? json.__type.split('#').pop() : undefined) ??
    'bedrock_error';
  return { message, type, code: type === 'bedrock_error' ? String(status) : type };
}

/** The same, in the adaptor contract's shape. */
export function parseBedrockProviderError(status: number, headers: HeaderBag, body: Buffer | string): ProviderError {
  return { ...parseBedrockError(status, headers, body), param: null };
}
