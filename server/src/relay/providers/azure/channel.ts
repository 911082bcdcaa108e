// Channel facts of Azure OpenAI: the base URL is the resource's endpoint (there is no default) and `other` the API
// version (the gateway's default when empty).
import { plainFacts, type ChannelFacts } from '../channel-facts-contract.js';

export const azureChannelFacts = (): ChannelFacts =>
  plainFacts({ baseUrlRequired: true, other: { kind: 'api_version', hint: '2025-04-01-preview' } });
