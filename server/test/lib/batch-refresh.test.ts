// BatchRefresh on its own: stale entries re-read together, and an entry changed while its re-read was in flight kept.
import { expect, it } from 'vitest';
import { BatchRefresh, type RefreshableEntry } from '../../src/services/cache/batch-refresh.js';

interface Entry extends RefreshableEntry {
  value: string;
}

function setup() {
  const entries = new Map<string, Entry>();
  const reads: string[][] = [];
  let answer: (found: Map<string, string>) => void = () => {};
  let fail: () => void = () => {};
  const refresh = new BatchRefresh<string, string>(
    entries,
    (keys) => {
      reads.push(keys);
      return new Promise((resolve, reject) => {
        answer = resolve;
        fail = () => reject(new Error('down'));
      });
    },
    (key, value) => entries.set(key, { value: value ?? 'gone' }),
  );
  return { entries, reads, refresh, answer: (m: Map<string, string>) => answer(m), fail: () => fail() };
}

const tick = (ms = 30) => new Promise((r) => setTimeout(r, ms));

it('reads the stale entries of a burst in one call, once each, and stores what it found (gone: null)', async () => {
  const t = setup();
  for (const k of ['a', 'b', 'c']) t.entries.set(k, { value: 'old' });
  for (const k of ['a', 'b', 'c', 'a']) t.refresh.stale(k, t.entries.get(k)!);
  await tick();
  expect(t.reads).toEqual([['a', 'b', 'c']]);
  t.answer(
    new Map([
      ['a', 'new-a'],
      ['b', 'new-b'],
    ]),
  );
  await tick(0);
  expect([...t.entries].map(([k, e]) => [k, e.value, !!e.refreshing])).toEqual([
    ['a', 'new-a', false],
    ['b', 'new-b', false],
    ['c', 'gone', false],
  ]);
});

it('leaves an entry that was replaced or dropped while its re-read was in flight', async () => {
  const t = setup();
  t.entries.set('kept', { value: 'old' });
  t.entries.set('replaced', { value: 'old' });
  t.entries.set('dropped', { value: 'old' });
  for (const k of ['kept', 'replaced', 'dropped']) t.refresh.stale(k, t.entries.get(k)!);
  await tick();
  // a published change lands before the query's answer
  t.entries.set('replaced', { value: 'changed' });
  t.entries.delete('dropped');
  t.answer(
    new Map([
      ['kept', 'read'],
      ['replaced', 'read before the change'],
      ['dropped', 'read before the change'],
    ]),
  );
  await tick(0);
  expect(t.entries.get('kept')?.value).toBe('read');
  expect(t.entries.get('replaced')?.value).toBe('changed');
  expect(t.entries.has('dropped')).toBe(false);
});

it('after a failed read, queues the entry again at its next use', async () => {
  const t = setup();
  t.entries.set('a', { value: 'old' });
  t.refresh.stale('a', t.entries.get('a')!);
  await tick();
  t.fail();
  await tick(0);
  expect(t.entries.get('a')?.refreshing).toBe(false);
  t.refresh.stale('a', t.entries.get('a')!);
  await tick();
  expect(t.reads).toEqual([['a'], ['a']]);
});
