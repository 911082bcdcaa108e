import { describe, expect, it } from 'vitest';
import i18n from '../../i18n/index.js';
import {
  applyBatch,
  applyDialog,
  buildRows,
  editRow,
  isAddMode,
  mapChanges,
  mergeRowsIntoMaps,
  modeOf,
  parseMaps,
  pricesToRatios,
  rowProblems,
  rowsToMaps,
  switchMode,
  unsetModelRows,
  type DialogInput,
  type ModelRow,
} from './ratioLogic.js';
import { NS } from './i18n.js';

const options = {
  ModelPrice: '{"dall-e-3":0.04}',
  ModelRatio: '{"gpt-4o":1.25,"gpt-4o-mini":0.075}',
  CompletionRatio: '{"gpt-4o":4}',
};
const rows = buildRows(parseMaps(options));
const zh = (key: string) => i18n.getFixedT('zh', NS)(key);

const dialog = (patch: Partial<DialogInput>): DialogInput => ({
  original: '',
  name: '',
  mode: 'per-token',
  tokenInput: 'ratio',
  price: '',
  ratio: '',
  completionRatio: '',
  inputPrice: '',
  outputPrice: '',
  ...patch,
});

describe('rows from the option maps', () => {
  it('has one row per model with price, ratio and completion ratio', () => {
    expect(rows).toEqual([
      { name: 'dall-e-3', price: '0.04', ratio: '', completionRatio: '' },
      { name: 'gpt-4o', price: '', ratio: '1.25', completionRatio: '4' },
      { name: 'gpt-4o-mini', price: '', ratio: '0.075', completionRatio: '' },
    ]);
  });
  it('lists enabled models that have neither a price nor a ratio', () => {
    expect(
      unsetModelRows(['gpt-4o', 'my-model', 'dall-e-3', 'my-model', 'a-model'], parseMaps(options)).map((r) => r.name),
    ).toEqual(['a-model', 'my-model']);
  });
});

describe('pricing mode', () => {
  it('a fixed price makes the row per-request', () => {
    expect(modeOf(rows[0]!)).toBe('per-request');
    expect(modeOf(rows[1]!)).toBe('per-token');
  });
  it('choosing per-request clears the ratios, per-token clears the price', () => {
    expect(switchMode(rows[1]!, 'per-request')).toEqual({ name: 'gpt-4o', price: '', ratio: '', completionRatio: '' });
    expect(switchMode(rows[0]!, 'per-token')).toEqual({ name: 'dall-e-3', price: '', ratio: '', completionRatio: '' });
  });
  it('typing a price in the table clears the ratios; non-numbers are refused (请输入数字)', () => {
    expect(editRow(rows[1]!, 'price', '0.1').row).toEqual({
      name: 'gpt-4o',
      price: '0.1',
      ratio: '',
      completionRatio: '',
    });
    expect(editRow(rows[1]!, 'ratio', '2.').row.ratio).toBe('2.');
    const bad = editRow(rows[1]!, 'ratio', '2a');
    expect(bad.error).toBe('notNumber');
    expect(bad.row).toBe(rows[1]);
    expect(zh('ratio.err.notNumber')).toBe('请输入数字');
  });
});

describe('add / edit dialog', () => {
  it('is in add mode when the name is new', () => {
    expect(isAddMode(rows, 'gpt-4o')).toBe(false);
    expect(isAddMode(rows, 'new-model')).toBe(true);
  });
  it('rejects a duplicate name (模型名称已存在)', () => {
    expect(applyDialog(rows, dialog({ name: 'gpt-4o', ratio: '1' })).error).toBe('duplicate');
    expect(applyDialog(rows, dialog({ original: 'gpt-4o-mini', name: 'gpt-4o', ratio: '1' })).error).toBe('duplicate');
    expect(zh('ratio.err.duplicate')).toBe('模型名称已存在');
  });
  it('rejects a zero or non-numeric fixed price', () => {
    expect(applyDialog(rows, dialog({ name: 'x', mode: 'per-request', price: '0' })).error).toBe('priceZero');
    expect(applyDialog(rows, dialog({ name: 'x', mode: 'per-request', price: 'abc' })).error).toBe('notNumber');
    expect(applyDialog(rows, dialog({ name: 'x', ratio: '1', completionRatio: 'x' })).error).toBe('notNumber');
  });
  it('adds a per-request model without ratios, and edits a row in place', () => {
    const added = applyDialog(rows, dialog({ name: ' mj_imagine ', mode: 'per-request', price: '0.1', ratio: '3' }));
    expect(added.error).toBeUndefined();
    expect(added.rows[0]).toEqual({ name: 'mj_imagine', price: '0.1', ratio: '', completionRatio: '' });
    const edited = applyDialog(
      rows,
      dialog({ original: 'gpt-4o', name: 'gpt-4o', ratio: '2.5', completionRatio: '4' }),
    );
    expect(edited.rows).toHaveLength(3);
    expect(edited.rows[1]).toEqual({ name: 'gpt-4o', price: '', ratio: '2.5', completionRatio: '4' });
  });
  it('converts USD per 1M tokens to ratios', () => {
    expect(pricesToRatios(2.5, 10)).toEqual({ ratio: '1.25', completionRatio: '4' });
    const r = applyDialog(rows, dialog({ name: 'm', tokenInput: 'price', inputPrice: '0.15', outputPrice: '0.6' }));
    expect(r.rows[0]).toEqual({ name: 'm', price: '', ratio: '0.075', completionRatio: '4' });
  });
});

