// The gateway as a real process (`src/index.ts` under tsx) over a test database: for what only a process shows,
// its signals (SIGTERM's clean stop, SIGKILL's crash recovery).
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { TestDatabase } from './databases.js';

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
