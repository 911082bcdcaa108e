import { describe, expect, it } from 'vitest';
import {
  buildLogQuery,
  firstTokenColor,
  firstTokenSeconds,
  parseOther,
  retryPath,
  toSeconds,
  elapsedColor,
} from './logic.js';

describe('log colours', () => {
  it('grades use time: <101 green, <300 orange, else red', () => {
    expect(elapsedColor(0)).toBe('green');
    expect(elapsedColor(100)).toBe('green');
    expect(elapsedColor(101)).toBe('orange');
    expect(elapsedColor(299)).toBe('orange');
    expect(elapsedColor(300)).toBe('red');
  });
  it('grades first-token time: <3 green, <10 orange, else red', () => {
    expect(firstTokenColor(2.9)).toBe('green');
    expect(firstTokenColor(3)).toBe('orange');
    expect(firstTokenColor(9.99)).toBe('orange');
    expect(firstTokenColor(10)).toBe('red');
  });
});

describe('other JSON', () => {
  it('reads frt in ms, treating -1000 as no first byte', () => {
    expect(firstTokenSeconds(parseOther('{"frt":1500}'))).toBe(1.5);
    expect(firstTokenSeconds(parseOther('{"frt":-1000}'))).toBeNull();
    expect(firstTokenSeconds(parseOther(''))).toBeNull();
    expect(parseOther('{bad')).toEqual({});
  });
  it('shows the retry path from admin_info.use_channel', () => {
    expect(retryPath(parseOther('{"admin_info":{"use_channel":[3,5]}}'))).toBe('3 → 5');
    expect(retryPath(parseOther('{}'))).toBeNull();
  });
});

describe('buildLogQuery', () => {
  const f = {
    type: 2,
    username: ' root ',
    token_name: '',
    model_name: 'gpt-4o-mini',
    start: '2030-01-02 03:04:05',
    end: '',
    channel: '7',
    group: '',
  };
  it('converts times to seconds and drops empty filters', () => {
    expect(buildLogQuery(f, true)).toEqual({
      type: 2,
      token_name: undefined,
      model_name: 'gpt-4o-mini',
      start_timestamp: Math.floor(new Date(2030, 0, 2, 3, 4, 5).getTime() / 1000),
      end_timestamp: undefined,
      group: undefined,
      username: 'root',
      channel: '7',
    });
  });
  it('never sends admin-only filters for normal users; type 0 means all', () => {
    const q = buildLogQuery({ ...f, type: 0 }, false);
    expect(q).not.toHaveProperty('username');
    expect(q).not.toHaveProperty('channel');
    expect(q.type).toBeUndefined();
    expect(toSeconds('garbage')).toBeUndefined();
  });
});
