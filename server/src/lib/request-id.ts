import { randomFillSync } from 'node:crypto';

const ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
const pad = (n: number, w = 2) => String(n).padStart(w, '0');
const pool = Buffer.alloc(4096);
let poolPos = pool.length;
// the yyyyMMddHHmmss prefix changes once a second: format it once per second, not per request
let prefixSecond = -1;
let prefix = '';

function timestamp(now: Date): string {
  return (
    `${now.getFullYear()}${pad(now.getMonth() + 1)}${pad(now.getDate())}` +
    `${pad(now.getHours())}${pad(now.getMinutes())}${pad(now.getSeconds())}`
  );
}

/** new-api's request id: yyyyMMddHHmmss + sub-second remainder + 8 random chars (new-api-compat.md §1.2). */
export function newRequestId(now?: Date): string {
  let ts: string;
  if (now) ts = timestamp(now);
  else {
    const ms = Date.now();
    const second = Math.floor(ms / 1000);
    if (second !== prefixSecond) {
      prefix = timestamp(new Date(ms));
      prefixSecond = second;
    }
    ts = prefix;
  }
  // nanoseconds of the monotonic clock within its second (same value as hrtime.bigint() % 1e9, without a BigInt)
  const frac = pad(process.hrtime()[1], 9);
  // one crypto fill per 512 ids instead of one per request (this ran on every relay request)
  if (poolPos + 8 > pool.length) {
    randomFillSync(pool);
    poolPos = 0;
  }
  let rand = '';
  for (let i = 0; i < 8; i++) rand += ALPHABET[pool[poolPos++] % ALPHABET.length];
  return ts + frac + rand;
}