describe('batch set', () => {
  it('needs a selection, a value, both ratios in both mode, and numbers', () => {
    expect(applyBatch(rows, [], 'ratio', '1').error).toBe('noSelection');
    expect(applyBatch(rows, ['gpt-4o'], 'ratio', ' ').error).toBe('noValue');
    expect(applyBatch(rows, ['gpt-4o'], 'both', '1', '').error).toBe('needBoth');
    expect(applyBatch(rows, ['gpt-4o'], 'both', '', '2').error).toBe('needBoth');
    expect(applyBatch(rows, ['gpt-4o'], 'price', 'x').error).toBe('notNumber');
    expect(applyBatch(rows, ['gpt-4o'], 'both', '1', 'y').error).toBe('notNumber');
    expect(['noSelection', 'noValue', 'needBoth', 'notNumber'].map((e) => zh(`batch.err.${e}`))).toEqual([
      '请先选择需要批量设置的模型',
      '请输入填充值',
      '请输入模型倍率和补全倍率',
      '请输入有效的数字',
    ]);
  });
  it('a price clears the ratios and a ratio clears the price, only on the selected rows', () => {
    const priced = applyBatch(rows, ['gpt-4o', 'gpt-4o-mini'], 'price', '0.02').rows;
    expect(priced.slice(1)).toEqual([
      { name: 'gpt-4o', price: '0.02', ratio: '', completionRatio: '' },
      { name: 'gpt-4o-mini', price: '0.02', ratio: '', completionRatio: '' },
    ]);
    expect(priced[0]).toBe(rows[0]);
    const both = applyBatch(rows, ['dall-e-3'], 'both', '3', '2').rows;
    expect(both[0]).toEqual({ name: 'dall-e-3', price: '', ratio: '3', completionRatio: '2' });
  });
});

describe('saving the editor', () => {
  it('refuses non-numbers and a zero price', () => {
    const bad: ModelRow[] = [
      { name: 'a', price: '0', ratio: '', completionRatio: '' },
      { name: 'b', price: '', ratio: '1.', completionRatio: '' },
      { name: 'c', price: '', ratio: '.', completionRatio: '' },
    ];
    expect(rowProblems(bad)).toEqual([
      { name: 'a', error: 'priceZero' },
      { name: 'c', error: 'notNumber' },
    ]);
    // A zero price already stored (the default mj_inpaint) is not the editor's doing.
    expect(rowProblems(bad, [{ name: 'a', price: '0', ratio: '', completionRatio: '' }])).toEqual([
      { name: 'c', error: 'notNumber' },
    ]);
    expect(applyBatch(rows, ['gpt-4o'], 'price', '0').error).toBe('priceZero');
  });
  it('writes only the maps that changed', () => {
    const edited = editRow(rows[2]!, 'ratio', '0.1').row;
    const after = rowsToMaps([rows[0]!, rows[1]!, edited]);
    const changes = mapChanges(parseMaps(options), after);
    expect(changes.map((c) => c.key)).toEqual(['ModelRatio']);
    expect(JSON.parse(changes[0]!.value)).toEqual({ 'gpt-4o': 1.25, 'gpt-4o-mini': 0.1 });
    expect(mapChanges(parseMaps(options), rowsToMaps(rows))).toEqual([]);
  });
  it('the unset-model editor adds what was filled in to the stored maps', () => {
    const merged = mergeRowsIntoMaps(parseMaps(options), [
      { name: 'my-model', price: '', ratio: '2', completionRatio: '' },
      { name: 'other', price: '', ratio: '', completionRatio: '' },
    ]);
    expect(merged.ModelRatio).toEqual({ 'gpt-4o': 1.25, 'gpt-4o-mini': 0.075, 'my-model': 2 });
    expect(merged.ModelPrice).toEqual({ 'dall-e-3': 0.04 });
  });
});
