// Every settings field has a one-line help in both languages (issue 46 point 11): its `extra` note or `help.<key>`.
import { describe, expect, it } from 'vitest';
import * as fields from './fields.js';
import type { FieldDef } from './logic.js';
import { helpKey } from './help.js';
import { pairs } from './i18n.js';

const defs = Object.values(fields).filter(Array.isArray).flat() as (FieldDef | string)[];

describe('settings help', () => {
  it('every field, login switch and the domain whitelist has a help line in Chinese and English', () => {
    const missing: string[] = [];
    const keys = [
      ...defs.map((d) => (typeof d === 'string' ? helpKey(d) : (d.extra ?? helpKey(d.key)))),
      helpKey('EmailDomainWhitelist'),
    ];
    for (const key of keys) {
      const pair = pairs[key];
      if (!pair || !pair[0]?.trim() || !pair[1]?.trim()) missing.push(key);
    }
    expect(defs.length).toBeGreaterThan(80);
    expect(missing).toEqual([]);
  });

  it('the help named in the issue: retry times, top-up link, the drawing switches', () => {
    for (const key of ['RetryTimes', 'TopUpLink', 'DrawingEnabled', 'MjNotifyEnabled', 'MjForwardUrlEnabled']) {
      expect(pairs[helpKey(key)]?.[1], key).toMatch(/\w+ \w+/);
    }
  });
});
