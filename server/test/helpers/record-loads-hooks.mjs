// The module hooks of record-loads.mjs: every ES module resolved inside node_modules or the providers' folders,
// appended to the record.
import { appendFileSync } from 'node:fs';

let out = '';

export function initialize(data) {
  out = data.out;
}

export async function resolve(specifier, context, nextResolve) {
  const resolved = await nextResolve(specifier, context);
  if (out && /\/node_modules\/|\/relay\/providers\/[^/]+\//.test(resolved.url))
    appendFileSync(out, `${resolved.url}\n`);
  return resolved;
}
