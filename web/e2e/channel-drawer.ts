// The channel page's add drawer as a person drives it, shared by the journeys that create vendor channels
// (vendor-channels.e2e.ts, vendor-baidu.e2e.ts): open it, pick a type by its label, keep one model, save, and test a
// row, each waiting for what the console shows.
import type { Page } from 'playwright-core';
import { BASE_URL, toast } from './browser.js';

const OPEN_DROPDOWN = '.ant-select-dropdown:not(.ant-select-dropdown-hidden)';

export async function openNewChannelDrawer(page: Page) {
  await page.goto(`${BASE_URL}/channel`);
  await page.getByTestId('channel-page').waitFor();
  await page.getByTestId('channel-add').click();
  await page.waitForURL(/\/channel\/add$/);
  const form = page.getByTestId('channel-form');
  await form.waitFor();
  return form;
}

/** Types `search` into the type select and answers the labels it offers. */
export async function searchTypes(page: Page, search: string): Promise<string[]> {
  await page.getByTestId('channel-type').click();
  await page.keyboard.press('ControlOrMeta+A');
  await page.keyboard.type(search);
  const dropdown = page.locator(OPEN_DROPDOWN);
  await dropdown.waitFor();
  // the list filters as one types: give it a moment, then read what it shows (an empty list shows "no data")
  await page.waitForTimeout(300);
  return dropdown.locator('.ant-select-item-option').allTextContents();
}

/** Picks the type labelled `label` (a RegExp where one label is the start of another, as Baidu's and its V2). */
export async function chooseType(page: Page, label: string | RegExp): Promise<void> {
  await searchTypes(page, typeof label === 'string' ? label : label.source.replace(/^\^|\$$/g, ''));
  await page.locator(`${OPEN_DROPDOWN} .ant-select-item-option`, { hasText: label }).click();
  await page
    .locator('[data-testid=channel-form] .ant-select-selection-item, [data-testid=channel-form] .ant-select-content', {
      hasText: label,
    })
    .first()
    .waitFor();
}

/** Keeps only `model` in the drawer's model list (picking a type fills in its built-in models). */
export async function setOnlyModel(page: Page, model: string): Promise<void> {
  const form = page.getByTestId('channel-form');
  await form.getByRole('button', { name: '清除所有模型' }).click();
  await form.locator('input[name=custom_model]').fill(model);
  await page.getByTestId('channel-add-model').click();
  await form.locator('.ant-select-selection-item', { hasText: model }).first().waitFor();
}

/** After the drawer's submit: waits for the toast and the list, and answers the new row's channel id. */
export async function createdChannelId(page: Page, name: string): Promise<number> {
  await toast(page, '渠道创建成功！');
  await page.waitForURL(/\/channel$/);
  const cell = page.locator('[data-testid^=channel-name-]', { hasText: name });
  await cell.waitFor();
  return Number((await cell.getAttribute('data-testid'))!.replace('channel-name-', ''));
}

/** Clicks the row's test button and waits for the success toast with the response time. */
export async function testChannelRow(page: Page, id: number, name: string): Promise<void> {
  const row = page.locator('tr', { has: page.getByTestId(`channel-name-${id}`) });
  await row.getByRole('button', { name: /测\s*试/ }).click();
  await toast(page, new RegExp(`渠道 ${name} 测试成功，耗时 [\\d.]+ 秒。`), 20_000);
}
