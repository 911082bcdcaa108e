// Channel facts of MokaAI: a plain API key; the m3e models (Moka lists none).
import { plainFacts, type ChannelFacts } from '../channel-facts-contract.js';

export const mokaChannelFacts = (): ChannelFacts =>
  plainFacts({ models: { fixed: ['m3e-small', 'm3e-base', 'm3e-large'] } });
