// TASK_TIMEOUT_MINUTES: new-api's default of a day, 0 to never time a task out, bad values refused.
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';

describe('TASK_TIMEOUT_MINUTES', () => {
  it('defaults to 1440, accepts 0 and refuses a non-integer or a negative value', () => {
    expect(loadConfig({}).taskTimeoutMinutes).toBe(1440);
    expect(loadConfig({ TASK_TIMEOUT_MINUTES: '30' }).taskTimeoutMinutes).toBe(30);
    expect(loadConfig({ TASK_TIMEOUT_MINUTES: '0' }).taskTimeoutMinutes).toBe(0);
    expect(() => loadConfig({ TASK_TIMEOUT_MINUTES: 'soon' })).toThrow(/TASK_TIMEOUT_MINUTES/);
    expect(() => loadConfig({ TASK_TIMEOUT_MINUTES: '-1' })).toThrow(/TASK_TIMEOUT_MINUTES/);
  });
});
