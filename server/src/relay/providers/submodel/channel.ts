// Channel facts of Submodel: a plain API key; its models are listed as OpenAI's ({base}/v1/models).
import { plainFacts, type ChannelFacts } from '../channel-facts-contract.js';

export const submodelChannelFacts = (): ChannelFacts => plainFacts();
