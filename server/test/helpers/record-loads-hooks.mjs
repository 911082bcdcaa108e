// The module hooks of record-loads.mjs: every ES module resolved inside node_modules, appended to the record.
import { appendFileSync } from 'node:fs';

let out = '';

export function initialize(data) {
  out = data.out;
}

export async function resolve(specifier, context, nextResolve) {
  const resolved = await nextResolve(specifier, context);
  if (out && resolved.url.includes('/node_modules/')) appendFileSync(out, `${resolved.url}\n`);
  return resolved;
}
