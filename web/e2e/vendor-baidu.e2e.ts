// Issue 43's console journey for a signed vendor: root adds a Baidu ERNIE v1 channel (type 15) with its composite key
// `API Key|Secret Key`, sees Baidu's key hint, reads the model list Baidu's channel offers, saves, tests the row and
// sees the success with its response time, then finds the Baidu models on the saved channel. Behind it is the
// server's strict Baidu mock: it issues a token only for POST /oauth/2.0/token with grant_type=client_credentials and
// the right client_id / client_secret, and answers a chat only with one of its tokens in `?access_token=`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MockBaidu } from '../../server/test/helpers/mock-baidu.js';
import {
  BASE_URL,
  consoleCall,
  consoleGet,
  ensureRootSetup,
  launchBrowser,
  loginAsRoot,
  shot,
  toast,
  type Browser,
} from './browser.js';
import { chooseType, createdChannelId, openNewChannelDrawer, testChannelRow } from './channel-drawer.js';

const AK = 'e2eBaiduApiKey7Qm';
const SK = 'e2eBaiduSecretKey4Zx';
const NAME = 'baidu-e2e';
/** the type's label; Qianfan v2's label starts the same way */
const BAIDU = /^百度文心千帆$/;
/** some of the models Baidu's v1 channel offers (its API lists none: the console shows the built-in list) */
const BAIDU_MODELS = ['ERNIE-4.0-8K', 'ERNIE-3.5-8K', 'ERNIE-Speed-128K', 'Embedding-V1'];

let baidu: MockBaidu;
let b: Browser;
/** the channel the journey saved, deleted at the end (the file name sorts it after pricing.e2e.ts, which lists every
 * channel's models from the gateway's cache) */
let savedId = 0;

beforeAll(async () => {
  baidu = await MockBaidu.start(AK, SK);
  await ensureRootSetup();
  b = await launchBrowser();
  await loginAsRoot(b.page);
});

afterAll(async () => {
  if (savedId && b) await consoleCall(b.page, 'DELETE', `/api/channel/${savedId}`);
  await b?.close();
  await baidu?.close();
});

describe('a Baidu ERNIE channel from the console', () => {
  let id = 0;

  it('adds the channel with its AK|SK key, after reading its hint and model list', async () => {
    const { page } = b;
    const form = await openNewChannelDrawer(page);
    await chooseType(page, BAIDU);
    const key = form.locator('textarea[name=key]');
    // Baidu's hint, not OpenAI's sk-
    expect(await key.getAttribute('placeholder')).toContain('API Key|Secret Key');
    expect(await key.getAttribute('placeholder')).not.toContain('sk-');

    await form.locator('input[name=name]').fill(NAME);
    await form.locator('input[name=base_url]').fill(baidu.url);
    await key.fill(`${AK}|${SK}`);
    // the model list: cleared, then asked for as a person does with "fetch"
    await form.getByRole('button', { name: '清除所有模型' }).click();
    await expect.poll(() => form.locator('[data-testid=channel-models] .ant-select-selection-item').count()).toBe(0);
    await form.getByRole('button', { name: '获取模型列表' }).click();
    await toast(page, '获取模型列表成功');
    for (const model of BAIDU_MODELS)
      await form
        .locator('[data-testid=channel-models] .ant-select-selection-item', { hasText: model })
        .first()
        .waitFor();
    // listing asked nothing of Baidu (v1 has no model list), nor exchanged the key
    expect(baidu.exchanges).toBe(0);
    await shot(page, 'baidu-01-form');

    await page.getByTestId('channel-submit').click();
    id = await createdChannelId(page, NAME);
    savedId = id;
    const list = await consoleGet<{ data: { id: number; type: number; base_url: string; models: string }[] }>(
      page,
      '/api/channel/?p=0&page_size=50',
    );
    const saved = list.data.find((c) => c.id === id);
    expect(saved).toMatchObject({ type: 15, base_url: baidu.url });
    expect(saved!.models.split(',')).toEqual(expect.arrayContaining(BAIDU_MODELS));
  });

  it('tests the channel: one token exchange, the chat with its access token, the response time shown', async () => {
    const { page } = b;
    await testChannelRow(page, id, NAME);

    const exchange = baidu.server.requests.filter((r) => r.path.startsWith('/oauth/2.0/token'));
    expect(exchange).toHaveLength(1);
    expect(exchange[0]!.method).toBe('POST');
    const q = new URL(exchange[0]!.path, 'http://mock').searchParams;
    expect(Object.fromEntries(q)).toEqual({ grant_type: 'client_credentials', client_id: AK, client_secret: SK });
    expect(baidu.calls).toHaveLength(1);
    const chat = new URL(baidu.calls[0]!.path, 'http://mock');
    expect(chat.pathname).toMatch(/^\/rpc\/2\.0\/ai_custom\/v1\/wenxinworkshop\/chat\//);
    expect(chat.searchParams.get('access_token')).toMatch(/^24\./);

    // the list, reloaded, shows the measured response time on the row
    await page.getByRole('button', { name: /刷\s*新/ }).click();
    await page
      .locator('tr', { has: page.getByTestId(`channel-name-${id}`) })
      .getByText(/[\d.]+ 秒/)
      .waitFor();
    await shot(page, 'baidu-02-tested');
  });

  it("shows the Baidu models on the saved channel's edit drawer", async () => {
    const { page } = b;
    await page.goto(`${BASE_URL}/channel/edit/${id}`);
    const form = page.getByTestId('channel-form');
    await form.waitFor();
    // the type select shows Baidu's label (antd 6 renders the chosen value in .ant-select-content)
    await page.getByTestId('channel-type').getByText(BAIDU).first().waitFor();
    for (const model of BAIDU_MODELS)
      await form
        .locator('[data-testid=channel-models] .ant-select-selection-item', { hasText: model })
        .first()
        .waitFor();
    await shot(page, 'baidu-03-edit');
    expect(b.pageErrors).toEqual([]);
  });
});
