// A Bedrock channel's key, in new-api's format: `AccessKeyId|SecretAccessKey|region`, optionally followed by
// `|SessionToken` for temporary (STS) credentials.

export interface BedrockCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
  sessionToken?: string;
}

/**
 * Thrown for a key that is not `AK|SK|region[|sessionToken]`; the message never repeats the secret. `region` is set
 * when the parts are all there but the third is no AWS region (the channel form names it).
 */
export class BedrockKeyError extends Error {
  constructor(
    message: string,
    readonly region?: string,
  ) {
    super(message);
  }
}

// AWS regions look like `us-east-1`, `ap-southeast-2`, `us-gov-west-1`: checking the shape keeps a typo (or a
// secret pasted in the wrong field) out of the hostname the request is sent to.
const REGION = /^[a-z]{2}(-[a-z]+)+-\d{1,2}$/;

export function parseBedrockKey(key: string): BedrockCredentials {
  const parts = key.trim().split('|');
  if (parts.length < 3 || parts.length > 4) {
    throw new BedrockKeyError(
      `AWS key must be "AccessKeyId|SecretAccessKey|region" or "AccessKeyId|SecretAccessKey|region|SessionToken" (got ${parts.length} part${parts.length === 1 ? '' : 's'})`,
    );
  }
  const [accessKeyId, secretAccessKey, region, sessionToken] = parts.map((p) => p.trim());
  if (!accessKeyId) throw new BedrockKeyError('AWS key: the access key id (first part) is empty');
  if (!secretAccessKey) throw new BedrockKeyError('AWS key: the secret access key (second part) is empty');
  if (!region) throw new BedrockKeyError('AWS key: the region (third part) is empty');
  if (!REGION.test(region))
    throw new BedrockKeyError(`AWS key: "${region}" is not an AWS region (like us-east-1)`, region);
  if (parts.length === 4 && !sessionToken)
    throw new BedrockKeyError('AWS key: the session token (fourth part) is empty');
  const creds: BedrockCredentials = { accessKeyId, secretAccessKey, region };
  if (sessionToken) creds.sessionToken = sessionToken;
  return creds;
}
