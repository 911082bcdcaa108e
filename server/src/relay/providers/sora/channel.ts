// Channel facts of Sora (type 55): OpenAI's video API with a plain key as a Bearer token, api.openai.com by default.
import { plainFacts, type ChannelFacts } from '../channel-facts-contract.js';

export const soraChannelFacts = (): ChannelFacts =>
  plainFacts({ baseUrlRequired: false, models: { fixed: ['sora-2', 'sora-2-pro'] } });
