// Compression of the console API's JSON answers (/api/*). Lists of channels, logs or options run to tens of kB and
// shrink to a fifth; small answers are left alone, where compressing costs more time than it saves bytes.
// Only JSON bodies already in memory are compressed: the relay (/v1, /pg, …) answers on the raw socket (hijacked, so
// no onSend hook runs) and streams (SSE) are never buffered here, which keeps streaming chunks flowing unchanged.
import { promisify } from 'node:util';
import { brotliCompress, constants as zlibConstants, gzip } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** Answers smaller than this go out as they are. */
export const COMPRESS_MIN_BYTES = 1024;

export type ContentEncoding = 'br' | 'gzip';

const brotliAsync = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

/**
 * The encoding to answer with among `offered` (in the server's order of preference), per the request's
 * Accept-Encoding: q=0 refuses an encoding, `*` stands for any encoding not named, ties go to the server's order.
 */
export function negotiateEncoding<E extends string>(header: string | undefined, offered: readonly E[]): E | undefined {
  if (!header) return undefined;
  const q = new Map<string, number>();
  for (const part of header.toLowerCase().split(',')) {
    const [name, ...params] = part.trim().split(';');
    if (!name) continue;
    let weight = 1;
    for (const p of params) {
      const m = /^\s*q\s*=\s*([0-9.]+)\s*$/.exec(p);
      if (m) weight = Number(m[1]);
    }
    q.set(name.trim(), Number.isFinite(weight) ? weight : 0);
  }
  let best: E | undefined;
  let bestQ = 0;
  for (const enc of offered) {
    const weight = q.get(enc) ?? q.get('*') ?? 0;
    if (weight > bestQ) {
      best = enc;
      bestQ = weight;
    }
  }
  return best;
}

function appendVary(reply: FastifyReply, field: string): void {
  const current = reply.getHeader('vary');
  const value = Array.isArray(current) ? current.join(', ') : current === undefined ? '' : String(current);
  const fields = value.split(',').map((s) => s.trim().toLowerCase());
  if (fields.includes(field.toLowerCase()) || fields.includes('*')) return;
  reply.header('vary', value ? `${value}, ${field}` : field);
}

function isConsoleApi(req: FastifyRequest): boolean {
  return req.url === '/api' || req.url.startsWith('/api/') || req.url.startsWith('/api?');
}

async function compressJson(req: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> {
  if (!isConsoleApi(req) || req.method === 'HEAD') return payload;
  if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) return payload; // streams, files, empty answers
  const type = String(reply.getHeader('content-type') ?? '');
  if (!type.startsWith('application/json') || reply.hasHeader('content-encoding')) return payload;
  const size = typeof payload === 'string' ? Buffer.byteLength(payload) : payload.length;
  if (size < COMPRESS_MIN_BYTES) return payload;
  // from here the answer depends on Accept-Encoding, whether or not this caller asked for compression
  appendVary(reply, 'Accept-Encoding');
  const encoding = negotiateEncoding(req.headers['accept-encoding'], ['br', 'gzip'] as const);
  if (!encoding) return payload;
  const input = typeof payload === 'string' ? Buffer.from(payload) : payload;
  const output =
    encoding === 'br'
      ? // a low quality: answers are made per request, and level 4 already beats gzip's size at a fraction of 11's time
        await brotliAsync(input, {
          params: {
            [zlibConstants.BROTLI_PARAM_QUALITY]: 4,
            [zlibConstants.BROTLI_PARAM_MODE]: zlibConstants.BROTLI_MODE_TEXT,
            [zlibConstants.BROTLI_PARAM_SIZE_HINT]: input.length,
          },
        })
      : await gzipAsync(input);
  reply.header('content-encoding', encoding);
  reply.removeHeader('content-length');
  return output;
}

/** Registers the hook on the app: every /api answer passes through it after serialisation. */
export function registerJsonCompression(app: FastifyInstance): void {
  app.addHook('onSend', compressJson);
}
