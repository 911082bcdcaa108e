// Channel facts of Jimeng (type 51): the key is `AccessKeyID|SecretAccessKey` (it signs each call, never sent), or one
// plain key when the upstream is another new-api (its /jimeng/ route); never a bearer to list models, so the list is
// fixed: new-api's model, and Jimeng 3.0's keys its req_key conversion knows.
import { plainFacts, type ChannelFacts } from '../channel-facts-contract.js';

export const JIMENG_MODELS = ['jimeng_vgfm_t2v_l20', 'jimeng_v30', 'jimeng_v30_1080p', 'jimeng_v30_pro'];

export const jimengChannelFacts = (): ChannelFacts =>
  plainFacts({ keyHint: 'AccessKeyID|SecretAccessKey', baseUrlRequired: false, models: { fixed: JIMENG_MODELS } });
