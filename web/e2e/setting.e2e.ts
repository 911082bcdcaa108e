// Settings page walk-through as root: system name shown in the top bar after saving, a model ratio edited in the
// visual editor and read back from GET /api/option/, password login turned off (with the confirmation, cancel
// first) and on again. Runs after console.e2e.ts (which creates root / 12345678).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { BASE_URL, launchBrowser, loginAsRoot, shot, type Browser } from './browser.js';

let b: Browser;

beforeAll(async () => {
  b = await launchBrowser();
  await loginAsRoot(b.page);
});

afterAll(async () => {
  await b?.close();
});

/** GET /api/option/ from inside the logged-in page, as a key → value map. */
async function options(page: Page): Promise<Record<string, string>> {
  return page.evaluate(async () => {
    const user = JSON.parse(localStorage.getItem('user') ?? '{}') as { id?: number };
    const res = await fetch('/api/option/', { headers: { 'New-Api-User': String(user.id ?? -1) } });
    const body = (await res.json()) as { success: boolean; data: Array<{ key: string; value: string }> };
    return Object.fromEntries(body.data.map((o) => [o.key, o.value]));
  });
}

async function waitForOption(
  page: Page,
  key: string,
  want: (v: string | undefined) => boolean,
): Promise<string | undefined> {
  const deadline = Date.now() + 10_000;
  let v: string | undefined;
  while (Date.now() < deadline) {
    v = (await options(page))[key];
    if (want(v)) return v;
    await page.waitForTimeout(200);
  }
  throw new Error(`option ${key} is ${v}`);
}

describe('settings page', () => {
  it('saves the system name and the top bar shows it', async () => {
    const { page } = b;
    await page.goto(`${BASE_URL}/setting?tab=other`);
    await page.getByTestId('section-branding').waitFor();
    expect(await page.getByRole('tab', { selected: true }).textContent()).toBe('其他设置');
    // Saving without a change says so.
    await page.getByTestId('save-branding').click();
    await page.getByText('你似乎并没有修改什么').waitFor();
    await page.locator('input#SystemName').fill('E2E 网关');
    await page.getByTestId('save-branding').click();
    await page.getByText('保存成功').first().waitFor();
    await page.locator('header').getByText('E2E 网关').waitFor();
    expect(await waitForOption(page, 'SystemName', (v) => v === 'E2E 网关')).toBe('E2E 网关');
    await shot(page, 'setting-01-other');
  });

  it('refuses invalid JSON before sending anything', async () => {
    const { page } = b;
    await page.goto(`${BASE_URL}/setting`);
    await page.getByTestId('section-group').waitFor();
    await shot(page, 'setting-00-operation');
    const before = (await options(page)).UserUsableGroups;
    await page.locator('textarea#UserUsableGroups').fill('{"default": ');
    await page.getByTestId('save-group').click();
    await page.getByText('请检查输入').waitFor();
    await page.getByTestId('section-group').getByText('不是合法的 JSON 字符串').waitFor();
    expect((await options(page)).UserUsableGroups).toBe(before);
  });

  it('edits a model ratio in the visual editor and the option holds it', async () => {
    const { page } = b;
    await page.goto(`${BASE_URL}/setting`);
    await page.getByRole('tab', { name: '可视化倍率设置' }).click();
    const table = page.getByTestId('ratio-table-visual');
    await table.getByTestId('ratio-search').fill('text-embedding-3-small');
    const ratio = table.getByTestId('cell-ratio-text-embedding-3-small');
    await ratio.fill('0.02');
    // A fixed price disables the ratio inputs; clearing it enables them again.
    await table.getByTestId('cell-price-text-embedding-3-small').fill('0.5');
    expect(await ratio.isDisabled()).toBe(true);
    expect(await ratio.inputValue()).toBe('');
    await table.getByTestId('cell-price-text-embedding-3-small').fill('');
    await ratio.fill('0.02');
    // Batch set without a selection is refused.
    await table.getByTestId('ratio-batch').click();
    await page.getByText('请先选择需要批量设置的模型').waitFor();
    // Adding a model whose name exists is refused.
    await table.getByTestId('ratio-add').click();
    await page.getByTestId('dialog-name').fill('gpt-4o');
    await page.getByTestId('dialog-ratio').fill('1');
    await page.locator('.ant-modal-footer .ant-btn-primary').click();
    await page.getByText('模型名称已存在').waitFor();
    await page.locator('.ant-modal-footer .ant-btn:not(.ant-btn-primary)').click();
    await page.locator('.ant-modal-wrap').waitFor({ state: 'hidden' });
    await shot(page, 'setting-02-visual-ratio');
    await table.getByTestId('ratio-save').click();
    await page.getByText('保存成功').first().waitFor();
    const saved = await waitForOption(
      page,
      'ModelRatio',
      (v) => !!v && JSON.parse(v)['text-embedding-3-small'] === 0.02,
    );
    const map = JSON.parse(saved!) as Record<string, number>;
    expect(map['text-embedding-3-small']).toBe(0.02);
    // Other models kept their ratios.
    expect(map['gpt-4o-mini']).toBe(0.075);
    expect(JSON.parse((await options(page)).ModelPrice!)['text-embedding-3-small']).toBeUndefined();
  });

  it('turns password login off only after the confirmation, and on again', async () => {
    const { page } = b;
    await page.goto(`${BASE_URL}/setting?tab=system`);
    const toggle = page.getByTestId('toggle-PasswordLoginEnabled');
    await toggle.waitFor();
    expect(await toggle.getAttribute('aria-checked')).toBe('true');

    await toggle.click();
    const confirm = page.locator('.ant-modal-confirm');
    await confirm.locator('.ant-modal-confirm-title', { hasText: '确定要取消密码登录功能吗？' }).waitFor();
    await page.waitForTimeout(400);
    await shot(page, 'setting-03-password-confirm');
    await confirm.locator('.ant-modal-confirm-btns .ant-btn:not(.ant-btn-primary)').click();
    await confirm.waitFor({ state: 'hidden' });
    expect(await toggle.getAttribute('aria-checked')).toBe('true');
    expect((await options(page)).PasswordLoginEnabled).toBe('true');

    await toggle.click();
    await confirm.locator('.ant-modal-confirm-btns .ant-btn-primary').click();
    await waitForOption(page, 'PasswordLoginEnabled', (v) => v === 'false');
    await page.waitForFunction(
      () =>
        document.querySelector('[data-testid="toggle-PasswordLoginEnabled"]')?.getAttribute('aria-checked') === 'false',
    );

    // Turning it back on needs no confirmation.
    await toggle.click();
    await waitForOption(page, 'PasswordLoginEnabled', (v) => v === 'true');
    await page.waitForFunction(
      () =>
        document.querySelector('[data-testid="toggle-PasswordLoginEnabled"]')?.getAttribute('aria-checked') === 'true',
    );
    await shot(page, 'setting-04-system');

    // Dark theme of the same tab.
    await page.getByTestId('theme-switch').click();
    await page.waitForTimeout(300);
    await shot(page, 'setting-05-system-dark');
    await page.goto(`${BASE_URL}/setting?tab=models`);
    await page.getByTestId('section-claude').waitFor();
    await shot(page, 'setting-06-models-dark');
    await page.getByTestId('theme-switch').click();
    expect(b.pageErrors).toEqual([]);
  });
});
