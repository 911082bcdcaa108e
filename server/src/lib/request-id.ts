import { randomFillSync } from 'node:crypto';

const ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
const pad = (n: number, w = 2) => String(n).padStart(w, '0');
const pool = Buffer.alloc(4096);
let poolPos = pool.length;

/** new-api's request id: yyyyMMddHHmmss + sub-second remainder + 8 random chars (facts §1.2). */
export function newRequestId(now = new Date()): string {
  const ts =
    `${now.getFullYear()}${pad(now.getMonth() + 1)}${pad(now.getDate())}` +
    `${pad(now.getHours())}${pad(now.getMinutes())}${pad(now.getSeconds())}`;
  const frac = pad(Number(process.hrtime.bigint() % 1_000_000_000n), 9);
  // one crypto fill per 512 ids instead of one per request (this ran on every relay request)
  if (poolPos + 8 > pool.length) {
    randomFillSync(pool);
    poolPos = 0;
  }
  let rand = '';
  for (let i = 0; i < 8; i++) rand += ALPHABET[pool[poolPos++] % ALPHABET.length];
  return ts + frac + rand;
}
