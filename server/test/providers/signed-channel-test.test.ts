// The console's channel test (relay/channel-probe.ts) on each signed vendor: the probe is signed or carries the
// exchanged token as the relay's requests do, reaches the vendor's mock (Spark over its websocket), and reads the
// vendor's own answer as the relay reads it; a vendor's refusal inside HTTP 200 is a failed test with its message.
import { describe, expect, it } from 'vitest';
import { relayServices } from '../../src/relay/services.js';
import { testChannel } from '../../src/relay/channel-probe.js';
import type { TestServer } from '../helpers/server.js';
import { MockBaidu } from '../helpers/mock-baidu.js';
import { MockZhipuV3 } from '../helpers/mock-zhipu-v3.js';
import { MockHunyuan } from '../helpers/mock-hunyuan.js';
import { MockSpark } from '../helpers/mock-spark.js';
import { vendorSuite, type VendorMock, type VendorSuite } from './vendor-gateway.js';

const ZHIPU_KEY = '5c1f2e9a7b3d4e6f8a0b1c2d3e4f5a6b.Kx7mQ2pLr9TzW4vN';

const probe = (s: TestServer, model?: string) => {
  const svc = relayServices(s.ctx);
  return testChannel(s.ctx, svc, svc.channels.all()[0], model);
};

/**
 * One signed vendor's channel on its mock: the probe passes, and the mock saw one signed or exchanged credential;
 * `more` adds the vendor's own cases.
 */
function signedVendor<M extends VendorMock>(
  title: string,
  spec: { mock: () => Promise<M>; type: number; key: string; models: string[]; credentials: (mock: M) => number },
  more?: (suite: VendorSuite<M>) => void,
) {
  describe(title, () => {
    const suite = vendorSuite({
      kind: 'sqlite',
      mock: spec.mock,
      channel: { type: spec.type, key: spec.key, models: spec.models.slice(0, 1) },
      models: spec.models,
    });

    it('passes, its answer read as the relay reads it', async () => {
      expect(await probe(suite.s)).toMatchObject({ ok: true });
      expect(spec.credentials(suite.mock)).toBe(1);
    });
    more?.(suite);
  });
}

describe('the channel test on the signed vendors', () => {
  signedVendor('Baidu ERNIE v1', {
    mock: () => MockBaidu.start('ak-test-0001', 'sk-test-0001'),
    type: 15,
    key: 'ak-test-0001|sk-test-0001',
    models: ['ERNIE-3.5-8K'],
    credentials: (m) => m.exchanges,
  });
  signedVendor('Zhipu v3', {
    mock: () => MockZhipuV3.start(ZHIPU_KEY),
    type: 16,
    key: ZHIPU_KEY,
    models: ['chatglm_turbo'],
    credentials: (m) => m.tokens.length,
  });
  signedVendor('iFlytek Spark', {
    mock: () => MockSpark.start('app0001', 'apikey0001', 'apisecret0001'),
    type: 18,
    key: 'app0001|apisecret0001|apikey0001',
    models: ['SparkDesk-v3.5'],
    credentials: (m) => m.connections.length,
  });

  signedVendor(
    'Tencent Hunyuan',
    {
      mock: () => MockHunyuan.start('AKIDtest0001', 'secret0001'),
      type: 23,
      key: 'app|AKIDtest0001|secret0001',
      models: ['hunyuan-lite', 'hunyuan-unknown'],
      credentials: (m) => m.accepted,
    },
    (suite) =>
      it('fails with the vendor’s message when it refuses inside HTTP 200', async () => {
        const r = await probe(suite.s, 'hunyuan-unknown');
        expect(r).toMatchObject({ ok: false, message: expect.stringContaining('模型 hunyuan-unknown 不存在') });
      }),
  );
});
