// What a started gateway loads: the libraries an ordinary relayed OpenAI request never uses (passkeys, TOTP,
// Bedrock's event-stream codec, Vertex's auth library, mail, OpenTelemetry's SDK, undici with the lean client on,
// prom-client before the first scrape)
// are imported on first use, not at start (docs/perf/startup-loads.md). A real process (helpers/process.ts) with a
// preload that records every node_modules file it loads (helpers/record-loads.mjs), started, sent one JSON and one
// stream request, then stopped with SIGTERM.
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { createTestDatabase, describeEachDb } from './helpers/databases.js';
import { MockUpstream } from './helpers/mock-upstream.js';
import { spawnGateway } from './helpers/process.js';
import { startTestServer } from './helpers/server.js';
import { addChannel, addToken, addUser } from './relay/fixtures.js';

/** packages a gateway must not load before they are needed */
const LAZY = [
  '@simplewebauthn/server',
  '@peculiar/x509',
  '@peculiar/asn1-schema',
  'tsyringe',
  'reflect-metadata',
  'asn1js',
  'otplib',
  '@otplib/core',
  '@noble/hashes',
  '@scure/base',
  '@smithy/eventstream-codec',
  '@smithy/util-utf8',
  '@smithy/core',
  '@smithy/signature-v4',
  '@aws-crypto/sha256-js',
  'google-auth-library',
  'nodemailer',
  '@opentelemetry/sdk-trace-base',
  '@opentelemetry/exporter-trace-otlp-http',
  'undici',
  'zod',
  'ws',
  'stripe',
  'prom-client',
  '@opentelemetry/api',
  '@volcengine/openapi',
  'crypto-js',
];

/** The provider folders whose manifest (relay/providers/<id>/index) is in the record: their channel facts, which
 * channel management reads, are loaded at start and are not the provider. */
function providerFoldersIn(record: string): Set<string> {
  const names = new Set<string>();
  for (const line of record.split('\n')) {
    const m = /\/relay\/providers\/([^/]+)\/(.+)$/.exec(line);
    if (m && /^index\.[jt]s$/.test(m[2])) names.add(m[1]);
  }
  return names;
}

/** The task engine's modules a request of a task platform loads (not its routes' registration) that are in the record. */
function taskModulesIn(record: string): string[] {
  return record
    .split('\n')
    .filter((line) =>
      /\/relay\/tasks\/(suno-handlers|mj-handlers|video-handlers|video-generations|video-content|video-object|submit|mj-submit|poll|mj-poll)\.[jt]s$/.test(
        line,
      ),
    );
}

/** The packages named in the record: `node_modules/<name>` or `node_modules/@scope/<name>`, the last one in a path. */
function packagesIn(record: string): Set<string> {
  const names = new Set<string>();
  for (const line of record.split('\n')) {
    const m = /.*node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(line);
    if (m) names.add(m[1]);
  }
  return names;
}

await describeEachDb(
  'a started gateway',
  (kind) => {
    it('has not loaded the libraries a relayed OpenAI request does not use', async () => {
      const upstream = await MockUpstream.start();
      const database = await createTestDatabase(kind);
      const dir = mkdtempSync(join(tmpdir(), 'gwt-loads-'));
      const record = join(dir, 'loads.txt');
      let gw: Awaited<ReturnType<typeof spawnGateway>> | undefined;
      try {
        const seed = await startTestServer({ database });
        const u = await addUser(seed, { quota: 1_000_000 });
        const t = await addToken(seed, u.id, { unlimited: true });
        await addChannel(seed, { baseUrl: upstream.url, models: ['gpt-4o-mini'] });
        await seed.close();

        const preload = fileURLToPath(new URL('./helpers/record-loads.mjs', import.meta.url));
        gw = await spawnGateway(database, {
          NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import ${preload}`.trim(),
          RECORD_LOADS_FILE: record,
          OTEL_EXPORTER_OTLP_ENDPOINT: '',
          OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '',
        });
        for (const stream of [false, true]) {
          const res = await fetch(`${gw.url}/v1/chat/completions`, {
            method: 'POST',
            headers: { authorization: `Bearer sk-${t.key}`, 'content-type': 'application/json' },
            body: JSON.stringify({ model: 'gpt-4o-mini', stream, messages: [{ role: 'user', content: 'hi' }] }),
          });
          expect(res.status).toBe(200);
          await res.text();
        }
        gw.child.kill('SIGTERM');
        await once(gw.child, 'exit');

        const loaded = packagesIn(readFileSync(record, 'utf8'));
        // the record sees both kinds of module: fastify is CommonJS, kysely an ES module
        expect(loaded).toContain('fastify');
        expect(loaded).toContain('kysely');
        expect(LAZY.filter((name) => loaded.has(name))).toEqual([]);
        // a vendor's folder is loaded by its first request (relay/providers/index.ts): an OpenAI channel loads
        // OpenAI's only; the task platforms' routes are registered at start, their handlers and polls load on first
        // use (relay/tasks/routes.ts, mj-routes.ts, video-routes.ts)
        expect([...providerFoldersIn(readFileSync(record, 'utf8'))].sort()).toEqual(['openai']);
        expect(taskModulesIn(readFileSync(record, 'utf8'))).toEqual([]);
      } finally {
        if (gw && gw.child.exitCode === null && gw.child.signalCode === null) gw.child.kill('SIGKILL');
        rmSync(dir, { recursive: true, force: true });
        await database.drop();
        await upstream.close();
      }
    }, 60_000);
  },
  ['postgres', 'mysql'],
);
