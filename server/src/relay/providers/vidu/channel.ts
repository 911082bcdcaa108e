// Channel facts of Vidu (type 52): one API key, sent as `Authorization: Token <key>`; no model list to ask for.
import { plainFacts, type ChannelFacts } from '../channel-facts-contract.js';

export const VIDU_MODELS = ['viduq2', 'viduq1', 'vidu2.0', 'vidu1.5'];

export const viduChannelFacts = (): ChannelFacts =>
  plainFacts({ keyHint: 'API Key', baseUrlRequired: false, models: { fixed: VIDU_MODELS } });
