// Channel facts of Doubao video (type 54): one Ark API key, sent as a bearer token; the video models are fixed.
import { plainFacts, type ChannelFacts } from '../channel-facts-contract.js';

export const DOUBAO_VIDEO_MODELS = [
  'doubao-seedance-1-0-pro-250528',
  'doubao-seedance-1-0-lite-t2v',
  'doubao-seedance-1-0-lite-i2v',
  'doubao-seedance-1-5-pro-251215',
  'doubao-seedance-2-0-260128',
  'doubao-seedance-2-0-fast-260128',
];

export const doubaoVideoChannelFacts = (): ChannelFacts =>
  plainFacts({ keyHint: 'API Key', baseUrlRequired: false, models: { fixed: DOUBAO_VIDEO_MODELS } });
