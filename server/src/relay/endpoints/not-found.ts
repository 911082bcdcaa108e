// Unknown paths of the relay's prefixes answer a JSON 404 in the caller's format, never the console's HTML:
// Gemini's error under /v1beta, Anthropic's under /v1/messages, OpenAI's (new-api's "Invalid URL") elsewhere.
import type { IncomingMessage } from 'node:http';
import type { HttpResponse } from '../../lib/http-response.js';
import type { WireFormat } from '../formats/codec.js';
import { RelayError, sendRelayError } from '../errors.js';

/** The path prefixes whose unknown paths are the relay's (and the console API's) 404s, not console pages. */
export const API_PREFIXES = ['/api', '/v1', '/v1beta', '/assets', '/mj', '/suno', '/kling', '/jimeng'];

export function isApiPath(path: string): boolean {
  return API_PREFIXES.some((p) => path === p || path.startsWith(p + '/'));
}

/** The wire format a caller of this path speaks. */
export function formatOfPath(path: string): WireFormat {
  if (path === '/v1beta' || path.startsWith('/v1beta/')) return 'gemini';
  if (path.startsWith('/v1/messages')) return 'anthropic';
  return 'openai';
}

export function notFound(
  res: HttpResponse,
  req: Pick<IncomingMessage, 'method' | 'url'> & { id: string; headers: IncomingMessage['headers'] },
  format?: WireFormat,
): void {
  const path = (req.url ?? '/').split('?')[0];
  const err = new RelayError(404, `Invalid URL (${req.method} ${path})`, 'invalid_request_error', '');
  sendRelayError(res, err, req.id, req.headers, format ?? formatOfPath(path));
}
