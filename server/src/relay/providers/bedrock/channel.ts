// Channel facts of Bedrock: each key line is `AccessKeyId|SecretAccessKey|region[|SessionToken]`, checked by the
// parser the relay signs with, so a key the relay could not use is refused on save.
import { plainFacts, type ChannelFacts, type FieldProblem } from '../channel-facts-contract.js';
import { BedrockKeyError, parseBedrockKey } from './credentials.js';
import { BEDROCK_MODELS } from './models.js';

function keyProblem(key: string): FieldProblem | null {
  try {
    parseBedrockKey(key);
    return null;
  } catch (err) {
    if (!(err instanceof BedrockKeyError)) throw err;
    const message =
      err.region === undefined
        ? '密钥格式应为 AccessKeyId|SecretAccessKey|region，临时凭证再加 |SessionToken！'
        : `密钥中的区域 ${err.region} 无效，例如：us-east-1！`;
    return { field: 'key', message };
  }
}

export const bedrockChannelFacts = (): ChannelFacts =>
  plainFacts({
    // a fourth part carries an STS session token for temporary credentials
    keyHint: 'AccessKeyId|SecretAccessKey|region[|SessionToken]',
    check: (values) => (values.key ? keyProblem(values.key) : null),
    // the key is an AWS secret that only signs requests and is never sent: the Claude models the relay maps to Bedrock
    // ids (ListFoundationModels would list every vendor's models, most of them not Claude's)
    models: { fixed: BEDROCK_MODELS },
  });
