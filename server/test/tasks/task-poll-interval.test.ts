// TASK_POLL_INTERVAL: the seconds between two task poller ticks, new-api's fixed 15 by default; the e2e run sets 1 so
// a spec sees a task move at once. Bad values are refused at start, as every other integer setting.
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import type { AppContext } from '../../src/context.js';
import { addTaskPollStep } from '../../src/services/tasks/poller.js';
import { startTestServer } from '../helpers/server.js';

describe('TASK_POLL_INTERVAL', () => {
  it('defaults to 15 s, accepts a positive integer and refuses 0, a negative or a non-integer value', () => {
    expect(loadConfig({}).taskPollIntervalSec).toBe(15);
    expect(loadConfig({ TASK_POLL_INTERVAL: '1' }).taskPollIntervalSec).toBe(1);
    expect(() => loadConfig({ TASK_POLL_INTERVAL: '0' })).toThrow(/TASK_POLL_INTERVAL/);
    expect(() => loadConfig({ TASK_POLL_INTERVAL: '-5' })).toThrow(/TASK_POLL_INTERVAL/);
    expect(() => loadConfig({ TASK_POLL_INTERVAL: '0.5' })).toThrow(/TASK_POLL_INTERVAL/);
  });

  it('the started poller ticks at that interval: two ticks well before 15 s', async () => {
    const s = await startTestServer({ env: { TASK_POLL_INTERVAL: '1' } });
    try {
      const started = Date.now();
      const ticks: number[] = [];
      const twoTicks = new Promise<void>((resolve) => {
        addTaskPollStep(async (ctx: AppContext) => {
          if (ctx !== s.ctx) return;
          ticks.push(Date.now() - started);
          if (ticks.length === 2) resolve();
        });
      });
      await twoTicks;
      expect(ticks[1]!).toBeLessThan(10_000);
    } finally {
      await s.close();
    }
  });
});
