// The pure parts of multi-key channels (services/multi-key.ts, multi-key-store.ts): new-api's JSON both ways, the key
// list, the polling step and re-indexing after a deletion.
import { describe, expect, it } from 'vitest';
import { SINGLE_KEY_CHANNEL_INFO } from '../../src/db/migrate.js';
import {
  SINGLE_KEY_INFO_JSON,
  keyPreview,
  parseChannelInfo,
  reindex,
  serializeChannelInfo,
  splitStoredKeys,
} from '../../src/services/multi-key.js';
import { nextEnabledFrom } from '../../src/services/multi-key-store.js';

describe('multi-key channel_info', () => {
  it('the migration fills old rows with the single-key value the service writes', () => {
    expect(SINGLE_KEY_CHANNEL_INFO).toBe(SINGLE_KEY_INFO_JSON);
  });

  it('reads NULL, text, parsed objects and junk; writes new-api’s field order without empty maps', () => {
    expect(parseChannelInfo(null).is_multi_key).toBe(false);
    expect(parseChannelInfo('not json').is_multi_key).toBe(false);
    expect(parseChannelInfo('[1]').is_multi_key).toBe(false);
    const parsed = parseChannelInfo({
      is_multi_key: true,
      multi_key_size: '2',
      multi_key_status_list: { '1': 3, x: 2 },
      multi_key_polling_index: 1,
      multi_key_mode: 'polling',
    });
    expect(parsed).toEqual({
      is_multi_key: true,
      multi_key_size: 2,
      multi_key_status_list: { '1': 3 },
      multi_key_polling_index: 1,
      multi_key_mode: 'polling',
    });
    expect(
      serializeChannelInfo({ ...parsed, multi_key_disabled_reason: {}, multi_key_disabled_time: { '1': 5 } }),
    ).toBe(
      '{"is_multi_key":true,"multi_key_size":2,"multi_key_status_list":{"1":3},"multi_key_disabled_time":{"1":5},' +
        '"multi_key_polling_index":1,"multi_key_mode":"polling"}',
    );
  });

  it('splits keys as new-api does: a JSON array, else lines', () => {
    expect(splitStoredKeys('a\nb\n')).toEqual(['a', 'b']);
    expect(splitStoredKeys('[{"a":1},"b"]')).toEqual(['{"a":1}', 'b']);
    expect(splitStoredKeys('')).toEqual([]);
  });

  it('polls from the stored index to the next enabled key, wrapping, -1 when none', () => {
    const on = (set: number[]) => (i: number) => set.includes(i);
    expect(nextEnabledFrom(2, 4, on([0, 1, 2, 3]))).toBe(2);
    expect(nextEnabledFrom(2, 4, on([0, 3]))).toBe(3);
    expect(nextEnabledFrom(3, 4, on([1]))).toBe(1);
    expect(nextEnabledFrom(9, 4, on([2]))).toBe(2);
    expect(nextEnabledFrom(0, 4, on([]))).toBe(-1);
  });

  it('re-indexes statuses, reasons and times with the keys that stay', () => {
    const info = parseChannelInfo({
      is_multi_key: true,
      multi_key_size: 4,
      multi_key_status_list: { '1': 3, '3': 2 },
      multi_key_disabled_reason: { '1': 'gone', '3': '' },
      multi_key_disabled_time: { '1': 10, '3': 30 },
      multi_key_polling_index: 3,
      multi_key_mode: 'polling',
    });
    expect(reindex(info, [0, 2, 3])).toMatchObject({
      multi_key_size: 3,
      multi_key_status_list: { '2': 2 },
      multi_key_disabled_reason: { '2': '' },
      multi_key_disabled_time: { '2': 30 },
      multi_key_polling_index: 0,
    });
  });

  it('never shows a key whole', () => {
    expect(keyPreview('sk-abcdefghijklmnopqrstuvwxyz')).toBe('sk-abc…wxyz');
    expect(keyPreview('short-key')).toBe('sho…');
    expect(keyPreview('ab')).toBe('…');
  });
});
