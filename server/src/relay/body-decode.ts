// gzip / br / deflate request bodies of the relay, decoded for an authenticated caller only (admit.ts runs first).
// The decoded body is bounded like a plain one: zlib stops inflating as soon as the output passes the limit, and the
// request is answered 413.
import zlib from 'node:zlib';
import { RelayError } from './errors.js';

export function decodeBody(
  encoding: string | undefined,
  raw: Buffer,
  limit: number,
  done: (err: RelayError | null, body?: Buffer) => void,
): void {
  if (!encoding || encoding === 'identity') return done(null, raw);
  const opts = { maxOutputLength: limit };
  const cb = (err: Error | null, out: Buffer) => {
    if (!err) return done(null, out);
    if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE')
      done(new RelayError(413, 'Request body is too large'));
    else done(new RelayError(400, `invalid ${encoding} request body`));
  };
  if (encoding === 'gzip' || encoding === 'x-gzip') zlib.gunzip(raw, opts, cb);
  else if (encoding === 'br') zlib.brotliDecompress(raw, opts, cb);
  else if (encoding === 'deflate') zlib.inflate(raw, opts, cb);
  else done(null, raw);
}
