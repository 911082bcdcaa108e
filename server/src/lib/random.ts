import { randomBytes, randomInt } from 'node:crypto';

const ALNUM = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';

/** Random string from [0-9a-zA-Z] using crypto randomness (new-api's GenerateKey alphabet). */
export function randomAlnum(length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += ALNUM[randomInt(ALNUM.length)];
  return out;
}

/** 48-char API token key, stored without the `sk-` prefix (new-api-compat.md §2.2). */
export const generateTokenKey = (): string => randomAlnum(48);

/** 32 hex chars: a UUID without dashes (redemption keys, reset tokens). */
export const randomHex32 = (): string => randomBytes(16).toString('hex');
