// Loaded into the e2e server only (run.mjs: `node --import`), never into a real deployment: lets the gateway's
// guarded client for user-chosen URLs (server/src/lib/safe-fetch.ts) reach the few 127.0.0.1 ports a spec lists in
// the file E2E_LOOPBACK_ALLOW_FILE names, one port a line. The server's own tests do the same in process through
// SafeFetch's `policy`; the e2e server is another process, so the spec's mock image host (midjourney.e2e.ts) is named
// here instead. Every other address still goes through the real checks, so the other specs see the guard unchanged.
import { existsSync, readFileSync } from 'node:fs';
import { SafeFetch } from '../../server/dist/lib/safe-fetch.js';

const allowFile = process.env.E2E_LOOPBACK_ALLOW_FILE ?? '';

function allowedPorts() {
  if (!allowFile || !existsSync(allowFile)) return new Set();
  return new Set(
    readFileSync(allowFile, 'utf8')
      .split('\n')
      .map((l) => Number(l.trim()))
      .filter((n) => Number.isInteger(n) && n > 0),
  );
}

const checked = SafeFetch.prototype.addressesOf;
SafeFetch.prototype.addressesOf = async function addressesOf(hostname, port) {
  if (hostname === '127.0.0.1' && allowedPorts().has(Number(port))) return ['127.0.0.1'];
  return checked.call(this, hostname, port);
};
