// The EPay signature written out independently of the code under test (md5 of the sorted non-empty parameters but
// sign and sign_type, the merchant key appended), for the suites that play the gateway's notify.
import { createHash } from 'node:crypto';

export function referenceSign(params: Record<string, string>, key: string): string {
  const keys = Object.keys(params)
    .filter((k) => k !== 'sign' && k !== 'sign_type' && params[k] !== '')
    .sort();
  const text = keys.map((k) => `${k}=${params[k]}`).join('&') + key;
  return createHash('md5').update(text).digest('hex');
}
