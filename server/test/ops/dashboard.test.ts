// deploy/grafana/gateway-dashboard.json queries only metrics that GET /metrics exposes: a renamed metric breaks this
// test instead of leaving an empty panel.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDb } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const DASHBOARD = new URL('../../../deploy/grafana/gateway-dashboard.json', import.meta.url);

/** every metric name the dashboard's queries and variables name */
function dashboardMetricNames(): string[] {
  const dash = JSON.parse(readFileSync(DASHBOARD, 'utf8'));
  const queries: string[] = [];
  for (const p of dash.panels) for (const t of p.targets ?? []) queries.push(t.expr);
  for (const v of dash.templating?.list ?? []) if (v.type === 'query') queries.push(String(v.query));
  const names = new Set<string>();
  for (const q of queries) for (const m of q.matchAll(/\b((?:gateway|process|nodejs)_[a-z0-9_]+)/g)) names.add(m[1]);
  return [...names].sort();
}

/** every series name the exposition can hold: each metric's name, and a histogram's _bucket, _sum and _count */
function exposedNames(text: string): Set<string> {
  const out = new Set<string>();
  for (const m of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    out.add(m[1]);
    if (m[2] === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) out.add(m[1] + suffix);
  }
  return out;
}

await describeEachDb(
  'Grafana dashboard',
  (kind) => {
    let s: TestServer;
    beforeAll(async () => {
      s = await startTestServer({ kind });
    });
    afterAll(async () => {
      await s?.close();
    });

    it('queries only metric names that /metrics exposes', async () => {
      const text = await (await fetch(`${s.url}/metrics`)).text();
      const exposed = exposedNames(text);
      const wanted = dashboardMetricNames();
      expect(wanted.length).toBeGreaterThan(15);
      expect(wanted.filter((n) => !exposed.has(n))).toEqual([]);
    });
  },
  ['postgres', 'mysql'],
);
