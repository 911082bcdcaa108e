// The drawer's multi-key rules: the body of each add mode, the key count and hint per mode (Vertex AI's JSON array),
// the edit fields of a multi-key channel.
import { describe, expect, it } from 'vitest';
import { addKeyHint, createBody, keyCount, multiKeyEdit } from './multi-key.js';

describe('multi-key form rules', () => {
  const payload = { name: 'n', type: 1, key: 'a\nb' };

  it('sends a batch as the bare channel and the other modes wrapped with their mode', () => {
    expect(createBody(payload, 'batch', 'polling')).toBe(payload);
    expect(createBody(payload, 'single', 'polling')).toEqual({ mode: 'single', channel: payload });
    expect(createBody(payload, 'multi_to_single', 'polling')).toEqual({
      mode: 'multi_to_single',
      multi_key_mode: 'polling',
      channel: payload,
    });
  });

  it('counts keys by lines, or Vertex AI documents in a JSON array', () => {
    expect(keyCount('a\n\nb\n', 1, 'multi_to_single')).toBe(2);
    expect(keyCount('a\nb', 1, 'single')).toBe(1);
    expect(keyCount('[{"a":1},{"b":2},{"c":3}]', 41, 'batch')).toBe(3);
    expect(keyCount('{"a":1}', 41, 'multi_to_single')).toBe(1);
    expect(keyCount('[{"a":', 41, 'batch')).toBe(0);
    expect(addKeyHint('a\nb\nc', 1, 'multi_to_single')).toEqual(['mk.multiHint', { count: 3 }]);
    expect(addKeyHint('a\nb', 1, 'batch')).toEqual(['form.keyBatchHint', { count: 2 }]);
    expect(addKeyHint('a', 1, 'single')).toEqual(['mk.singleHint', { count: 1 }]);
  });

  it('an edit sends the key choice, and the key mode only with keys', () => {
    expect(multiKeyEdit({ id: 3, name: 'n' }, 'random', 'append')).toEqual({
      id: 3,
      name: 'n',
      multi_key_mode: 'random',
    });
    expect(multiKeyEdit({ id: 3, key: 'k' }, 'polling', 'replace')).toEqual({
      id: 3,
      key: 'k',
      multi_key_mode: 'polling',
      key_mode: 'replace',
    });
  });
});
