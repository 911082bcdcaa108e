// `docker build` cannot run on these machines, so the Dockerfile is kept honest by reading it: its Node major is the
// LTS that CI's second pass tests (.ci/node-lts.sh) and the README names; its build steps are the README's, in the same
// order; it starts the server the way the README and `npm start` do (scripts/server-flags.mjs); and the compose set
// puts one master and two slaves behind the load balancer, each with a health check.
import { readFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import semver from 'semver';
import { beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const read = (name: string) => readFileSync(`${root}${name}`, 'utf8');

/** Dockerfile instructions with their continuation lines joined and comments dropped. */
function instructions(dockerfile: string): { op: string; args: string }[] {
  const joined = dockerfile
    .split('\n')
    .filter((l) => !/^\s*#/.test(l))
    .join('\n')
    .replace(/\\\n/g, ' ');
  return joined
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .map((l) => {
      const [, op, args] = /^(\w+)\s+(.*)$/.exec(l) ?? [];
      return { op: op.toUpperCase(), args: args.replace(/\s+/g, ' ') };
    });
}

/** `--no-audit` and `--no-fund` only quieten npm's output: the README leaves them out. */
const normaliseNpm = (cmd: string) =>
  cmd
    .replace(/\s--no-(audit|fund)\b/g, '')
    .replace(/\s+/g, ' ')
    .trim();

/** The README's "### <title>" subsection, up to the next heading. */
function readmeSection(readme: string, title: string): string {
  const start = readme.indexOf(`\n### ${title}\n`);
  expect(start, `README has "### ${title}"`).toBeGreaterThan(0);
  const rest = readme.slice(start + 1);
  const next = rest.slice(4).search(/\n##+ /);
  return next < 0 ? rest : rest.slice(0, next + 4);
}

/** The shell lines of a README subsection, by code block, with continuations joined and comments dropped. */
function readmeBlocks(readme: string, title: string): string[][] {
  return [...readmeSection(readme, title).matchAll(/```sh\n([\s\S]*?)```/g)].map((m) =>
    m[1]
      .replace(/\\\n\s*/g, '')
      .split('\n')
      .map((l) => l.replace(/\s+#.*$/, '').trim())
      .filter(Boolean),
  );
}

describe('Dockerfile, README and CI stay in step', () => {
  const dockerfile = instructions(read('Dockerfile'));
  const readme = read('README.md');
  let alwaysFlags: string[];
  let serverEnv: Record<string, string>;

  beforeAll(async () => {
    // scripts/ is plain JavaScript outside the server's TypeScript project: loaded by URL
    const flags = (await import(pathToFileURL(`${root}scripts/server-flags.mjs`).href)) as {
      SERVER_NODE_FLAGS: string[];
      FEW_CORES_NODE_FLAGS: string[];
      SERVER_ENV: Record<string, string>;
    };
    alwaysFlags = flags.SERVER_NODE_FLAGS.filter((f) => !flags.FEW_CORES_NODE_FLAGS.includes(f));
    serverEnv = flags.SERVER_ENV;
    expect(alwaysFlags.length).toBeGreaterThan(0);
  });

  it('uses the LTS Node of the CI second pass and of the README, which the engines range accepts', () => {
    const ciMajor = /^LTS_NODE_MAJOR=(\d+)$/m.exec(read('.ci/node-lts.sh'))?.[1];
    expect(ciMajor).toMatch(/^\d+$/);
    const froms = dockerfile.filter((i) => i.op === 'FROM').map((i) => i.args);
    expect(froms.length).toBeGreaterThanOrEqual(2); // multi-stage
    for (const from of froms) expect(from).toMatch(new RegExp(`^node:${ciMajor}-[a-z]+-slim\\b`));
    expect(readmeSection(readme, 'Node versions')).toContain(`Node ${ciMajor}`);
    expect(readmeSection(readme, 'Docker and compose')).toContain(`Node ${ciMajor}`);
    const engines = JSON.parse(read('package.json')).engines.node as string;
    expect(semver.satisfies(`${ciMajor}.0.0`, engines)).toBe(true);
    // .ci/run runs that pass after the main one
    expect(read('.ci/run')).toMatch(/\.ci\/node-lts\.sh/);
  });

  it('builds with the README steps, in the same order', () => {
    const buildStage = dockerfile.slice(
      0,
      dockerfile.findIndex((i, n) => n > 0 && i.op === 'FROM'),
    );
    const npmSteps = buildStage.filter((i) => i.op === 'RUN' && i.args.startsWith('npm ')).map((i) => i.args);
    const [readmeSteps] = readmeBlocks(readme, 'Docker and compose');
    expect(npmSteps.map(normaliseNpm)).toEqual(readmeSteps.filter((l) => l.startsWith('npm ')).map(normaliseNpm));
    expect(npmSteps.map(normaliseNpm)).toContain('npm run build');
    // `npm run build` builds the console and the server, which the runtime stage copies
    expect(JSON.parse(read('package.json')).scripts.build).toBe('npm run build -w web && npm run build -w server');
    const copies = dockerfile.filter((i) => i.op === 'COPY' && i.args.includes('--from=build')).map((i) => i.args);
    expect(copies.some((c) => /\/app\/server\/dist /.test(c))).toBe(true);
    expect(copies.some((c) => /\/app\/web\/dist /.test(c))).toBe(true);
  });

  it('starts the server with the flags and environment of `npm start`, as the README says', () => {
    const cmd = dockerfile.filter((i) => i.op === 'CMD').at(-1);
    expect(cmd).toBeDefined();
    const argv = JSON.parse(cmd!.args) as string[];
    expect(argv).toEqual(['node', ...alwaysFlags, 'server/dist/index.js']);
    // the entry file npm start runs
    expect(read('scripts/start.mjs')).toContain("'server/dist/index.js'");

    const env = dockerfile
      .filter((i) => i.op === 'ENV')
      .flatMap((i) => [...i.args.matchAll(/(\w+)=(\S+)/g)].map((m) => [m[1], m[2]]));
    for (const [name, value] of Object.entries(serverEnv)) expect(env).toContainEqual([name, value]);

    const envPrefix = Object.entries(serverEnv)
      .map(([k, v]) => `${k}=${v}`)
      .join(' ');
    const expected = `${envPrefix} ${argv.join(' ')}`;
    const [steps] = readmeBlocks(readme, 'Docker and compose');
    expect(steps.at(-1)).toBe(expected);
    // the same command where the README explains the flags
    expect(readmeBlocks(readme, 'Running the built server without `npm start`')[0]).toEqual([expected]);
  });

  it('is a small image run by an unprivileged user, with the data volume, the port and a health check', () => {
    const last = (op: string) => dockerfile.filter((i) => i.op === op).at(-1)?.args;
    expect(last('USER')).toBe('node');
    expect(last('EXPOSE')).toBe('3000');
    expect(last('VOLUME')).toBe('/data');
    expect(dockerfile.filter((i) => i.op === 'ENV').map((i) => i.args)).toContainEqual(
      expect.stringMatching(/\bSQLITE_PATH=\/data\/[\w.-]+\.db\b/),
    );
    expect(last('HEALTHCHECK')).toMatch(/CMD .*\/healthz/);
    // no compiler in the runtime stage: the apt-get install of the toolchain is in the build stage only
    const runtime = dockerfile.slice(dockerfile.findIndex((i, n) => n > 0 && i.op === 'FROM'));
    expect(runtime.filter((i) => i.op === 'RUN' && /apt-get install/.test(i.args))).toEqual([]);
    const ignore = read('.dockerignore');
    for (const entry of ['**/node_modules', '**/dist', 'data/', '.env', '.git'])
      expect(ignore.split('\n')).toContain(entry);
  });

  it('composes PostgreSQL, Redis, one master and two slaves behind the load balancer, each with a health check', () => {
    const compose = read('deploy/docker-compose.yml');
    const services = serviceBlocks(compose);
    expect(Object.keys(services).sort()).toEqual(['lb', 'master', 'postgres', 'redis', 'slave1', 'slave2']);
    expect(services.master).toMatch(/NODE_TYPE: master\b/);
    expect(services.slave1).toMatch(/NODE_TYPE: slave\b/);
    expect(services.slave2).toMatch(/NODE_TYPE: slave\b/);
    // the gateways share the anchor with the database, Redis and the readiness check
    const anchor = compose.slice(compose.indexOf('x-gateway: &gateway'), compose.indexOf('\nservices:'));
    expect(anchor).toMatch(/SQL_DSN: postgres:\/\/gateway:[^\n]+@postgres:5432\/gateway\n/);
    expect(anchor).toMatch(/REDIS_CONN_STRING: redis:\/\/redis:6379/);
    expect(anchor).toMatch(/SESSION_SECRET: \$\{SESSION_SECRET:\?/);
    expect(anchor).toMatch(/healthcheck:[\s\S]*\/readyz/);
    for (const name of ['master', 'slave1', 'slave2']) expect(services[name]).toMatch(/<<: \*gateway\b/);
    for (const name of ['postgres', 'redis', 'lb']) expect(services[name]).toMatch(/healthcheck:/);
    // the slaves run no migrations: they wait for a ready master
    expect(services.slave1).toMatch(/master:\s*\n\s*condition: service_healthy/);

    const caddy = read('deploy/Caddyfile');
    expect(caddy).toMatch(/reverse_proxy master:3000 slave1:3000 slave2:3000\b/);
    expect(caddy).toMatch(/health_uri \/readyz/);
    expect(caddy).toMatch(/flush_interval -1/);
    expect(services.lb).toContain('./Caddyfile:/etc/caddy/Caddyfile:ro');
  });
});

/** Top-level services of a compose file by name, each as its indented text (no YAML parser in the server's packages). */
function serviceBlocks(compose: string): Record<string, string> {
  const section = compose.slice(compose.indexOf('\nservices:\n') + 11);
  const end = section.search(/\n\S/);
  const body = end < 0 ? section : section.slice(0, end);
  const out: Record<string, string> = {};
  for (const m of body.matchAll(/^ {2}([\w-]+):\n((?: {4}.*\n|\s*\n)*)/gm)) out[m[1]] = m[2];
  return out;
}
