// Channel facts of Kling (type 50): the key is `AccessKey|SecretKey` (signed into a JWT per call), or one plain key when
// the upstream is another new-api (its /kling routes); never sent as a bearer token to list models, so the list is fixed.
import { plainFacts, type ChannelFacts } from '../channel-facts-contract.js';

export const KLING_MODELS = ['kling-v1', 'kling-v1-6', 'kling-v2-master', 'kling-v2-1-master', 'kling-v2-5-turbo'];

export const klingChannelFacts = (): ChannelFacts =>
  plainFacts({ keyHint: 'AccessKey|SecretKey', baseUrlRequired: false, models: { fixed: KLING_MODELS } });
