// The gateway as a real process (`src/index.ts` under tsx) over a test database: for what only a process shows,
// its signals (SIGTERM's clean stop, SIGKILL's crash recovery).
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import type { Kysely } from 'kysely';
import type { Database } from '../../src/db/schema.js';
import type { TestDatabase } from './databases.js';
import { chatCompletion, type MockUpstream } from './mock-upstream.js';

export interface GatewayProcess {
  child: ChildProcess;
  url: string;
  /** everything written to stdout so far (pino's JSON lines) */
  output(): string;
}

export async function spawnGateway(database: TestDatabase, env: Record<string, string> = {}): Promise<GatewayProcess> {
  // the V8 flags and malloc settings of `npm start`: what a process shows (its memory above all) is production's. On
  // Node 26 the default young generation is larger, and a wave of 60-MB bodies raised RSS by 42-64 MB without the
  // flags (16-33 MB with them; pre-auth-memory.test.ts allows 50).
  const { SERVER_NODE_FLAGS, SERVER_ENV } = (await import(
    new URL('../../../scripts/server-flags.mjs', import.meta.url).href
  )) as { SERVER_NODE_FLAGS: string[]; SERVER_ENV: Record<string, string> };
  const child = spawn(process.execPath, [...SERVER_NODE_FLAGS, '--import', 'tsx', 'src/index.ts'], {
    cwd: fileURLToPath(new URL('../..', import.meta.url)),
    env: {
      ...SERVER_ENV,
      ...process.env,
      SQL_DSN: database.dsn,
      SQLITE_PATH: database.sqlitePath || './data/unused.db',
      PORT: '0',
      SESSION_SECRET: 'process-test-secret-0123456789',
      LOG_LEVEL: 'info',
      WEB_DIST_DIR: '/nonexistent-web-dist',
      GLOBAL_API_RATE_LIMIT_ENABLE: 'false',
      REDIS_CONN_STRING: '',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => {
    out += d.toString();
  });
  const port = await new Promise<number>((resolve, reject) => {
    const onData = () => {
      const m = /"address":"[^"]*:(\d+)"/.exec(out);
      if (m) {
        child.stdout!.off('data', onData);
        resolve(Number(m[1]));
      }
    };
    child.stdout!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`gateway exited (${code}) before listening: ${out}`)));
  });
  return { child, url: `http://127.0.0.1:${port}`, output: () => out };
}

/**
 * The state the crash tests kill a gateway in: one chat request answered (settled and logged), then `streams`
 * streaming requests each past its first chunk (their reservations committed) with the upstream hanging after it.
 * Sets the upstream's behaviour; the returned readers are the open streams (cancel them after the kill).
 */
export async function answerOneAndHoldStreams(
  gw: GatewayProcess,
  upstream: MockUpstream,
  key: string,
  streams: number,
): Promise<ReadableStreamDefaultReader<Uint8Array>[]> {
  upstream.behave = (req) =>
    req.body?.stream
      ? { kind: 'stream', spec: { pieces: ['partial', ' answer'], hangAfter: 1 } }
      : { kind: 'json', body: chatCompletion(req.body?.model, 'done') };
  const post = (stream: boolean) =>
    fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer sk-${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', stream, messages: [{ role: 'user', content: 'hello there' }] }),
    });
  const done = await post(false);
  if (done.status !== 200) throw new Error(`the answered request got ${done.status}: ${await done.text()}`);
  await done.json();
  const opened = await Promise.all(Array.from({ length: streams }, () => post(true)));
  const readers = opened.map((r) => r.body!.getReader());
  for (const r of readers) {
    const first = new TextDecoder().decode((await r.read()).value);
    if (!first.includes('partial')) throw new Error(`a stream began with ${first}`);
  }
  return readers;
}

/** The quota of a user's consume log rows (type 2), summed. */
export async function consumedQuota(db: Kysely<Database>, userId: number): Promise<number> {
  const row = await db
    .selectFrom('logs')
    .select((eb) => eb.fn.sum<number>('quota').as('q'))
    .where('user_id', '=', userId)
    .where('type', '=', 2)
    .executeTakeFirst();
  return Number(row?.q ?? 0);
}

/** Kills the process with SIGKILL, waits for its exit, and lets go of the streams it left open. */
export async function killGateway(
  child: ChildProcess,
  readers: readonly ReadableStreamDefaultReader<Uint8Array>[] = [],
): Promise<void> {
  child.kill('SIGKILL');
  await once(child, 'exit');
  for (const r of readers) await r.cancel().catch(() => undefined);
}
